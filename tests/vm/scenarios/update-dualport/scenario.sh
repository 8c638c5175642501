# A dual-port NIC across an update: the two ports differ only in their PCI
# function.  Port 0 gets 2 VFs (a MAC on VF 0), port 1 gets 5 VFs (a MAC
# and a VLAN on VF 1); `luoctl update`; luod must record the ports under
# two identities, one per function, and restore each exactly.

P0_VFS=2 P0_MAC=02:d0:00:00:00:00
P1_VFS=5 P1_MAC=02:d0:00:00:01:01 P1_VLAN=321

ports() { set -- $(tb_pfs_of_kind igb); PORT0=${1:-} PORT1=${2:-}; }  # sets PORT0, PORT1

# Both ports' identities: different, each naming its own function (DSN
# form: ends in /00.F; path form: /00.F/ before the PCI IDs).
check_identities() {
	local id0 id1
	id0=$(tb_pf_identity "$PORT0") id1=$(tb_pf_identity "$PORT1")
	tb_check "$1: the ports' identities differ and name functions 0 and 1: '$id0' '$id1'" sh -c "
		[ -n '$id0' ] && [ '$id0' != '$id1' ] &&
		case '$id0' in */00.0|*/00.0/*) ;; *) exit 1 ;; esac &&
		case '$id1' in */00.1|*/00.1/*) ;; *) exit 1 ;; esac"
}

stage1() {
	ports
	tb_check "two igb PFs, functions 0 and 1 of one slot: '$PORT0' '$PORT1'" \
		sh -c "[ '$(tb_pfs_of_kind igb | wc -l)' -eq 2 ] && [ '${PORT0%.0}' = '${PORT1%.1}' ] && [ '$PORT0' != '$PORT1' ]"
	for pf in $PORT0 $PORT1; do
		tb_check_value "$pf: sriov_totalvfs" 7 "$(cat "/sys/bus/pci/devices/$pf/sriov_totalvfs")"
	done
	check_identities "before"
	tb_check "luod starts on the system bus" tb_start_luod
	tb_check "port 0 ($PORT0): $P0_VFS VFs enabled" tb_enable_vfs "$PORT0" $P0_VFS
	tb_check "port 1 ($PORT1): $P1_VFS VFs enabled" tb_enable_vfs "$PORT1" $P1_VFS
	dev0=$(tb_pf_netdev "$PORT0") dev1=$(tb_pf_netdev "$PORT1")
	tb_check "port 0 ($dev0) VF 0: MAC $P0_MAC" "$IP" link set "$dev0" vf 0 mac $P0_MAC
	tb_check "port 1 ($dev1) VF 1: MAC $P1_MAC, VLAN $P1_VLAN" \
		"$IP" link set "$dev1" vf 1 mac $P1_MAC vlan $P1_VLAN
	luoctl vfs 2>&1 | tb_info
	tb_save_inventory
	tb_carry_initrd
	# On, even with the identities wrong: the restore shows what they cost.
	tb_update_kexec 2
}

stage2() {
	ports
	tb_check "booted with luod.update_id" grep -q 'luod.update_id=' /proc/cmdline
	tb_check "luod starts" tb_start_luod
	tb_show_luod_log
	luoctl status 2>&1 | tb_info
	luoctl report 2>&1 | tb_info
	luoctl report --json >/tmp/report.json 2>&1
	tb_check_value "luod State" restored "$(tb_luod_state)"
	tb_check_value "port 0 ($PORT0): sriov_numvfs" $P0_VFS "$(cat "/sys/bus/pci/devices/$PORT0/sriov_numvfs")"
	tb_check_value "port 1 ($PORT1): sriov_numvfs" $P1_VFS "$(cat "/sys/bus/pci/devices/$PORT1/sriov_numvfs")"
	dev0=$(tb_pf_netdev "$PORT0") dev1=$(tb_pf_netdev "$PORT1")
	"$IP" link show "$dev0" >/tmp/iplink0 2>&1
	"$IP" link show "$dev1" >/tmp/iplink1 2>&1
	tb_check "ip link: port 0 VF 0 MAC $P0_MAC" grep -Eq "vf 0 .*link/ether $P0_MAC" /tmp/iplink0
	tb_check "ip link: port 1 VF 1 MAC $P1_MAC, VLAN $P1_VLAN" \
		grep -Eq "vf 1 .*link/ether $P1_MAC.*vlan $P1_VLAN," /tmp/iplink1
	tb_check_restored "$PORT0" "$PORT1"
	check_identities "after"
	tb_check "report: both PFs ok" \
		test "$(sed '/"guests"/,$d' /tmp/report.json | grep -c '"result": "ok"')" -eq 2
	tb_check "preserved state dropped after a full restore" test ! -e /var/lib/luod/state.luod-state
	tb_finish
}
