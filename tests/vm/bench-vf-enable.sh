# Shared body of the bench-vf-enable-* scenarios (see their hardware files):
# the sriov_numvfs write for 8, 32 and 127 VFs on one PF, with
# sriov_drivers_autoprobe 1 (the nvme driver probes each VF) and 0.
stage1() {
	pf=$(tb_pfs | head -n 1)
	tb_check "one SR-IOV PF" test -n "$pf"
	for probe in 1 0; do
		tb_set_autoprobe $probe
		sfx=$([ $probe = 1 ] && echo probe || echo noprobe)
		for n in 8 32 127; do
			tb_say "HOSTMARK enable-$n-$sfx-start"
			if ms=$(tb_enable_vfs "$pf" "$n"); then
				tb_say "HOSTMARK enable-$n-$sfx-end"
				tb_figure "vf-enable-$n-$sfx" "$ms" ms
			fi
			tb_check "$n VFs appear on $pf (autoprobe $probe)" test "$(tb_count_vfs "$pf")" -eq "$n"
			if ms=$(tb_disable_vfs "$pf"); then
				tb_figure "vf-disable-$n-$sfx" "$ms" ms
			fi
		done
	done
	tb_finish
}
