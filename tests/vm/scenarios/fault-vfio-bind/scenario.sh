# A bind of VF 0 to vfio-pci (driver_override, then its BDF written to
# /sys/bus/pci/drivers/vfio-pci/bind) with its Nth fault-injection point
# failing, for N = 1, 2, ... until the bind makes fewer than N (tb-fail-nth;
# failslab/ignore-gfp-wait N so GFP_KERNEL allocations count).  The failure
# lands anywhere in vfio-pci's probe: the vfio_device, its IOMMU binding,
# the VFIO group (its allocation, name, chardev and device_add()), the
# vfio-dev device.
#
# After every attempt:
#  - no kernel report in the log other than the injection's own stack dump
#    (no Oops, BUG, WARNING, KASAN, list or refcount corruption);
#  - a failed bind left the VF without a driver and without /dev/vfio/G
#    (G: the VF's IOMMU group);
#  - a successful one left the VF on vfio-pci with /dev/vfio/G, and is
#    unbound again.
# At the end the VF binds without injection, is unbound, and both VFs are
# disabled: their IOMMU groups must then be gone from
# /sys/kernel/iommu_groups (a reference a failed bind leaked keeps one).
#
# Without the fix for a group whose registration failed
# (kernel/patches/8-vfio-group/0001) the first injection that makes the
# group's cdev_device_add() fail gives WARNING in vfio_group_release().
D=/sys/bus/pci/devices
DRV=/sys/bus/pci/drivers/vfio-pci
FI=/sys/kernel/debug/failslab
MAXN=$(tb_arg maxn || echo 5000)

vf_unbound() {  # VF $1 has no driver and no VFIO group chardev $2
	[ ! -e "$D/$1/driver" ] || { echo "bound to $(tb_driver_of "$1")"; return 1; }
	[ ! -e "$2" ] || { echo "$2 exists"; return 1; }
	[ ! -e "/sys/class/vfio/$(basename "$2")" ] || { echo "/sys/class/vfio/$(basename "$2") exists"; return 1; }
}

stage1() {
	local pfs pf v vf2 g g2 dev nth out werr inj bad=0 ninj=0 nfail=0 nok=0 ngroup=0
	pfs=$(tb_pfs)
	pf=$(echo $pfs | cut -d' ' -f1)
	tb_check "one SR-IOV PF" test "$(echo $pfs | wc -w)" -eq 1
	tb_check "failslab in debugfs ($FI)" test -d $FI
	tb_check "fail-nth (/proc/thread-self/fail-nth)" test -e /proc/thread-self/fail-nth
	tb_set_autoprobe 0
	tb_check "2 VFs enabled" tb_enable_vfs $pf 2
	v=$(tb_vfs $pf | head -n 1)
	vf2=$(tb_vfs $pf | sed -n 2p)
	g=$(basename "$(readlink $D/$v/iommu_group)")
	dev=/dev/vfio/$g
	tb_check "VF $v in IOMMU group $g, unbound" vf_unbound "$v" "$dev"
	echo vfio-pci >$D/$v/driver_override
	echo N >$FI/ignore-gfp-wait
	echo 2 >$FI/verbose
	dmesg -c >/dev/null
	rm -f /tmp/kmsg.inj /tmp/kmsg.allowed
	echo "sweep: $v bound to vfio-pci with fault N failing, N = 1.. (at most $MAXN)" | tb_info
	nth=1
	while [ $nth -le "$MAXN" ]; do
		tb_log "attempt $nth"
		if ! tb_fail_attempt $nth $DRV/bind "$v"; then
			bad=1
			break
		fi
		out=$(cat /tmp/fail.out)
		werr=${out% *} inj=${out#* }
		[ "$inj" = 1 ] && ninj=$((ninj + 1))
		if [ "$werr" = 0 ]; then
			nok=$((nok + 1))
			if [ "$(tb_driver_of "$v")" != vfio-pci ] || [ ! -c "$dev" ]; then
				tb_check "attempt $nth: the bind succeeded, $v on vfio-pci with $dev" false
				bad=1; break
			fi
			echo "$v" >$DRV/unbind ||
				{ tb_check "attempt $nth: unbinding $v" false; bad=1; break; }
		else
			nfail=$((nfail + 1))
		fi
		if ! vf_unbound "$v" "$dev" >/tmp/unbound.out; then
			tb_check "attempt $nth (bind errno $werr, injected $inj): $v unbound afterwards: $(cat /tmp/unbound.out)" false
			bad=1; break
		fi
		[ "$inj" = 1 ] || break
		[ $((nth % 100)) -eq 0 ] && echo "attempt $nth: $nfail binds failed, $nok succeeded so far" | tb_info
		nth=$((nth + 1))
	done
	if [ $bad = 1 ]; then
		tb_finish
		return
	fi
	tb_check "the sweep ended (attempt $nth made fewer than $nth injectable calls; at most $MAXN)" test "$inj" = 0
	tb_say "CHECK ok every failed bind left $v unbound and the kernel log without a report ($nfail failed, $nok succeeded)"
	[ -f /tmp/kmsg.inj ] || : >/tmp/kmsg.inj
	# each line is one injection's stack (innermost first, one token a frame)
	ngroup=$(grep -c ' cdev_device_add+.* vfio_' /tmp/kmsg.inj || true)
	tb_figure injections "$ninj" count
	tb_figure binds-failed "$nfail" count
	tb_figure injections-in-group-cdev-device-add "$ngroup" count
	tb_check "the sweep reached the VFIO group's cdev_device_add() ($ngroup injections)" test "$ngroup" -gt 0
	echo 0 >$FI/verbose
	tb_check "after the sweep: $v bound to vfio-pci" tb_bind_vfio "$v"
	tb_check "after the sweep: $dev is a character device" test -c "$dev"
	echo "$v" >$DRV/unbind
	g2=$(basename "$(readlink $D/$vf2/iommu_group)")
	echo 0 >$D/$pf/sriov_numvfs
	tb_check "after the VFs are disabled: IOMMU group $g gone from /sys/kernel/iommu_groups" \
		test ! -e /sys/kernel/iommu_groups/$g
	tb_check "after the VFs are disabled: IOMMU group $g2 gone from /sys/kernel/iommu_groups" \
		test ! -e /sys/kernel/iommu_groups/$g2
	tb_kmsg_split
	tb_check "after the sweep: no kernel report" sh -c "! grep -Eq '$TB_KMSG_REPORT' /tmp/kmsg.rest"
	tb_finish
}
