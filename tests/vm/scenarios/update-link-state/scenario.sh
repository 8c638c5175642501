# The PF's link state across updates: the igb PF is admin-up (ip link set
# up) when `luoctl update` runs; after luod's restore it must be up again,
# and again after a second update from the restored host (three stages).

VFS=3 VF_MAC=02:aa:bb:cc:dd:10

# check_up WHEN: the PF's netdev is up, by its flags and in luod's SR-IOV
# layer (netdev_up).
check_up() {
	local dev flags
	dev=$(tb_pf_netdev "$igb")
	flags=$(cat "/sys/class/net/$dev/flags" 2>/dev/null)
	tb_check "$1: $dev is admin-up (flags $flags, IFF_UP 0x1)" tb_netdev_is_up "$dev"
	tb_check_value "$1: pf.$igb.netdev_up" 1 "$(tb-inventory flat | sed -n "s/^pf\.$igb\.netdev_up=//p")"
}

# After a restore: luod restored, the PF up, everything as recorded.
check_restore() {
	tb_check "booted with luod.update_id" grep -q 'luod.update_id=' /proc/cmdline
	tb_check "luod starts" tb_start_luod
	tb_show_luod_log
	luoctl report 2>&1 | tb_info
	tb_check_value "luod State" restored "$(tb_luod_state)"
	check_up "after the restore"
	tb_check_restored "$igb"
}

stage1() {
	igb=$(tb_pfs_of_kind igb)
	tb_check "one igb PF ($igb)" test -n "$igb"
	tb_check "luod starts on the system bus" tb_start_luod
	tb_check "$igb: $VFS VFs enabled" tb_enable_vfs "$igb" $VFS
	dev=$(tb_pf_netdev "$igb")
	tb_check "VF 0: MAC $VF_MAC" "$IP" link set "$dev" vf 0 mac $VF_MAC
	tb_check "ip link set $dev up" "$IP" link set "$dev" up
	check_up "before the first update"
	tb_save_inventory
	tb_carry_self
	tb_carry_initrd
	tb_update_kexec 2
}

stage2() {
	igb=$(tb_pfs_of_kind igb)
	check_restore
	dev=$(tb_pf_netdev "$igb")
	# So that stage 3 tests the restore of an up PF again whatever went
	# wrong here (every failed check above still fails the run).
	if ! tb_netdev_is_up "$dev"; then
		tb_log "$dev is down after the restore: setting it up for the second update"
		"$IP" link set "$dev" up
	fi
	if [ "$(tb_luod_state)" != restored ]; then
		tb_log "luod did not restore: luoctl discard, so that the second update is not refused"
		luoctl discard
	fi
	tb_save_inventory
	tb_carry_initrd
	tb_update_kexec 3
}

stage3() {
	igb=$(tb_pfs_of_kind igb)
	check_restore
	tb_finish
}
