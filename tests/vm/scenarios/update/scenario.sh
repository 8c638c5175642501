# luod end to end: record, preserve in LUO, kexec, restore in parallel,
# report.  The first kernel configures SR-IOV by hand (as an operator
# would), then runs `luoctl update`; the second kernel starts luod, which
# must bring everything back by itself.

NVME_VFS=4
IGB_VFS=3
IGB_VF_MAC=02:aa:bb:cc:dd:01
IGB_VF_VLAN=77

pf_of_kind() { for pf in $(tb_pfs); do [ "$(tb_pf_kind "$pf")" = "$1" ] && echo "$pf"; done; }
vf_driver() { basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)" 2>/dev/null; }

stage1() {
	nvme=$(pf_of_kind nvme) igb=$(pf_of_kind igb)
	tb_check "one nvme PF ($nvme) and one igb PF ($igb)" test -n "$nvme" -a -n "$igb"
	tb_check "luod starts on the system bus" tb_start_luod
	tb_check "luoctl status says idle" sh -c 'luoctl status | grep -q "state:   idle"'

	tb_enable_vfs "$nvme" $NVME_VFS >/dev/null
	tb_enable_vfs "$igb" $IGB_VFS >/dev/null
	for vf in $(tb_vfs "$nvme" | head -n 2); do
		tb_check "$vf bound to vfio-pci" tb_bind_vfio "$vf"
	done
	dev=$(ls "/sys/bus/pci/devices/$igb/net" | head -n 1)
	tb_check "igb VF 1 MAC/VLAN set" "$IP" link set "$dev" vf 1 mac $IGB_VF_MAC vlan $IGB_VF_VLAN

	luoctl vfs 2>&1 | tb_info
	tb_check "luoctl vfs lists both PFs" sh -c "luoctl vfs | grep -c '^PF ' | grep -qx 2"
	luoctl update --kernel /luod-tb/bzImage --initrd /luod-tb/initrd.gz --dry-run >/tmp/plan 2>&1
	tb_check "luoctl update --dry-run plans the LUO backend" grep -q '"backend": "luo"' /tmp/plan
	tb_check "dry run changed nothing (state idle)" sh -c 'luoctl status | grep -q "state:   idle"'
	tb_check "a missing kernel image is refused, naming it" \
		sh -c 'luoctl update --kernel /nonexistent --yes 2>&1 | grep -q "/nonexistent"'

	if [ "$TB_FAILED" -ne 0 ]; then
		tb_show_luod_log
		tb_finish
		return
	fi
	tb_say "HOSTMARK luoctl-update"
	luoctl update --kernel /luod-tb/bzImage --initrd /luod-tb/initrd.gz \
		--append "luod_tb.stage=2" --yes >/tmp/update.out 2>&1
	cat /tmp/update.out >/dev/console
	tb_show_luod_log
	tb_abort "luoctl update returned without a kexec"
}

stage2() {
	tb_say "HOSTMARK stage2-init"
	nvme=$(pf_of_kind nvme) igb=$(pf_of_kind igb)
	tb_check "booted with luod.update_id" grep -q 'luod.update_id=' /proc/cmdline
	tb_check "luod starts and restores" tb_start_luod
	tb_show_luod_log
	tb_say "HOSTMARK luod-ready"
	luoctl status 2>&1 | tb_info
	tb_check "luod state is restored" sh -c 'luoctl status | grep -q "state:   restored"'
	tb_check "nvme PF has $NVME_VFS VFs again" test "$(cat /sys/bus/pci/devices/$nvme/sriov_numvfs)" -eq $NVME_VFS
	tb_check "igb PF has $IGB_VFS VFs again" test "$(cat /sys/bus/pci/devices/$igb/sriov_numvfs)" -eq $IGB_VFS
	for vf in $(tb_vfs "$nvme" | head -n 2); do
		tb_check "$vf is on vfio-pci again" test "$(vf_driver "$vf")" = vfio-pci
		tb_check "$vf driver_override is vfio-pci" grep -qx vfio-pci "/sys/bus/pci/devices/$vf/driver_override"
		tb_check "$vf has $(tb_vfio_dev "$vf")" test -c "$(tb_vfio_dev "$vf")"
	done
	dev=$(ls "/sys/bus/pci/devices/$igb/net" | head -n 1)
	"$IP" link show "$dev" >/tmp/iplink 2>&1
	tb_check "igb VF 1 has MAC $IGB_VF_MAC and VLAN $IGB_VF_VLAN again" \
		grep -Eq "vf 1 .*link/ether $IGB_VF_MAC.*vlan $IGB_VF_VLAN" /tmp/iplink
	luoctl report 2>&1 | tb_info
	luoctl vfs 2>&1 | tb_info
	luoctl report --json >/tmp/report.json 2>&1
	tb_check "report: both PFs ok" test "$(grep -c '"result": "ok"' /tmp/report.json)" -eq 2
	tb_check "report: total-blackout phase measured" grep -q '"total-blackout"' /tmp/report.json
	tb_check "report written to /var/lib/luod/report.json" test -s /var/lib/luod/report.json
	tb_check "preserved state dropped after a full restore" test ! -e /var/lib/luod/state.luod-state
	for phase in persist-and-kexec kernel-boot-to-luod-start restore total-blackout; do
		ms=$(awk -v p="\"$phase\"" '$0 ~ p { getline; gsub(/[^0-9.]/, ""); print; exit }' /tmp/report.json)
		[ -n "$ms" ] && tb_figure "$phase" "$ms" ms
	done
	tb_finish
}
