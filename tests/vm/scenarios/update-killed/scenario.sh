# luod dies in the middle of its restore (SIGKILL ~0.2 s after the first VF
# appears) and is started again, as systemd's Restart=on-failure would.
# The LUO session went with the killed process: the second luod must find
# the durable copy the first wrote to /var/lib/luod, resume (attempt 2) and
# restore everything exactly.

IGB_MAC=02:aa:bb:cc:dd:01 IGB_VLAN=77

stage1() {
	nvmes=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	tb_check "two nvme PFs ($(echo $nvmes)) and one igb PF ($igb)" \
		test "$(echo $nvmes | wc -w)" -eq 2 -a -n "$igb"
	tb_check "luod starts on the system bus" tb_start_luod
	tb_enable_all_vfs $nvmes $igb
	tb_bind_vfio_some $nvmes
	tb_check "igb VF 1: MAC $IGB_MAC, VLAN $IGB_VLAN" \
		"$IP" link set "$(tb_pf_netdev "$igb")" vf 1 mac $IGB_MAC vlan $IGB_VLAN
	tb_save_inventory
	tb_carry_initrd
	check_killed_while_loaded
	tb_update_kexec 2
}

# luod killed (SIGKILL) while its update is loaded and waits for a delay
# inhibitor: the kernel stays loaded with luod.update_id= on its command
# line.  The luod started again in this boot must unload it and say why, so
# that no later kexec boots it; then a new update goes on as usual.
check_killed_while_loaded() {
	local hv upd n
	tb-hypervisor hvK inhibit delay "pausing" 600 >/tmp/hvK.out 2>&1 &
	hv=$!
	n=0
	until grep -q held /tmp/hvK.out 2>/dev/null; do n=$((n + 1)); [ $n -gt 300 ] && break; sleep 0.1; done
	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --append "luod_tb.stage=99" --yes \
		>/tmp/killed-update.out 2>&1 &
	upd=$!
	n=0
	until grep -q "^prepare " /tmp/hvK.out 2>/dev/null; do n=$((n + 1)); [ $n -gt 300 ] && break; sleep 0.1; done
	tb_check "an update waits for its delay inhibitor with the kernel loaded" grep -qx 1 /sys/kernel/kexec_loaded
	kill -KILL "$TB_LUOD_PID"
	wait "$TB_LUOD_PID"
	kill "$hv"
	wait "$upd"
	tb_spawn_luod /tmp/luod-restarted.log
	tb_check "luod killed then, started again" tb_wait_luod
	tb_show_luod_log /tmp/luod-restarted.log
	tb_check "... unloads the kernel the killed luod loaded" grep -qx 0 /sys/kernel/kexec_loaded
	tb_check "... and says so in luoctl status" \
		sh -c 'luoctl status 2>&1 | grep -q "loaded by a luod that exited before kexec -e"'
	tb_check "... nothing persisted is left for a later boot" test ! -e /var/lib/luod/state.luod-state
}

# Whether PF "$@" has a VF yet.
first_vf() {
	local pf
	for pf in "$@"; do
		[ -e "/sys/bus/pci/devices/$pf/virtfn0" ] && return 0
	done
	return 1
}

stage2() {
	nvmes=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	tb_check "booted with luod.update_id" grep -q 'luod.update_id=' /proc/cmdline
	tb_check "the system bus runs" tb_start_bus
	tb_spawn_luod /tmp/luod-1.log
	n=0
	until first_vf $nvmes $igb || [ $n -gt 6000 ]; do n=$((n + 1)); sleep 0.01; done
	sleep 0.2
	kill -KILL "$TB_LUOD_PID"
	wait "$TB_LUOD_PID"
	rc=$?
	tb_show_luod_log /tmp/luod-1.log
	for pf in $nvmes $igb; do
		echo "at the kill: $pf $(tb_count_vfs "$pf") VFs, autoprobe $(cat "/sys/bus/pci/devices/$pf/sriov_drivers_autoprobe")"
	done | tb_info
	tb_inventory >/tmp/inventory-killed
	tb_check "luod killed by SIGKILL (exit status $rc) with the restore unfinished: the host differs from the record" \
		sh -c "[ $rc -eq 137 ] && ! cmp -s /luod-tb/inventory-before /tmp/inventory-killed"
	bootid=$(tb_boot_id)
	tb_check "the killed luod left a durable copy of the state, consumed by this boot ($bootid)" \
		tb_state_consumed_by "$bootid"

	# Restart=on-failure
	tb_spawn_luod /tmp/luod.log
	tb_check "luod starts again" tb_wait_luod
	tb_show_luod_log
	luoctl status 2>&1 | tb_info
	luoctl report >/tmp/report.txt 2>&1
	tb_info </tmp/report.txt
	cat /var/lib/luod/report.json 2>/dev/null | tr -d ' \n' >/tmp/report.flat
	tb_check_value "luod State" restored "$(tb_luod_state)"
	tb_check "report.json: resumed, attempt 2" \
		sh -c 'grep -q "\"resumed\":true" /tmp/report.flat && grep -q "\"attempt\":2[,}]" /tmp/report.flat'
	tb_check "luoctl report: resumed, attempt 2" grep -Eq 'resumed.*attempt 2|attempt 2.*resumed' /tmp/report.txt
	tb_check_restored $nvmes $igb
	tb_check_vfio_some $nvmes
	"$IP" link show "$(tb_pf_netdev "$igb")" >/tmp/iplink 2>&1
	tb_check "ip link: igb VF 1 MAC $IGB_MAC, VLAN $IGB_VLAN" \
		grep -Eq "vf 1 .*link/ether $IGB_MAC.*vlan $IGB_VLAN," /tmp/iplink
	tb_check "preserved state dropped after the full restore" test ! -e /var/lib/luod/state.luod-state
	tb_finish
}
