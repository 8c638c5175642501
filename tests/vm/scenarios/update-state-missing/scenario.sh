# The command line names an update whose state is gone: luod must say so
# (State failed, LastError "State of update <id> not found", logged at
# error priority), not report an idle host, and apply nothing.

LUOD_ARGS=--backends=file

stage1() {
	nvme0=$(tb_pfs_of_kind nvme)
	tb_check "luod starts (state file backend)" tb_start_luod $LUOD_ARGS
	tb_check "$nvme0: 4 VFs enabled" tb_enable_vfs "$nvme0" 4
	tb_save_inventory
	tb_carry_initrd
	tb_update_kexec 2
}

stage2() {
	nvme0=$(tb_pfs_of_kind nvme)
	id=$(tb_cmdline_update_id)
	tb_check "booted with luod.update_id ($id)" test -n "$id"
	tb_check "the state file came across" test -s /var/lib/luod/state.luod-state
	rm -f /var/lib/luod/state.luod-state
	tb_check "systemd-journald runs" tb_start_journald
	tb_check "luod starts" tb_start_luod $LUOD_ARGS
	tb_show_luod_log
	luoctl status 2>&1 | tb_info
	error=$(tb_luod_error)
	tb_check_value "luod State" failed "$(tb_luod_state)"
	tb_check "LastError starts 'State of update $id not found': '$error'" \
		tb_starts_with "$error" "State of update $id not found"
	journalctl -p err --no-pager >/tmp/journal-err 2>&1
	tb_check "logged at error priority (luod's <3> stderr line or the journal)" \
		sh -c "grep -q '^<3>State of update $id not found' /tmp/luod.log ||
			grep -q 'State of update $id not found' /tmp/journal-err"
	tb_check_value "$nvme0: sriov_numvfs (nothing applied)" 0 "$(cat "/sys/bus/pci/devices/$nvme0/sriov_numvfs")"
	tb_finish
}
