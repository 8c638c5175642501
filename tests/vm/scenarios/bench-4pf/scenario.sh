# Serial: one `echo 32 > sriov_numvfs` after another.  Parallel: the four
# writes from four processes at once.  Both with sriov_drivers_autoprobe 1
# and 0.  Guest CLOCK_MONOTONIC, ms.
stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	for probe in 1 0; do
		tb_set_autoprobe $probe
		sfx=$([ $probe = 1 ] && echo probe || echo noprobe)
		t0=$(tb_us)
		for pf in $pfs; do tb_enable_vfs "$pf" 32 >/dev/null; done
		serial=$(tb_elapsed_ms "$t0" "$(tb_us)")
		for pf in $pfs; do tb_check "$pf: 32 VFs (serial, autoprobe $probe)" test "$(tb_count_vfs "$pf")" -eq 32; done
		for pf in $pfs; do tb_disable_vfs "$pf" >/dev/null; done
		t0=$(tb_us)
		for pf in $pfs; do tb_enable_vfs "$pf" 32 >"/tmp/par-$pf" & done
		wait
		parallel=$(tb_elapsed_ms "$t0" "$(tb_us)")
		for pf in $pfs; do
			tb_check "$pf: 32 VFs (parallel, autoprobe $probe)" test "$(tb_count_vfs "$pf")" -eq 32
			tb_figure "vf-enable-par-write-$pf-$sfx" "$(cat "/tmp/par-$pf")" ms
		done
		for pf in $pfs; do tb_disable_vfs "$pf" >/dev/null; done
		tb_figure "vf-enable-4x32-serial-$sfx" "$serial" ms
		tb_figure "vf-enable-4x32-parallel-$sfx" "$parallel" ms
		tb_figure "serial-over-parallel-$sfx" "$(awk -v s="$serial" -v p="$parallel" 'BEGIN { printf "%.2f", s / p }')" x
	done
	tb_finish
}
