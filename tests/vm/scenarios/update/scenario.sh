# luod end to end: record, preserve, kexec, restore in parallel, report.
# The first kernel configures SR-IOV as an operator would and saves the
# inventory (tb-inventory flat) into a cpio archive appended to the initrd;
# then `luoctl update`.  The second kernel starts luod, which must bring
# everything back by itself; the inventory must then equal the saved one
# except for what must change (IOMMU group numbers).
# Variables set by variants: UPDATE_BACKEND (luo|initrd|file), UPDATE_BREAK_PF,
# UPDATE_BREAK_HOW (unbind: the PF's driver is gone; remove: the PF is gone;
# vfio: the PF is driven by vfio-pci, which refuses the sriov_numvfs write),
# UPDATE_COLD (the new kernel does not start luod; a cold boot follows).

: "${UPDATE_BACKEND:=luo}"
LUOD_ARGS=--max-delay=3
[ "$UPDATE_BACKEND" = file ] && LUOD_ARGS="$LUOD_ARGS --backends=file"
# Inhibitors in the main scenario only: hv2 pauses for 2 s after
# PrepareForUpdate, hv3 never lets go (the 3 s maximum applies).
INHIBITORS=
[ "$UPDATE_BACKEND" = luo ] && [ -z "${UPDATE_BREAK_PF:-}" ] && INHIBITORS=1
IGB_VFS=7

pf_of_kind() { for pf in $(tb_pfs); do [ "$(tb_pf_kind "$pf")" = "$1" ] && echo "$pf"; done; }
vf_driver() { basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)" 2>/dev/null; }
# The inventory without what a kexec may change.
inventory() { tb-inventory flat | grep -v '\.iommu_group=' | sort; }

stage1() {
	nvmes=$(pf_of_kind nvme) igb=$(pf_of_kind igb)
	tb_check "two nvme PFs ($(echo $nvmes)) and one igb PF ($igb)" \
		test "$(echo $nvmes | wc -w)" -eq 2 -a -n "$igb"
	tb_check "luod starts on the system bus" tb_start_luod $LUOD_ARGS
	tb_check "luoctl status says idle" sh -c 'luoctl status | grep -q "state:   idle"'

	for pf in $nvmes $igb; do
		n=$(cat "/sys/bus/pci/devices/$pf/sriov_totalvfs")
		tb_check "$pf: $n VFs enabled" tb_enable_vfs "$pf" "$n"
	done
	for pf in $nvmes; do      # some VFs of each nvme PF on vfio-pci
		for vf in $(tb_vfs "$pf" | sed -n '1p;3p;4p'); do
			tb_check "$vf bound to vfio-pci" tb_bind_vfio "$vf"
		done
	done
	dev=$(ls "/sys/bus/pci/devices/$igb/net" | head -n 1)
	tb_check "igb VF 1: MAC, VLAN 77, trust on" "$IP" link set "$dev" vf 1 mac 02:aa:bb:cc:dd:01 vlan 77 trust on
	tb_check "igb VF 4: MAC, VLAN 4000 qos 3" "$IP" link set "$dev" vf 4 mac 02:aa:bb:cc:dd:04 vlan 4000 qos 3
	tb_check "igb VF 6: trust on, spoofchk off" "$IP" link set "$dev" vf 6 trust on spoofchk off
	luoctl vfs 2>&1 | tb_info
	# A hypervisor assigns VFs of both nvme PFs to two guests (by PF identity
	# and VF index); the assignments must come back after the kexec.
	n0=$(echo $nvmes | cut -d' ' -f1) n1=$(echo $nvmes | cut -d' ' -f2)
	id0=$(tb-inventory flat | sed -n "s/^pf\.$n0\.identity=//p")
	id1=$(tb-inventory flat | sed -n "s/^pf\.$n1\.identity=//p")
	tb_check "a consumer assigns VF 0 and 2 of $n0 to vm-a, VF 1 of $n1 to vm-b" \
		tb-hypervisor hv1 assign vm-a "$id0" 0 assign vm-a "$id0" 2 assign vm-b "$id1" 1
	mkdir -p /tmp/carry/luod-tb
	tb-hypervisor hv1 list | grep '^assignment' | sort >/tmp/carry/luod-tb/assignments-before
	tb_check "... and a VF held by vm-a is refused to vm-b (EBUSY, naming vm-a)" \
		sh -c "tb-hypervisor hv2 assign vm-b '$id0' 2 2>&1 | grep -q 'held by guest vm-a of consumer hv1'"

	# The inventory before, for the second kernel.
	mkdir -p /tmp/carry/luod-tb
	inventory >/tmp/carry/luod-tb/inventory-before
	tb_check "inventory taken ($(wc -l </tmp/carry/luod-tb/inventory-before) fields)" \
		test -s /tmp/carry/luod-tb/inventory-before
	cp /luod-tb/initrd.gz /tmp/initrd2
	size=$(stat -c %s /tmp/initrd2)
	pad=$(( (4 - size % 4) % 4 ))
	[ "$pad" -gt 0 ] && head -c "$pad" /dev/zero >>/tmp/initrd2
	(cd /tmp/carry && find . -mindepth 1 | cpio --quiet -o -H newc) >>/tmp/initrd2

	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --dry-run >/tmp/plan 2>&1
	tb_check "luoctl update --dry-run plans the $UPDATE_BACKEND backend" grep -q "\"backend\": \"$UPDATE_BACKEND\"" /tmp/plan
	tb_check "dry run changed nothing (state idle)" sh -c 'luoctl status | grep -q "state:   idle"'
	tb_check "preflight: the new kernel has the PF and VF drivers" \
		grep -q '"drivers": "present in .*lib.*modules' /tmp/plan
	mount --bind /luod-tb/modules-no-igb /lib/modules
	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --dry-run >/tmp/plan-no-igb 2>&1
	umount /lib/modules
	tb_check "preflight: a new kernel without igb is refused, naming the PF" \
		grep -q "lacks drivers: PF $igb (igb): no driver in .* matches pci:v00008086" /tmp/plan-no-igb
	tb_check "a missing kernel image is refused, naming it" \
		sh -c 'luoctl update --kernel /nonexistent --yes 2>&1 | grep -q "/nonexistent"'
	tb_check "a file kexec cannot load is refused, nothing changes" \
		sh -c 'luoctl update --kernel /luod-tb/hardware --yes 2>&1 | grep -q "kexec_file_load refused /luod-tb/hardware"'
	tb_check "... luod says failed, no kernel loaded" \
		sh -c 'luoctl status | grep -q "state:   failed" && grep -qx 0 /sys/kernel/kexec_loaded'
	inventory >/tmp/inventory-now
	tb_check "... and the VFs are untouched" cmp /tmp/inventory-now /tmp/carry/luod-tb/inventory-before

	if [ "$TB_FAILED" -ne 0 ]; then
		tb_show_luod_log
		tb_finish
		return
	fi
	if [ -n "$INHIBITORS" ]; then
		id0=$(tb-inventory flat | sed -n "s/^pf\.$(echo $nvmes | cut -d' ' -f1)\.identity=//p")
		TB_HOSTMARK=1 tb-hypervisor hv2 assign vm-c "$id0" 5 inhibit delay "pausing vm-c" 2 >/tmp/hv2.out 2>&1 &
		tb-hypervisor hv3 inhibit delay "stuck" 600 >/tmp/hv3.out 2>&1 &
		tb-hypervisor hv4 inhibit block "migrating vm-d" 600 >/tmp/hv4.out 2>&1 &
		hv4=$!
		n=0
		until grep -q held /tmp/hv2.out 2>/dev/null && grep -q held /tmp/hv3.out 2>/dev/null &&
			grep -q held /tmp/hv4.out 2>/dev/null; do
			n=$((n + 1)); [ $n -gt 300 ] && break; sleep 0.1
		done
		tb_check "a block inhibitor refuses the update with its holder's reason, nothing changes" \
			sh -c 'luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --yes 2>&1 |
				grep -q "Update blocked by consumer hv4: migrating vm-d" && grep -qx 0 /sys/kernel/kexec_loaded'
		kill "$hv4"
		sleep 0.5
	fi
	tb_say "HOSTMARK luoctl-update"
	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 \
		--append "luod_tb.stage=2" --yes >/tmp/update.out 2>&1
	cat /tmp/update.out >/dev/console
	tb_show_luod_log
	tb_abort "luoctl update returned without a kexec"
}

stage2() {
	tb_say "HOSTMARK stage2-init"
	nvmes=$(pf_of_kind nvme) igb=$(pf_of_kind igb)
	tb_check "booted with luod.update_id" grep -q 'luod.update_id=' /proc/cmdline
	if [ -n "${UPDATE_COLD:-}" ]; then
		# luod never runs in this kernel: the state stays on the disk.
		tb_check "state file on the disk after the kexec" test -s /var/lib/luod/state.luod-state
		cp /var/lib/luod/state.luod-state /var/lib/luod/state.copy
		tb_powercycle 3
	fi
	broken=
	if [ -n "${UPDATE_BREAK_PF:-}" ]; then
		broken=$(echo $nvmes | cut -d' ' -f2)
		if [ "${UPDATE_BREAK_HOW:-unbind}" = remove ]; then
			echo 1 >"/sys/bus/pci/devices/$broken/remove"
			nvmes=$(echo $nvmes | cut -d' ' -f1)
			broken_why="not found by its identity: No such device"
		elif [ "${UPDATE_BREAK_HOW:-unbind}" = vfio ]; then
			echo vfio-pci >"/sys/bus/pci/devices/$broken/driver_override"
			echo "$broken" >/sys/bus/pci/drivers/nvme/unbind
			echo "$broken" >/sys/bus/pci/drivers_probe
			tb_check "$broken now driven by vfio-pci" \
				test "$(basename "$(readlink "/sys/bus/pci/devices/$broken/driver")")" = vfio-pci
			broken_why="writing sriov_numvfs 8 (driven by vfio-pci now, by nvme when recorded): No such file or directory"
		else
			echo "$broken" >/sys/bus/pci/drivers/nvme/unbind
			broken_why="waiting for its driver.*Connection timed out"
		fi
		tb_log "broke $broken (${UPDATE_BREAK_HOW:-unbind}) before luod starts"
	fi
	tb_check "luod starts" tb_start_luod --driver-wait=3
	tb_show_luod_log
	tb_say "HOSTMARK luod-ready"
	luoctl status 2>&1 | tb_info
	luoctl report >/tmp/report.txt 2>&1
	tb_info </tmp/report.txt
	luoctl report --json >/tmp/report.json 2>&1
	inventory >/tmp/inventory-after

	if [ -n "$broken" ]; then
		tb_check "luod state is failed" sh -c 'luoctl status | grep -q "state:   failed"'
		tb_check "report: $broken failed, naming the PF and the errno" \
			grep -q "PF $broken .*$broken_why" /tmp/report.json
		tb-hypervisor hv1 restored >/tmp/restored.out 2>&1
		tb_check "GuestRestored to hv1: vm-b failed naming $broken, vm-a ok" \
			sh -c "grep -q '^restored hv1 vm-b failed PF $broken' /tmp/restored.out && grep -q '^restored hv1 vm-a ok' /tmp/restored.out"
		tb_check "report: guest vm-b (its VF on $broken) failed, naming the PF; vm-a ok" \
			sh -c "grep -Eq 'hv1/vm-b +1 +failed .*PF $broken' /tmp/report.txt && grep -Eq 'hv1/vm-a +2 +ok' /tmp/report.txt"
		tb_check "report: the two other PFs ok" test "$(sed '/"guests"/,$d' /tmp/report.json | grep -c '"result": "ok"')" -eq 2
		for pf in $nvmes $igb; do
			[ "$pf" = "$broken" ] && continue
			grep "^pf\.$pf\." /luod-tb/inventory-before >/tmp/want.$pf
			grep "^pf\.$pf\." /tmp/inventory-after >/tmp/have.$pf
			tb_check "$pf restored exactly ($(wc -l </tmp/want.$pf) fields)" cmp /tmp/want.$pf /tmp/have.$pf
		done
		tb_check "the preserved state is kept (state file)" test -s /var/lib/luod/state.luod-state
		[ "${UPDATE_BREAK_HOW:-}" = vfio ] &&
			tb_check "$broken: no VFs, as the kernel refused" grep -qx 0 "/sys/bus/pci/devices/$broken/sriov_numvfs"
		tb_finish
		return
	fi

	tb_check "luod state is restored" sh -c 'luoctl status | grep -q "state:   restored"'
	tb-hypervisor hv1 list | grep '^assignment hv1 ' | sort >/tmp/assignments-after
	tb_check "the 3 VF assignments came back across the kexec" \
		sh -c 'test "$(wc -l </luod-tb/assignments-before)" -eq 3 && cmp /luod-tb/assignments-before /tmp/assignments-after'
	tb_check "... and are saved in /var/lib/luod/assignments.json" grep -q '"guest": *"vm-b"' /var/lib/luod/assignments.json
	# The hypervisor learns its guests' VFs are back and says when each runs:
	# luod gives each guest's downtime from the blackout start (TSC).
	tb-hypervisor hv1 restored guests running vm-a guests >/tmp/guests.out 2>&1
	tb_info </tmp/guests.out
	tb_check "GuestRestored signals to hv1 on registering: vm-a ok, vm-b ok" \
		sh -c 'grep -q "^restored hv1 vm-a ok" /tmp/guests.out && grep -q "^restored hv1 vm-b ok" /tmp/guests.out'
	tb_check "GetGuests: vm-a and vm-b of hv1 restored ok" \
		sh -c 'grep -q "^guest hv1 vm-a ok" /tmp/guests.out && grep -q "^guest hv1 vm-b ok" /tmp/guests.out'
	tb_check "GuestRunning vm-a: a downtime, then GetGuests says running" \
		sh -c 'grep -Eq "^running vm-a [1-9][0-9]*\.[0-9]" /tmp/guests.out && grep -q "^guest hv1 vm-a running [1-9]" /tmp/guests.out'
	tb_check "GuestRunning for a guest hv1 never had is refused" \
		sh -c 'tb-hypervisor hv1 running vm-z 2>&1 | grep -q "Consumer hv1 has no guest vm-z"'
	tb_check "report.json: vm-a's downtime, vm-b not running yet" \
		sh -c 'luoctl report --json | tr -d " \n" | grep -q "\"guest\":\"vm-a\",\"vfs\":2,\"result\":\"running\",\"error\":null,\"downtime_ms\":[1-9]"'
	ms=$(sed -n 's/^running vm-a //p' /tmp/guests.out)
	[ -n "$ms" ] && tb_figure guest-vm-a-downtime "$ms" ms
	tb_check "report: backend $UPDATE_BACKEND" grep -q "\"backend\": \"$UPDATE_BACKEND\"" /tmp/report.json
	tb_check "inventory after == before ($(wc -l </luod-tb/inventory-before) fields, IOMMU groups aside)" \
		sh -c 'diff /luod-tb/inventory-before /tmp/inventory-after >/tmp/inv.diff'
	sed 's/^/    /' /tmp/inv.diff | head -n 20 >/dev/console
	for pf in $nvmes; do
		for vf in $(tb_vfs "$pf" | sed -n '1p;3p;4p'); do
			tb_check "$vf on vfio-pci with $(tb_vfio_dev "$vf")" \
				sh -c "[ \"\$(basename \$(readlink /sys/bus/pci/devices/$vf/driver))\" = vfio-pci ] && test -c $(tb_vfio_dev "$vf")"
		done
	done
	dev=$(ls "/sys/bus/pci/devices/$igb/net" | head -n 1)
	"$IP" link show "$dev" >/tmp/iplink 2>&1
	tb_check "ip link: igb VF 1 MAC, VLAN 77, trust on" \
		grep -Eq "vf 1 .*link/ether 02:aa:bb:cc:dd:01.*vlan 77,.*trust on" /tmp/iplink
	tb_check "ip link: igb VF 4 VLAN 4000 qos 3" grep -Eq "vf 4 .*vlan 4000, qos 3" /tmp/iplink
	if [ -n "$INHIBITORS" ]; then
		tr -d ' \n' </tmp/report.json >/tmp/report.flat
		tb_check "report: hv2 held its delay inhibitor >= 2 s and let go" \
			grep -Eq '"consumer":"hv2","held_ms":[2-9][0-9]{3}\.[0-9],"timed_out":false' /tmp/report.flat
		tb_check "report: hv3 never let go, the 3 s maximum applied" \
			grep -Eq '"consumer":"hv3","held_ms":3[0-9]{3}\.[0-9],"timed_out":true' /tmp/report.flat
		# vm-c's downtime: from hv2's release to its GuestRunning, by luod
		# (TSC) and by the host (the two console marks).
		TB_HOSTMARK=1 tb-hypervisor hv2 running vm-c >/tmp/hv2-running.out 2>&1
		ms=$(sed -n 's/^running vm-c //p' /tmp/hv2-running.out)
		tb_check "GuestRunning vm-c (hv2): downtime from hv2's release ($ms ms)" test -n "$ms"
		[ -n "$ms" ] && tb_figure guest-vm-c-downtime-luod "$ms" ms
	fi
	tb_check "report: all 3 PFs ok" test "$(sed '/"guests"/,$d' /tmp/report.json | grep -c '"result": "ok"')" -eq 3
	tb_check "report: total-blackout phase measured" grep -q '"total-blackout"' /tmp/report.json
	tb_check "report: the new kernel's PCI enumeration measured (kernel log)" \
		grep -q '"kernel-pci-enumeration"' /tmp/report.json
	tb_check "report written to /var/lib/luod/report.json" test -s /var/lib/luod/report.json
	tb_check "preserved state dropped after a full restore" test ! -e /var/lib/luod/state.luod-state
	for phase in persist-and-kexec kernel-boot-to-luod-start kernel-pci-enumeration restore total-blackout; do
		ms=$(awk -v p="\"$phase\"" '$0 ~ p { getline; gsub(/[^0-9.]/, ""); print; exit }' /tmp/report.json)
		[ -n "$ms" ] && tb_figure "$phase" "$ms" ms
	done
	tb_finish
}

# UPDATE_COLD: a plain boot with the state of an update that was never
# restored on the disk.  luod must apply nothing, say why, keep the state.
stage3() {
	tb_check "a cold boot: no luod.update_id" sh -c '! grep -q luod.update_id= /proc/cmdline'
	tb_check "the state file survived the power cycle" cmp /var/lib/luod/state.copy /var/lib/luod/state.luod-state
	tb_check "luod starts" tb_start_luod $LUOD_ARGS
	tb_show_luod_log
	tb_check "luod logs why it refuses the state" \
		grep -q "Refusing the preserved state .*no luod.update_id" /tmp/luod.log
	luoctl status >/tmp/status 2>&1
	tb_info </tmp/status
	tb_check "luoctl status says failed, naming the cold boot" grep -q "no luod.update_id" /tmp/status
	for pf in $(tb_pfs); do
		tb_check "$pf: nothing applied (sriov_numvfs 0)" grep -qx 0 "/sys/bus/pci/devices/$pf/sriov_numvfs"
	done
	tb_check "the state is kept, byte for byte" cmp /var/lib/luod/state.copy /var/lib/luod/state.luod-state
	tb_check "luoctl discard drops it" sh -c 'luoctl discard && test ! -e /var/lib/luod/state.luod-state'
	tb_finish
}
