# luod's restore on a modular kernel (hardware `kernel modular`).
# Stage 1 loads the drivers as a host does: systemd-udevd's coldplug loads
# igb and nvme by modalias (and igbvf for the igb VFs), vfio-pci comes from
# `modprobe vfio-pci` (what libvirt does before it binds a device).  It sets
# VF MAC/VLAN/trust on the igb PF, binds 2 nvme VFs to vfio-pci, saves the
# inventory and `luoctl update`s into the same kernel.
# In stage 2 luod starts before any PF module is loaded: udevd runs (as
# luod.service is After=systemd-udevd) but its coldplug (udevadm trigger,
# systemd-udev-trigger.service on a host) comes 1 s after luod began
# restoring; nothing but luod loads vfio-pci.  A udev rule renames the igb
# PF's netdev (eth0 -> lan0) as a host's interface naming does, right after
# igb registers it.  Everything must come back exactly.

IGB_NETDEV=lan0
# kmod's tools by full path: busybox sh runs its own applets first.
MODINFO=/usr/sbin/modinfo MODPROBE=/usr/sbin/modprobe LSMOD=/usr/sbin/lsmod

drv_of() { basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)" 2>/dev/null; }
# The inventory without what a kexec may change.
inventory() { tb-inventory flat | grep -v '\.iommu_group=' | sort; }

# systemd-udevd with what loads drivers on a host (80-drivers.rules: "kmod
# load" of each new device's MODALIAS) and the igb PF's netdev name.
start_udev() {
	mkdir -p /etc/udev/rules.d
	echo 'ACTION=="add", ENV{MODALIAS}=="?*", RUN{builtin}+="kmod load"' >/etc/udev/rules.d/80-drivers.rules
	echo "ACTION==\"add\", SUBSYSTEM==\"net\", DRIVERS==\"igb\", NAME=\"$IGB_NETDEV\"" \
		>/etc/udev/rules.d/70-luod-tb-net.rules
	tb_start_udevd
}
coldplug() { udevadm trigger --type=devices --action=add && udevadm settle --timeout=120; }
none_loaded() { ! ls -d /sys/module/igb /sys/module/nvme /sys/module/vfio_pci 2>/dev/null | grep .; }
# This kernel has the drivers as modules (modinfo finds their .ko), none
# loaded: not so with the built-in kernel of the other scenarios (--kernel).
is_modular() {
	local m
	for m in igb igbvf nvme vfio-pci; do
		"$MODINFO" -F filename "$m" | grep -q "^/lib/modules/$(uname -r)/.*\.ko" || { echo "$m: not a module file"; return 1; }
	done
	none_loaded
}
coldplug_loads_pf_drivers() { coldplug && [ -e /sys/module/igb ] && [ -e /sys/module/nvme ]; }
no_pf_driver_yet() { none_loaded && [ ! -e "/sys/bus/pci/devices/$igb/driver" ] && [ ! -e "/sys/bus/pci/devices/$nvme/driver" ]; }

stage1() {
	tb_check "a modular kernel: igb, igbvf, nvme, vfio-pci are modules in /lib/modules/$(uname -r), none loaded" \
		is_modular
	if [ "$TB_FAILED" -ne 0 ]; then
		tb_say "INFO not the modular kernel (kernel/build.sh modular): no --kernel for this scenario"
		tb_finish
		return
	fi
	tb_check "systemd-udevd runs" start_udev
	tb_check "udev coldplug loads igb and nvme by modalias" coldplug_loads_pf_drivers
	nvme=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	tb_check "$nvme on nvme, $igb on igb with netdev $IGB_NETDEV (renamed by udev)" \
		sh -c "[ '$(drv_of "$nvme")' = nvme ] && [ '$(drv_of "$igb")' = igb ] && [ -e /sys/bus/pci/devices/$igb/net/$IGB_NETDEV ]"
	tb_check "modprobe vfio-pci" "$MODPROBE" vfio-pci
	tb_check "luod starts" tb_start_luod --max-delay=3
	for pf in $nvme $igb; do
		n=$(cat "/sys/bus/pci/devices/$pf/sriov_totalvfs")
		tb_check "$pf: $n VFs enabled" tb_enable_vfs "$pf" "$n"
	done
	udevadm settle --timeout=60
	tb_check "udev loaded igbvf for the igb VFs" test -e /sys/module/igbvf
	for vf in $(tb_vfs "$nvme" | sed -n '1p;3p'); do
		tb_check "$vf bound to vfio-pci" tb_bind_vfio "$vf"
	done
	tb_check "igb VF 1: MAC, VLAN 77, trust on" "$IP" link set "$IGB_NETDEV" vf 1 mac 02:aa:bb:cc:dd:01 vlan 77 trust on
	tb_check "igb VF 4: MAC, VLAN 4000 qos 3" "$IP" link set "$IGB_NETDEV" vf 4 mac 02:aa:bb:cc:dd:04 vlan 4000 qos 3
	udevadm settle --timeout=60
	luoctl vfs 2>&1 | tb_info

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
	tb_check "preflight: the new kernel has the PF and VF drivers (as modules)" \
		grep -q '"drivers": "present in .*lib.*modules' /tmp/plan
	if [ "$TB_FAILED" -ne 0 ]; then
		cat /tmp/plan >/dev/console
		tb_show_luod_log
		tb_finish
		return
	fi
	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --append "luod_tb.stage=2" --yes \
		>/tmp/update.out 2>&1
	cat /tmp/update.out >/dev/console
	tb_show_luod_log
	tb_abort "luoctl update returned without a kexec"
}

stage2() {
	nvme=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	tb_check "booted with luod.update_id" grep -q 'luod.update_id=' /proc/cmdline
	tb_check "nothing loaded igb, nvme or vfio-pci; the PFs have no driver" no_pf_driver_yet
	tb_check "systemd-udevd runs, no coldplug yet" start_udev
	# The coldplug, 1 s after luod logged that it restores.
	(
		n=0
		until grep -q '^<6>Restoring update' /tmp/luod.log 2>/dev/null; do
			n=$((n + 1)); [ $n -gt 600 ] && break; sleep 0.1
		done
		sleep 1
		{ grep -c 'Restoring update' /tmp/luod.log; ls -d /sys/module/igb /sys/module/nvme 2>&1; } >/tmp/at-coldplug 2>&1
		tb_say "HOSTMARK coldplug"
		coldplug >/tmp/coldplug.log 2>&1
	) &
	cpid=$!
	tb_check "luod starts" tb_start_luod --driver-wait=60
	wait $cpid
	tb_show_luod_log
	tb_info </tmp/at-coldplug
	tb_check "luod was restoring before udev loaded igb and nvme" \
		sh -c 'grep -qx 1 /tmp/at-coldplug && [ $(grep -c "No such file" /tmp/at-coldplug) -eq 2 ]'
	luoctl status 2>&1 | tb_info
	luoctl report >/tmp/report.txt 2>&1
	tb_info </tmp/report.txt
	luoctl report --json >/tmp/report.json 2>&1
	tr -d ' \n' </tmp/report.json | sed 's/{"bdf"/\n{"bdf"/g' >/tmp/report.pfs
	for pf in $igb $nvme; do
		ms=$(grep "^{\"bdf\":\"$pf\"" /tmp/report.pfs | sed -n 's/.*"driver_wait_ms":\([0-9]*\).*/\1/p')
		tb_check "$pf: luod waited for its driver module (${ms:-?} ms >= 900)" test "${ms:-0}" -ge 900
		[ -n "$ms" ] && tb_figure "driver-wait-$(tb_pf_kind "$pf")" "$ms" ms
	done
	inventory >/tmp/inventory-after
	tb_check "luod state is restored" sh -c 'luoctl status | grep -q "state:   restored"'
	tb_check "report: both PFs ok" tb_report_pfs_ok 2
	tb_check "inventory after == before ($(wc -l </luod-tb/inventory-before) fields, IOMMU groups aside)" \
		sh -c 'diff /luod-tb/inventory-before /tmp/inventory-after >/tmp/inv.diff'
	sed 's/^/    /' /tmp/inv.diff | head -n 20 >/dev/console
	for vf in $(tb_vfs "$nvme" | sed -n '1p;3p'); do
		tb_check "$vf on vfio-pci with $(tb_vfio_dev "$vf")" \
			sh -c "[ '$(drv_of "$vf")' = vfio-pci ] && test -c $(tb_vfio_dev "$vf")"
	done
	"$IP" link show "$IGB_NETDEV" >/tmp/iplink 2>&1
	tb_check "ip link: igb VF 1 MAC, VLAN 77, trust on" \
		grep -Eq "vf 1 .*link/ether 02:aa:bb:cc:dd:01.*vlan 77,.*trust on" /tmp/iplink
	tb_check "ip link: igb VF 4 VLAN 4000 qos 3" grep -Eq "vf 4 .*vlan 4000, qos 3" /tmp/iplink
	"$LSMOD" >/tmp/lsmod 2>&1
	tb_info </tmp/lsmod
	tb_check "vfio_pci is loaded (lsmod, /sys/module/vfio_pci live)" \
		sh -c 'grep -q "^vfio_pci " /tmp/lsmod && grep -qx live /sys/module/vfio_pci/initstate'
	tb_check "... by luod (its log)" grep -q 'Driver vfio-pci: loaded module vfio_pci' /tmp/luod.log
	tb_check "preserved state dropped after a full restore" test ! -e /var/lib/luod/state.luod-state
	tb_finish
}
