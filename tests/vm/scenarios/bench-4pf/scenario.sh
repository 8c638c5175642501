# Serial: one `echo 32 > sriov_numvfs` after another.  Parallel: the four
# writes from four processes at once.  Both with sriov_drivers_autoprobe 1
# and 0.  Guest CLOCK_MONOTONIC, ms.  The serial loop calls tb_enable_vfs in
# this shell (its output to a file, not in a subshell), so a helper that set
# this loop's t0 would make the total smaller than the sum of its parts,
# which fails tb_check_serial.
stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	for probe in 1 0; do
		tb_set_autoprobe $probe
		sfx=$([ $probe = 1 ] && echo probe || echo noprobe)
		t0=$(tb_us)
		for pf in $pfs; do tb_enable_vfs "$pf" 32 >"/tmp/ser-$pf"; done
		serial=$(tb_elapsed_ms "$t0" "$(tb_us)")
		parts= slowest=0
		for pf in $pfs; do
			tb_check "$pf: 32 VFs (serial, autoprobe $probe)" test "$(tb_count_vfs "$pf")" -eq 32
			ms=$(cat "/tmp/ser-$pf")
			tb_figure "vf-enable-ser-write-$pf-$sfx" "$ms" ms
			parts="$parts $ms"
			slowest=$(awk -v a="$slowest" -v b="$ms" 'BEGIN { print (b > a) ? b : a }')
		done
		tb_check_serial "4x32 PF after PF, autoprobe $probe" "$serial" $parts
		for pf in $pfs; do tb_disable_vfs "$pf" >/dev/null; done
		t0=$(tb_us)
		for pf in $pfs; do tb_enable_vfs "$pf" 32 >"/tmp/par-$pf" & done
		wait
		parallel=$(tb_elapsed_ms "$t0" "$(tb_us)")
		for pf in $pfs; do
			tb_check "$pf: 32 VFs (parallel, autoprobe $probe)" test "$(tb_count_vfs "$pf")" -eq 32
			ms=$(cat "/tmp/par-$pf")
			tb_figure "vf-enable-par-write-$pf-$sfx" "$ms" ms
			tb_check_ge "$pf's write among four at once, autoprobe $probe" "$ms" $TB_ENABLE_MIN_MS "one enable's sleep"
			tb_check_ge "4x32 all at once, autoprobe $probe" "$parallel" "$ms" "$pf's write, part of it"
		done
		for pf in $pfs; do tb_disable_vfs "$pf" >/dev/null; done
		tb_figure "vf-enable-slowest-pf-$sfx" "$slowest" ms
		tb_figure "vf-enable-4x32-serial-$sfx" "$serial" ms
		tb_figure "vf-enable-4x32-parallel-$sfx" "$parallel" ms
		tb_figure "parallel-over-serial-$sfx" "$(awk -v s="$serial" -v p="$parallel" 'BEGIN { printf "%.2f", p / s }')" x
		tb_figure "parallel-over-slowest-$sfx" "$(awk -v s="$slowest" -v p="$parallel" 'BEGIN { printf "%.2f", p / s }')" x
	done
	tb_finish
}
