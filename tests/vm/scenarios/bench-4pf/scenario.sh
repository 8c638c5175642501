# Serial: one `echo 32 > sriov_numvfs` after another.  Parallel: the four
# writes from four processes at once.  Guest wall clock, ms.
stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	t0=$(tb_us)
	for pf in $pfs; do tb_enable_vfs "$pf" 32 >/dev/null; done
	serial=$(tb_elapsed_ms "$t0" "$(tb_us)")
	for pf in $pfs; do tb_check "$pf: 32 VFs (serial)" test "$(tb_count_vfs "$pf")" -eq 32; done
	for pf in $pfs; do tb_disable_vfs "$pf" >/dev/null; done
	t0=$(tb_us)
	for pf in $pfs; do tb_enable_vfs "$pf" 32 >/dev/null & done
	wait
	parallel=$(tb_elapsed_ms "$t0" "$(tb_us)")
	for pf in $pfs; do tb_check "$pf: 32 VFs (parallel)" test "$(tb_count_vfs "$pf")" -eq 32; done
	tb_figure vf-enable-4x32-serial "$serial" ms
	tb_figure vf-enable-4x32-parallel "$parallel" ms
	tb_figure serial-over-parallel "$(awk -v s="$serial" -v p="$parallel" 'BEGIN { printf "%.2f", s / p }')" x
	tb_finish
}
