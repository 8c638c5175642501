# In the first kernel, with sriov_drivers_autoprobe 0 as luod restores:
# each PF alone (enable 32 VFs + bind 2 to vfio-pci), then the four PFs in a
# serial loop, then from four writers at once (the same work raw, no luod);
# then luoctl update.  In the second kernel luod restores the four PFs in
# parallel; figures: its restore phase and its ratios to the three; then
# the VFs are disabled and the four raw writers run again in the second
# kernel, beside luod (idle): luod's restore over that too.  The
# serial loop is checked against the sum of its parts, each timed by
# configure_pf itself in this shell (no subshell), so a helper that set the
# loop's t0 would fail the check.
configure_pf() {  # configure_pf PF FILE: enable 32 VFs on PF, bind VFs 0 and 1 to vfio-pci; the ms it took to FILE
	local t0 i
	t0=$(tb_us)
	tb_enable_vfs "$1" 32 >/dev/null || return 1
	for i in 0 1; do
		tb_bind_vfio "$(basename "$(readlink "/sys/bus/pci/devices/$1/virtfn$i")")" || return 1
	done
	tb_elapsed_ms "$t0" "$(tb_us)" >"$2"
}

# four_writers TAG: the four PFs ($pfs, VFs disabled, autoprobe 0)
# configured at once by configure_pf, one writer each; the ms to
# /tmp/four-TAG.
four_writers() {
	local t0 pf ms pids=
	rm -f /tmp/par-failed
	t0=$(tb_us)
	for pf in $pfs; do
		{ configure_pf "$pf" "/tmp/par-$1-$pf" || echo "$pf" >>/tmp/par-failed; } &
		pids="$pids $!"
	done
	# These writers only: in the second kernel luod is a child too.
	wait $pids
	ms=$(tb_elapsed_ms "$t0" "$(tb_us)")
	tb_check "four writers ($1 kernel): every PF configured" test ! -e /tmp/par-failed
	for pf in $pfs; do
		tb_check "$pf: 32 VFs (four writers, $1 kernel)" test "$(tb_count_vfs "$pf")" -eq 32
		tb_check_ge "four writers at once ($1 kernel)" "$ms" "$(cat "/tmp/par-$1-$pf")" "$pf's own part"
	done
	echo "$ms" >/tmp/four-$1
}

stage1() {
	pfs=$(tb_pfs)
	tb_check "4 PFs" test "$(echo $pfs | wc -w)" -eq 4
	tb_set_autoprobe 0
	slowest=0
	for pf in $pfs; do
		tb_check "$pf alone: 32 VFs, VFs 0 and 1 on vfio-pci" configure_pf "$pf" "/tmp/alone-$pf"
		ms=$(cat "/tmp/alone-$pf")
		tb_figure "alone-$pf" "$ms" ms
		tb_check_ge "$pf alone" "$ms" $TB_ENABLE_MIN_MS "one enable's sleep"
		slowest=$(awk -v a="$slowest" -v b="$ms" 'BEGIN { print (b > a) ? b : a }')
		tb_disable_vfs "$pf" >/dev/null
	done
	rm -f /tmp/serial-failed
	t0=$(tb_us)
	for pf in $pfs; do configure_pf "$pf" "/tmp/serial-$pf" || echo "$pf" >>/tmp/serial-failed; done
	serial=$(tb_elapsed_ms "$t0" "$(tb_us)")
	tb_check "serial loop: every PF configured" test ! -e /tmp/serial-failed
	parts=
	for pf in $pfs; do
		tb_check "$pf: 32 VFs" test "$(tb_count_vfs "$pf")" -eq 32
		parts="$parts $(cat "/tmp/serial-$pf")"
	done
	tb_check_serial "serial loop over the 4 PFs" "$serial" $parts
	tb_check_ge "serial loop over the 4 PFs" "$serial" "$slowest" "the slowest PF alone"
	# The same work from four writers at once, as luod's restore does it
	# but without luod: what luod's own cost is measured against.
	for pf in $pfs; do tb_disable_vfs "$pf" >/dev/null; done
	four_writers first
	parallel=$(cat /tmp/four-first)
	tb_set_autoprobe 1
	tb_check "luod starts" tb_start_luod
	mkdir -p /tmp/carry/luod-tb
	echo "slowest=$slowest serial=$serial parallel=$parallel" >/tmp/carry/luod-tb/bench
	tb_carry_initrd
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --append "luod_tb.stage=2" --yes >/dev/console 2>&1
	tb_show_luod_log
	tb_abort "luoctl update returned without a kexec"
}

stage2() {
	tb_check "luod restores" tb_start_luod
	tb_check "restored" sh -c 'luoctl status | grep -q "state:   restored"'
	luoctl report 2>&1 | tb_info
	luoctl report --json >/tmp/report.json
	restore=$(awk '/"restore"/ { getline; gsub(/[^0-9.]/, ""); print; exit }' /tmp/report.json)
	slowest=$(sed -n 's/.*slowest=\([0-9.]*\).*/\1/p' /luod-tb/bench)
	serial=$(sed -n 's/.*serial=\([0-9.]*\).*/\1/p' /luod-tb/bench)
	parallel=$(sed -n 's/.*parallel=\([0-9.]*\).*/\1/p' /luod-tb/bench)
	tb_figure slowest-pf-alone "$slowest" ms
	tb_figure serial-loop "$serial" ms
	tb_figure raw-four-writers "$parallel" ms
	tb_figure luod-parallel-restore "$restore" ms
	tb_check_ge "luod's parallel restore" "$restore" $TB_ENABLE_MIN_MS "one enable's sleep"
	tb_figure serial-over-slowest "$(awk -v a="$serial" -v b="$slowest" 'BEGIN { printf "%.2f", a / b }')" x
	tb_figure restore-over-slowest "$(awk -v a="$restore" -v b="$slowest" 'BEGIN { printf "%.2f", a / b }')" x
	tb_figure restore-over-serial "$(awk -v a="$restore" -v b="$serial" 'BEGIN { printf "%.2f", a / b }')" x
	# luod adds nothing of its own: its restore / the raw four writers <= 1.1
	tb_figure restore-over-raw-writers "$(awk -v a="$restore" -v b="$parallel" 'BEGIN { printf "%.2f", a / b }')" x
	# The raw writers again, in this kernel, after the restore (luod
	# running, idle): the first kernel's figure comes from a kernel that
	# has run for a while; this one from the kernel luod restored in.
	pfs=$(tb_pfs)
	for pf in $pfs; do tb_check "$pf: VFs disabled again" tb_disable_vfs "$pf" >/dev/null; done
	tb_set_autoprobe 0
	four_writers second
	raw2=$(cat /tmp/four-second)
	tb_figure raw-four-writers-second-kernel "$raw2" ms
	tb_figure restore-over-raw-writers-second-kernel "$(awk -v a="$restore" -v b="$raw2" 'BEGIN { printf "%.2f", a / b }')" x
	tb_finish
}
