# SR-IOV enable of 4 nvme PFs x 127 VFs (sriov_drivers_autoprobe 0) under
# the TCG plugin's counters (hardware tcg-profile on): one unprofiled
# round PF after PF first (the kernel's first-time allocations: slab
# caches, IOMMU tables), then the windows (tb_hostsample)
#   serial     the four PF after PF from one shell
#   parallel   the four from four background writers at once
# each followed by a check that every PF has its N VFs and by disabling
# them all (outside the windows).  Figures serial-ms, parallel-ms: the
# writes' guest wall time.  bench/sriov-parallel/tcg-profile prints
# tests/vm/tcg-profile-report's comparison of the two windows.
N=127

# enable_all serial|parallel: N VFs on every PF of $pfs, PF after PF or
# from one writer per PF at once (tb_write_numvfs_all); figure WINDOW-ms.
enable_all() {
	local t0 t1
	t0=$(tb_us)
	tb_check "$1: sriov_numvfs=$N written on every PF" tb_write_numvfs_all "$N" "$1"
	t1=$(tb_us)
	tb_figure "$1-ms" "$(tb_elapsed_ms "$t0" "$t1")" ms
}

# check_and_disable WHAT: each PF of $pfs has N VFs, then none.
check_and_disable() {
	local pf
	for pf in $pfs; do
		tb_check_value "$pf: VFs after $1" "$N" "$(tb_count_vfs "$pf")"
	done
	for pf in $pfs; do
		tb_check "$pf: VFs disabled after $1" tb_disable_vfs "$pf"
	done
}

stage1() {
	pfs=$(tb_pfs)
	tb_check_value "SR-IOV PFs" 4 "$(echo "$pfs" | wc -w)"
	tb_set_autoprobe 0

	tb_check "warm-up: sriov_numvfs=$N written on every PF" tb_write_numvfs_all "$N" serial
	check_and_disable warm-up

	tb_hostsample begin serial
	enable_all serial
	tb_hostsample end serial
	check_and_disable serial

	tb_hostsample begin parallel
	enable_all parallel
	tb_hostsample end parallel
	check_and_disable parallel
	tb_finish
}
