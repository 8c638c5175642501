# A boot that reuses an old command line must not apply the state again.
# Stage 2 (after `luoctl update`): nvme1 has no driver, so its restore
# fails and the state is kept; nvme0 is then set to 0 VFs on purpose and
# the operator kexecs by hand with --reuse-cmdline, luod.update_id and
# all.  Stage 3: luod must refuse the state (consumed by stage 2's boot),
# apply nothing and keep it; `luoctl retry` applies it; `luoctl discard`
# afterwards leaves the restored VFs alone.

LUOD_ARGS="--backends=file --driver-wait=3"
NVME0_VFS=8 NVME1_VFS=4

nvmes() { set -- $(tb_pfs_of_kind nvme); NVME0=${1:-} NVME1=${2:-}; }  # sets NVME0, NVME1
numvfs() { cat "/sys/bus/pci/devices/$1/sriov_numvfs"; }
# The state is kept: on the disk, and LastError says so.
state_kept() { test -s /var/lib/luod/state.luod-state && tb_contains "$(tb_luod_error)" kept; }

stage1() {
	nvmes
	tb_check "two nvme PFs: '$NVME0' '$NVME1'" test -n "$NVME1"
	tb_check "luod starts (state file backend)" tb_start_luod $LUOD_ARGS
	tb_check "$NVME0: $NVME0_VFS VFs enabled" tb_enable_vfs "$NVME0" $NVME0_VFS
	tb_check "$NVME1: $NVME1_VFS VFs enabled" tb_enable_vfs "$NVME1" $NVME1_VFS
	tb_save_inventory
	tb_carry_self
	tb_carry_initrd
	tb_update_kexec 2
}

stage2() {
	nvmes
	id=$(tb_cmdline_update_id)
	tb_check "booted with luod.update_id ($id)" test -n "$id"
	echo "$NVME1" >/sys/bus/pci/drivers/nvme/unbind
	tb_check "$NVME1 has no driver before luod starts" test ! -e "/sys/bus/pci/devices/$NVME1/driver"
	tb_check "luod starts" tb_start_luod $LUOD_ARGS
	tb_show_luod_log
	luoctl status 2>&1 | tb_info
	tb_check_value "luod State" failed "$(tb_luod_state)"
	luoctl report --json >/tmp/report.json 2>&1
	tb_check "report: $NVME1 failed waiting for its driver (ETIMEDOUT)" \
		grep -q "PF $NVME1 .*waiting for its driver.*Connection timed out" /tmp/report.json
	tb_check_value "$NVME0: sriov_numvfs (restored)" $NVME0_VFS "$(numvfs "$NVME0")"
	tb_check_value "$NVME1: sriov_numvfs (no driver)" 0 "$(numvfs "$NVME1")"
	tb_check "the state is kept (state.luod-state, LastError)" state_kept
	bootid=$(tb_boot_id)
	tb_check "the kept state is recorded as consumed by this boot ($bootid)" tb_state_consumed_by "$bootid"

	tb_check "$NVME0 set to 0 VFs on purpose" tb_disable_vfs "$NVME0"
	mkdir -p /tmp/carry/luod-tb
	cp /luod-tb/inventory-before /tmp/carry/luod-tb/
	echo "$bootid" >/tmp/carry/luod-tb/boot-id-stage2
	echo "$id" >/tmp/carry/luod-tb/update-id
	tb_carry_initrd
	tb_check "kexec -s -l --reuse-cmdline loads the same kernel (luod.update_id=$id comes along)" \
		kexec -s -l /luod-tb/bzImage --initrd=/tmp/initrd2 --reuse-cmdline --append=luod_tb.stage=3
	grep -qx 1 /sys/kernel/kexec_loaded || tb_abort "no kernel loaded for kexec -e"
	kill "$TB_LUOD_PID"
	wait "$TB_LUOD_PID"
	tb_release_disk
	# On even after a failed check here (the runner counts every CHECK FAIL):
	# stage 3 shows what luod does with the state.
	tb_say "HOSTMARK kexec-e"
	kexec -e
	tb_abort "kexec -e returned: $?"
}

stage3() {
	nvmes
	id=$(cat /luod-tb/update-id) boot2=$(cat /luod-tb/boot-id-stage2)
	tb_check_value "this boot's luod.update_id (reused)" "$id" "$(tb_cmdline_update_id)"
	tb_check "a new boot ($(tb_boot_id)), not stage 2's ($boot2)" test "$(tb_boot_id)" != "$boot2"
	tb_check "the kept state file is on the disk" test -s /var/lib/luod/state.luod-state
	cp /var/lib/luod/state.luod-state /tmp/state.before
	tb_check "luod starts" tb_start_luod $LUOD_ARGS
	tb_show_luod_log
	luoctl status 2>&1 | tb_info
	error=$(tb_luod_error)
	tb_check_value "luod State" failed "$(tb_luod_state)"
	tb_check "LastError says 'consumed by boot': '$error'" tb_contains "$error" "consumed by boot"
	tb_check "... naming stage 2's boot $boot2" tb_names_boot "$error" "$boot2"
	tb_check_value "$NVME0: sriov_numvfs (nothing applied)" 0 "$(numvfs "$NVME0")"
	tb_check_value "$NVME1: sriov_numvfs (nothing applied)" 0 "$(numvfs "$NVME1")"
	tb_check "the state is still kept (state.luod-state, LastError)" state_kept

	# The cause of stage 2's failure is gone: this kernel bound nvme1.
	tb_check_value "$NVME1: driver before the retry" nvme "$(tb_driver_of "$NVME1")"
	tb_check "luoctl retry applies the kept state" luoctl retry
	tb_luod_settle
	luoctl status 2>&1 | tb_info
	luoctl report 2>&1 | tb_info
	tb_check_value "luod State after the retry" restored "$(tb_luod_state)"
	tb_check_value "$NVME0: sriov_numvfs after the retry" $NVME0_VFS "$(numvfs "$NVME0")"
	tb_check_value "$NVME1: sriov_numvfs after the retry" $NVME1_VFS "$(numvfs "$NVME1")"
	tb_check_restored "$NVME0" "$NVME1"
	cat /var/lib/luod/report.json 2>/dev/null | tr -d ' \n' >/tmp/report.flat
	tb_check "report.json: attempt 2" grep -q '"attempt":2[,}]' /tmp/report.flat
	tb_check "the state file is removed after the complete restore" test ! -e /var/lib/luod/state.luod-state
	tb_check "luoctl discard then succeeds" luoctl discard
	tb_check_value "luod State after discard" idle "$(tb_luod_state)"
	tb_check_value "$NVME0: sriov_numvfs after discard (untouched)" $NVME0_VFS "$(numvfs "$NVME0")"
	tb_finish
}
