# The IOMMU group of every PCI device is the one its topology gives
# (drivers/iommu/iommu.c, pci_device_group()), with the VFs of all four
# PFs added at once and again PF after PF:
#  - q35's chipset functions 00:1f.0, 00:1f.2, 00:1f.3 share one group
#    and nothing else is in it: functions of one slot without ACS (the
#    search over the slot's other functions);
#  - the igb card's two PFs (functions 0 and 1 of one slot, below a root
#    port) are each alone in their group: the kernel's ACS quirk for the
#    82576 that QEMU's igb emulates isolates its functions;
#  - each VF (igb and nvme) and each nvme PF is alone in its group: a
#    VF's search over the devices of its bus finds no alias;
#  - the two devices behind the PCIe-to-PCI bridge are in the bridge's
#    group (DMA aliased to the bridge's requester ID);
#  - every PCI device has a group;
#  - 00:1f.0 removed and rescanned while two nvme PFs add their VFs: it
#    is back in the group of 00:1f.2 and 00:1f.3 (its search must find a
#    function other than 0), every VF alone;
#  - no kernel report (WARNING, BUG, lockdep, ...) since boot.
# Fails on a kernel whose slot search misses function 0 (00:1f.0 alone at
# boot) or looks only at function 0 (00:1f.0 alone after its rescan), or
# that puts a VF or an igb PF into another device's group.  Linux 7.3
# passes: the expectations are its groups.
D=/sys/bus/pci/devices

group_of() { basename "$(readlink "$D/$1/iommu_group" 2>/dev/null)" 2>/dev/null; }
members() { ls "/sys/kernel/iommu_groups/$1/devices" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//'; }

# check_alone WHAT BDF...: each BDF's group has it as its one member
check_alone() {
	local what=$1 b bad=
	shift
	for b in "$@"; do
		[ "$(members "$(group_of "$b")")" = "$b" ] || bad="$bad $b:[$(members "$(group_of "$b")")]"
	done
	tb_check "$what: $# devices each alone in its group${bad:+ (not:$bad)}" test -z "$bad"
}
# check_together WHAT BDF...: the BDFs' group has exactly these members
check_together() {
	local what=$1 want
	shift
	want=$(echo "$@" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')
	tb_check_value "$what: the group of $1" "$want" "$(members "$(group_of "$1")")"
}
bridge_of() { basename "$(dirname "$(readlink -f "$D/$1")")"; }  # the BDF upstream of $1

check_groups() {  # check_groups WHEN
	local when=$1 b none= vfs= pf
	for b in $(ls $D); do [ -n "$(group_of "$b")" ] || none="$none $b"; done
	tb_check "$when: every PCI device has an IOMMU group${none:+ (not:$none)}" test -z "$none"
	check_together "$when: q35 chipset functions" 0000:00:1f.0 0000:00:1f.2 0000:00:1f.3
	check_alone "$when: igb card PFs (ACS quirk)" $IGBS
	for pf in $IGBS $NVMES; do vfs="$vfs $(tb_vfs "$pf")"; done
	check_alone "$when: VFs of all four PFs" $vfs
	check_alone "$when: nvme PFs" $NVMES
	check_together "$when: PCIe-to-PCI bridge and the devices behind it" "$(bridge_of "$T1")" $TDEVS
}

stage1() {
	local pf n p g pids vfs
	IGBS=$(tb_pfs_of_kind igb | tr '\n' ' ')
	NVMES=$(tb_pfs_of_kind nvme | tr '\n' ' ')
	TDEVS=$(for b in $(ls $D); do [ "$(cat $D/$b/vendor):$(cat $D/$b/device)" = 0x1b36:0x0005 ] && echo $b; done | tr '\n' ' ')
	T1=$(echo $TDEVS | cut -d' ' -f1)
	tb_check "2 igb PFs, 2 nvme PFs, 2 pci-testdevs ($IGBS; $NVMES; $TDEVS)" \
		test "$(echo $IGBS | wc -w) $(echo $NVMES | wc -w) $(echo $TDEVS | wc -w)" = "2 2 2"
	tb_check "the chipset functions 00:1f.0, 00:1f.2, 00:1f.3 exist" \
		test -e $D/0000:00:1f.0 -a -e $D/0000:00:1f.2 -a -e $D/0000:00:1f.3
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	tb_set_autoprobe 0

	# all four PFs at once
	pids=
	for pf in $IGBS $NVMES; do
		n=$(cat $D/$pf/sriov_totalvfs)
		echo "$n" >$D/$pf/sriov_numvfs &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || tb_check "a concurrent sriov_numvfs write (pid $p)" false; done
	for pf in $IGBS $NVMES; do
		tb_check "concurrent: $pf has all its VFs" test "$(tb_count_vfs "$pf")" -eq "$(cat $D/$pf/sriov_totalvfs)"
	done
	check_groups concurrent
	for g in $(ls /sys/kernel/iommu_groups | sort -n); do echo "group $g: $(members "$g")"; done | tb_info
	for pf in $IGBS $NVMES; do echo 0 >$D/$pf/sriov_numvfs; done

	# PF after PF
	for pf in $IGBS $NVMES; do
		echo "$(cat $D/$pf/sriov_totalvfs)" >$D/$pf/sriov_numvfs || tb_check "serial: $pf's sriov_numvfs write" false
		tb_check "serial: $pf has all its VFs" test "$(tb_count_vfs "$pf")" -eq "$(cat $D/$pf/sriov_totalvfs)"
	done
	check_groups serial
	for pf in $IGBS $NVMES; do echo 0 >$D/$pf/sriov_numvfs; done

	# 00:1f.0 removed, then found again by a rescan while the nvme PFs add
	# their VFs: its group search runs while others run and must find
	# 00:1f.2's group (a function other than 0)
	echo 1 >$D/0000:00:1f.0/remove
	tb_check "00:1f.0 removed" test ! -e $D/0000:00:1f.0
	pids=
	for pf in $NVMES; do
		echo "$(cat $D/$pf/sriov_totalvfs)" >$D/$pf/sriov_numvfs &
		pids="$pids $!"
	done
	echo 1 >/sys/bus/pci/rescan
	for p in $pids; do wait "$p" || tb_check "rescan: a concurrent sriov_numvfs write (pid $p)" false; done
	tb_check "rescan: 00:1f.0 is back" test -e $D/0000:00:1f.0
	check_together "rescan: q35 chipset functions" 0000:00:1f.0 0000:00:1f.2 0000:00:1f.3
	vfs=
	for pf in $NVMES; do
		tb_check "rescan: $pf has all its VFs" test "$(tb_count_vfs "$pf")" -eq "$(cat $D/$pf/sriov_totalvfs)"
		vfs="$vfs $(tb_vfs "$pf")"
	done
	check_alone "rescan: VFs of the nvme PFs" $vfs
	for pf in $NVMES; do echo 0 >$D/$pf/sriov_numvfs; done

	dmesg >/tmp/kmsg.all
	tb_check "no kernel report" sh -c "! grep -Eq '$TB_KMSG_REPORT' /tmp/kmsg.all"
	grep -E "$TB_KMSG_REPORT" /tmp/kmsg.all | head -n 40 | tb_info
	tb_finish
}
