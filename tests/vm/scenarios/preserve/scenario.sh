# Preserve scenario: luod's state backends (preserve.h) and kexec helpers
# (kexec.h) across a real kexec, driven by tb-preserve.  Stage 1 preserves
# "hello-<uuid>" three ways (a LUO memfd whose session a setsid() child
# holds, a cpio archive appended to the initramfs, /var/lib/luod), proves
# the LUO fall-through signals (EBUSY, EEXIST) and the kexec error mapping,
# then kexecs with luod.update_id=<uuid>.  Stage 2: LUO and the initrd carry
# the text; the file, on a RAM root, does not.  luod_tb.break=drop-session
# kills the session holder before kexec -e: the LUO checks must fail.

TBP_OUT=/tmp/tb-preserve.out

tbp() {  # tbp ARGS...: tb-preserve, output in $TBP_OUT and on the console
	local rc
	tb-preserve "$@" >"$TBP_OUT" 2>&1
	rc=$?
	sed 's/^/    /' "$TBP_OUT" >/dev/console
	return $rc
}
tbp_has() { grep -qxF "$1" "$TBP_OUT"; }

cmdline_update_id() {
	local w
	for w in $(cat /proc/cmdline); do
		case $w in luod.update_id=*) echo "${w#*=}" ;; esac
	done | tail -n 1
}

# The bytes of /tmp/initrd2 after initrd.gz: zeros to a 4-byte boundary,
# then a newc archive that GNU cpio reads back.
check_appended() {  # check_appended TEXT
	local size padded
	size=$(stat -c %s /luod-tb/initrd.gz)
	padded=$(( (size + 3) / 4 * 4 ))
	tb_check "initrd: /tmp/initrd2 starts with initrd.gz ($size bytes)" \
		cmp -n "$size" /luod-tb/initrd.gz /tmp/initrd2
	tb_check "initrd: zeros from $size to $padded" \
		test "$(tail -c +$((size + 1)) /tmp/initrd2 | head -c $((padded - size)) | od -An -tx1 | tr -d ' 0\n')" = ""
	tail -c +$((padded + 1)) /tmp/initrd2 >/tmp/appended.cpio
	cpio -it --quiet </tmp/appended.cpio >/tmp/appended.list 2>&1
	tb_check "initrd: GNU cpio lists luod, luod/state.luod-state at offset $padded" \
		test "$(tr '\n' ' ' </tmp/appended.list)" = "luod luod/state.luod-state "
	mkdir -p /tmp/extract
	(cd /tmp/extract && cpio -id --quiet </tmp/appended.cpio)
	tb_check "initrd: the extracted state file holds the text" \
		test "$(cat /tmp/extract/luod/state.luod-state)" = "$1"
	tb_check "initrd: the extracted state file has mode 0600" \
		test "$(stat -c %a /tmp/extract/luod/state.luod-state)" = 600
}

stage1() {
	tb_check "/dev/liveupdate exists (kho=on liveupdate=on)" test -c /dev/liveupdate
	id=$(cat /proc/sys/kernel/random/uuid)
	text=hello-$id

	tbp save "$text" /luod-tb/initrd.gz /tmp/initrd2
	tb_check "LUO: luo_preserve() preserved the memfd" tbp_has luo=ok
	tb_check "initrd: initrd_append_state() wrote /tmp/initrd2" tbp_has initrd=ok
	tb_check "file: file_preserve() wrote /var/lib/luod" tbp_has file=ok
	holder=$(sed -n 's/^holder=//p' "$TBP_OUT")
	tb_check "LUO: the session holder (pid $holder) lives on" kill -0 "$holder"
	tb_check "file: /var/lib/luod/state.luod-state holds the text" \
		test "$(cat /var/lib/luod/state.luod-state)" = "$text"
	check_appended "$text"

	# The fall-through signals: the device owned by someone else, and a
	# second session of the same name.  Neither disturbs the first session.
	tbp try --busy "busy-$id"
	tb_check "LUO: a holder process opened /dev/liveupdate" tbp_has holder-open=ok
	tb_check "LUO: luo_preserve() while another process holds /dev/liveupdate: EBUSY" tbp_has luo=EBUSY
	tbp try "again-$id"
	tb_check "LUO: luo_preserve() while session \"luod\" exists: EEXIST" tbp_has luo=EEXIST

	# kexec errors come back as the errno kexec-tools names.
	cmdline=$(sed -e 's/luod_tb\.stage=1/luod_tb.stage=2/' /proc/cmdline)
	tbp kexec /luod-tb/no-such-bzImage /tmp/initrd2 "$cmdline" "$id"
	tb_check "kexec: a missing kernel file: ENOENT" grep -q '^kexec=ENOENT ' "$TBP_OUT"
	tbp kexec /luod-tb/hardware /tmp/initrd2 "$cmdline" "$id"
	tb_check "kexec: a file that is no kernel: ENOEXEC" grep -q '^kexec=ENOEXEC ' "$TBP_OUT"
	tbp loaded
	tb_check "kexec: kexec_loaded() is 0 before a load" tbp_has loaded=0
	tbp unload
	tb_check "kexec: kexec_unload() with nothing loaded succeeds" tbp_has unload=ok

	# Load, unload, load again: kexec_loaded() follows.
	tbp kexec /luod-tb/bzImage /tmp/initrd2 "$cmdline" "$id"
	tb_check "kexec: kexec_load_kernel() loaded bzImage + /tmp/initrd2" tbp_has kexec=ok
	tb_check "kexec: the command line ends in luod.update_id=$id" \
		grep -q "^cmdline=.*luod_tb\.stage=2.* luod\.update_id=$id\$" "$TBP_OUT"
	tbp loaded
	tb_check "kexec: kexec_loaded() is 1" tbp_has loaded=1
	tbp unload
	tb_check "kexec: kexec_unload()" tbp_has unload=ok
	tbp loaded
	tb_check "kexec: kexec_loaded() is 0 after unload" tbp_has loaded=0
	tbp kexec /luod-tb/bzImage /tmp/initrd2 "$cmdline" "$id"
	tb_check "kexec: kexec_load_kernel() again" tbp_has kexec=ok
	tb_check "LUO: the session holder (pid $holder) still lives" kill -0 "$holder"

	if [ "$TB_FAILED" -ne 0 ]; then
		tb_finish
		return
	fi
	if [ "$TB_BREAK" = drop-session ]; then
		# Closing the session fd unpreserves the memfd: stage 2 finds no LUO state.
		tb_log "break=drop-session: killing the session holder before kexec -e"
		kill "$holder"
		while grep -q '^State:.*[RSD]' "/proc/$holder/status" 2>/dev/null; do sleep 0.1; done
	fi
	tb_say "HOSTMARK kexec-e"
	tbp exec
	tb_abort "tb-preserve exec returned: $(cat "$TBP_OUT")"
}

stage2() {
	id=$(cmdline_update_id)
	tb_check "booted by kexec with luod.update_id= on the command line" test -n "$id"
	dmesg | grep -E 'KHO:|luo:' | sed 's/^/    /' >/dev/console
	tb_check "kernel: LUO retrieved live update data" \
		sh -c 'dmesg | grep -q "Retrieved live update data"'

	tbp load
	tb_check "kernel_cmdline_get_update_id() reads $id" tbp_has "update_id=$id"
	tb_check "LUO: luo_retrieve() returns hello-$id" tbp_has "luo=hello-$id"
	tb_check "LUO: luo_finish() succeeded" tbp_has finish=ok
	tb_check "initrd: initrd_find_state() returns hello-$id" tbp_has "initrd=hello-$id"
	tb_check "file: nothing in /var/lib/luod (the root is RAM)" tbp_has file=ENOENT

	tbp load
	tb_check "LUO: after FINISH and close the session is gone: ENOENT" tbp_has luo=ENOENT
	tbp try "next-$id"
	tb_check "LUO: a new session \"luod\" for the next update" tbp_has luo=ok
	tb_finish
}
