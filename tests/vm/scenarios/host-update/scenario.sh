# luoctl update on the systemd host: luod (the package's unit, started by
# systemd) records an nvme PF (8 VFs, 2 on vfio-pci) and an igb PF (3
# VFs, MAC and VLAN on one); `luoctl update --kernel /boot/vmlinuz-...`
# kexecs; in the next kernel systemd starts luod, which restores before
# READY=1; the inventory is compared field by field, luoctl report printed.
# Variables set by variants: HOST_VIA (--via-systemd: systemctl kexec, the
# clean shutdown), HOST_KERNEL (debian: Debian's own kernel, no LUO, the
# record in its initrd; the driver preflight against its modules).
: "${HOST_VIA:=}" "${HOST_KERNEL:=patched}"
IGB_VFS=3 NVME_VFS=8 IGB_MAC=02:aa:bb:cc:dd:01 IGB_VLAN=77
METRICS=/var/lib/prometheus/node-exporter/luod.prom

if [ "$HOST_KERNEL" = debian ]; then
	KREL=7.3.4+deb13-amd64
	UPDATE_ARGS="--initrd /boot/initrd.img-$KREL"
	WANT_BACKEND=initrd
else
	KREL=$(cd /boot && ls vmlinuz-*-luod* | sed 's/^vmlinuz-//' | head -n 1)
	UPDATE_ARGS=
	WANT_BACKEND=luo
	[ -n "$HOST_VIA" ] && WANT_BACKEND=file
fi

stage1() {
	local st nvme igb dev vf
	st=$(tb_host_wait_booted)
	tb_check "systemd finished booting ($st)" test "$st" = running
	tb_check_value "PID 1" systemd "$(cat /proc/1/comm)"
	tb_check_value "kernel" "$KREL" "$(uname -r)"
	if [ "$HOST_KERNEL" = debian ]; then
		tb_check "Debian's kernel: no LUO (/dev/liveupdate absent)" test ! -e /dev/liveupdate
		# udev loads them after the boot finished (the coldplug is only
		# triggered before): settle first.
		udevadm settle --timeout=300
		tb_check "PF drivers loaded as modules by udev (nvme, igb)" \
			sh -c 'grep -q "^nvme " /proc/modules && grep -q "^igb " /proc/modules'
		tb_check "modprobe vfio-pci (as a hypervisor host does)" modprobe vfio-pci
	fi
	# The operator's drop-in: the report as node_exporter metrics, and,
	# on Debian's kernel under TCG, where udev's coldplug of the modules
	# takes minutes, a longer bound on each PF's driver.
	mkdir -p /etc/systemd/system/luod.service.d /var/lib/prometheus/node-exporter
	printf '[Service]\nExecStart=\nExecStart=/usr/sbin/luod --metrics-file=%s%s\n' "$METRICS" \
		"$( [ "$HOST_KERNEL" = debian ] && echo ' --driver-wait=180')" >/etc/systemd/system/luod.service.d/testbed.conf
	systemctl daemon-reload
	tb_check "systemctl enable --now luod" systemctl enable --now luod
	tb_check "luod.service active" tb_host_luod_active 120
	nvme=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	tb_check "$nvme: $NVME_VFS VFs" tb_enable_vfs "$nvme" $NVME_VFS
	tb_check "$igb: $IGB_VFS VFs" tb_enable_vfs "$igb" $IGB_VFS
	for vf in $(tb_vfs "$nvme" | sed -n '1p;3p'); do
		tb_check "$vf bound to vfio-pci" tb_bind_vfio "$vf"
	done
	dev=$(tb_pf_netdev "$igb")
	tb_check "igb VF 1: MAC $IGB_MAC, VLAN $IGB_VLAN" "$IP" link set "$dev" vf 1 mac $IGB_MAC vlan $IGB_VLAN
	luoctl vfs 2>&1 | tb_info
	tb_host_save_inventory
	luoctl update --kernel "/boot/vmlinuz-$KREL" $UPDATE_ARGS $HOST_VIA --dry-run >/tmp/plan 2>&1
	tb_info </tmp/plan
	tb_check "plan: backend $WANT_BACKEND" grep -q "\"backend\": \"$WANT_BACKEND\"" /tmp/plan
	if [ "$WANT_BACKEND" != luo ]; then
		tb_check "plan: backend_note says why not LUO" grep -q '"backend_note": "luo not ' /tmp/plan
	fi
	tb_check "preflight: the drivers of the new kernel in /lib/modules/$KREL" \
		grep -q "\"drivers\": \"present in .*lib.*modules.*$KREL\"" /tmp/plan
	if [ "$TB_FAILED" -ne 0 ]; then
		tb_host_show_luod
		tb_finish
		return
	fi
	# systemctl kexec: a logind delay inhibitor on shutdown holds the kexec
	# back while luod has the update loaded (tb_host_update checks
	# UpdateLoaded then and lets it go).
	if [ -n "$HOST_VIA" ]; then
		systemd-inhibit --what=shutdown --mode=delay --who=luod-tb --why="checking UpdateLoaded" \
			sleep 600 &
		TB_SHUTDOWN_INHIBITOR=$!
		sleep 1
	fi
	tb_host_update 2 "/boot/vmlinuz-$KREL" $UPDATE_ARGS $HOST_VIA
}

stage2() {
	local st nvme igb ms phase
	tb_say "HOSTMARK stage2-init"
	st=$(tb_host_wait_booted)
	tb_check "systemd finished booting again ($st)" test "$st" = running
	tb_check "booted with luod.update_id" grep -q 'luod.update_id=' /proc/cmdline
	tb_check "luod.service active (READY=1 after the restore)" tb_host_luod_active 900
	tb_host_show_luod
	nvme=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	luoctl status 2>&1 | tb_info
	luoctl report >/tmp/report.txt 2>&1
	tb_info </tmp/report.txt
	luoctl report --json >/tmp/report.json 2>&1
	tb_check_value "luod State" restored "$(tb_luod_state)"
	tb_check "report: backend $WANT_BACKEND" grep -q "\"backend\": \"$WANT_BACKEND\"" /tmp/report.json
	tb_check "report: both PFs ok" tb_report_pfs_ok 2
	tb_check_restored $nvme $igb
	tb_check_vfio_pair "$nvme"
	"$IP" link show "$(tb_pf_netdev "$igb")" >/tmp/iplink 2>&1
	tb_check "ip link: igb VF 1 MAC $IGB_MAC, VLAN $IGB_VLAN" \
		grep -Eq "vf 1 .*link/ether $IGB_MAC.*vlan $IGB_VLAN," /tmp/iplink
	if [ "$HOST_KERNEL" = debian ]; then
		tb_check "vfio-pci loaded again (by luod: nothing else asked for it)" grep -q '^vfio_pci ' /proc/modules
	fi
	tb_check "preserved state dropped after the full restore" test ! -e /var/lib/luod/state.luod-state
	tb_info <"$METRICS"
	tb_check "metrics: 2 PFs, none failed, backend $WANT_BACKEND, the blackout, both PFs ok" \
		sh -c "grep -qx 'luod_update_pfs 2' $METRICS && grep -qx 'luod_update_pfs_failed 0' $METRICS &&
			grep -q '^luod_update_info{.*backend=\"$WANT_BACKEND\"} 1\$' $METRICS &&
			grep -q '^luod_update_phase_seconds{phase=\"total-blackout\"} [0-9]' $METRICS &&
			[ \$(grep -c '^luod_update_pf_ok{.*} 1\$' $METRICS) -eq 2 ]"
	if [ -n "$HOST_VIA" ]; then
		# systemd's own record of the clean shutdown before the kexec.
		journalctl --list-boots --no-pager 2>&1 | tb_info
		tb_check "the previous boot shut down through systemd (journal: kexec target reached)" \
			sh -c 'journalctl -b -1 --no-pager -o cat 2>/dev/null | grep -Eq "Reached target kexec.target|Starting kexec.service|systemd-kexec.service"'
	fi
	for phase in persist-and-kexec kernel-boot-to-luod-start restore total-blackout; do
		ms=$(awk -v p="\"$phase\"" '$0 ~ p { getline; gsub(/[^0-9.]/, ""); print; exit }' /tmp/report.json)
		[ -n "$ms" ] && tb_figure "$phase" "$ms" ms
	done
	tb_finish
}

# VFs 0 and 2 of PF $1 on vfio-pci with their group device.
tb_check_vfio_pair() {
	local vf dev
	for vf in $(tb_vfs "$1" | sed -n '1p;3p'); do
		dev=$(tb_vfio_dev "$vf")
		tb_check "$vf on vfio-pci with $dev" \
			sh -c "[ \"\$(basename \$(readlink /sys/bus/pci/devices/$vf/driver))\" = vfio-pci ] && test -c $dev"
	done
}
