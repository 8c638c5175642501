# luod crashes (SIGKILL from systemctl kill, as an OOM kill or a crash
# would end it) in the middle of its restore after the kexec: systemd's
# Restart=on-failure starts it again, and the new luod finds the durable
# copy the killed one wrote before touching any PF, resumes (attempt 2)
# and restores everything exactly; READY=1 only then.

KREL=$(cd /boot && ls vmlinuz-*-luod* | sed 's/^vmlinuz-//' | head -n 1)
IGB_MAC=02:aa:bb:cc:dd:01 IGB_VLAN=77

stage1() {
	local st nvme igb vf
	st=$(tb_host_wait_booted)
	tb_check "systemd finished booting ($st)" test "$st" = running
	tb_check "systemctl enable --now luod" systemctl enable --now luod
	nvme=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	tb_check "$nvme: 32 VFs" tb_enable_vfs "$nvme" 32
	tb_check "$igb: 3 VFs" tb_enable_vfs "$igb" 3
	for vf in $(tb_vfs "$nvme" | sed -n '1p;3p'); do
		tb_check "$vf bound to vfio-pci" tb_bind_vfio "$vf"
	done
	tb_check "igb VF 1: MAC $IGB_MAC, VLAN $IGB_VLAN" \
		"$IP" link set "$(tb_pf_netdev "$igb")" vf 1 mac $IGB_MAC vlan $IGB_VLAN
	tb_host_save_inventory
	[ "$TB_FAILED" -eq 0 ] || { tb_host_show_luod; tb_finish; return; }
	tb_host_update 2 "/boot/vmlinuz-$KREL"
}

stage2() {
	local nvme igb n pid
	nvme=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	# This stage starts with basic.target, while systemd starts luod:
	# wait for its restore to begin (the first VF back), then kill it.
	n=0
	until [ -e "/sys/bus/pci/devices/$nvme/virtfn0" ] || [ -e "/sys/bus/pci/devices/$igb/virtfn0" ] ||
		[ $n -gt 6000 ]; do
		n=$((n + 1)); sleep 0.05
	done
	pid=$(systemctl show -p MainPID --value luod.service)
	tb_check_value "luod.service while it restores" activating "$(systemctl is-active luod.service)"
	tb_check "systemctl kill -s KILL luod (pid $pid) mid-restore" systemctl kill -s KILL luod.service
	tb_inventory >/tmp/inventory-killed
	tb_check "... with the restore unfinished: the host differs from the record" \
		sh -c '! cmp -s /luod-tb/inventory-before /tmp/inventory-killed'
	tb_check "luod.service active again (Restart=on-failure, READY=1 after the restore)" tb_host_luod_active 900
	tb_host_show_luod
	tb_check_value "restarts of luod.service (NRestarts)" 1 "$(systemctl show -p NRestarts --value luod.service)"
	tb_check "a new luod process" sh -c "[ \"\$(systemctl show -p MainPID --value luod.service)\" != $pid ]"
	luoctl report >/tmp/report.txt 2>&1
	tb_info </tmp/report.txt
	tr -d ' \n' </var/lib/luod/report.json >/tmp/report.flat
	tb_check_value "luod State" restored "$(tb_luod_state)"
	tb_check "report.json: resumed, attempt 2" \
		sh -c 'grep -q "\"resumed\":true" /tmp/report.flat && grep -q "\"attempt\":2[,}]" /tmp/report.flat'
	tb_check_restored $nvme $igb
	"$IP" link show "$(tb_pf_netdev "$igb")" >/tmp/iplink 2>&1
	tb_check "ip link: igb VF 1 MAC $IGB_MAC, VLAN $IGB_VLAN" \
		grep -Eq "vf 1 .*link/ether $IGB_MAC.*vlan $IGB_VLAN," /tmp/iplink
	tb_check "preserved state dropped after the full restore" test ! -e /var/lib/luod/state.luod-state
	tb_finish
}
