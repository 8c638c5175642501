# Shared body of the bench-vf-enable-* scenarios (see their hardware files).
stage1() {
	pf=$(tb_pfs | head -n 1)
	tb_check "one SR-IOV PF" test -n "$pf"
	for n in 8 32 127; do
		tb_say "HOSTMARK enable-$n-start"
		if ms=$(tb_enable_vfs "$pf" "$n"); then
			tb_say "HOSTMARK enable-$n-end"
			tb_figure "vf-enable-$n" "$ms" ms
		fi
		tb_check "$n VFs appear on $pf" test "$(tb_count_vfs "$pf")" -eq "$n"
		if ms=$(tb_disable_vfs "$pf"); then
			tb_figure "vf-disable-$n" "$ms" ms
		fi
	done
	tb_finish
}
