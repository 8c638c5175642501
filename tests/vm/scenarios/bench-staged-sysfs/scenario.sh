# Enable 127 VFs on each of 4 nvme PFs, sriov_drivers_autoprobe 0 (VF
# creation only), PF after PF (serial) and from four processes at once
# (parallel), ROUNDS times each, alternating.  Figures: the sriov_numvfs
# writes' time (guest CLOCK_MONOTONIC, ms) and, on a kernel instrumented by
# bench/staged-sysfs/instrument.sh, the kernfs_rwsem acquisitions they cost,
# per VF.
ROUNDS=2
N=127
STAT=/sys/kernel/debug/kernfs_rwsem_writes
RSTAT=/sys/kernel/debug/kernfs_rwsem_reads
stat_w() { if [ -r $STAT ]; then cat $STAT; else echo 0; fi; }
stat_r() { if [ -r $RSTAT ]; then cat $RSTAT; else echo 0; fi; }
per_vf() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f", (b - a) / n }'; }

stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	tb_check "kernfs_rwsem counters in debugfs" test -r $STAT
	tb_set_autoprobe 0
	nvf=$((4 * N))
	r=1
	while [ $r -le $ROUNDS ]; do
		w0=$(stat_w) r0=$(stat_r) t0=$(tb_us)
		for pf in $pfs; do echo $N >"/sys/bus/pci/devices/$pf/sriov_numvfs"; done
		t1=$(tb_us) w1=$(stat_w) r1=$(stat_r)
		tb_figure "serial-$r-ms" "$(tb_elapsed_ms "$t0" "$t1")" ms
		tb_figure "serial-$r-writes-per-vf" "$(per_vf "$w0" "$w1" $nvf)" acq
		tb_figure "serial-$r-reads-per-vf" "$(per_vf "$r0" "$r1" $nvf)" acq
		for pf in $pfs; do tb_check "$pf: $N VFs (serial, round $r)" test "$(tb_count_vfs "$pf")" -eq $N; done
		for pf in $pfs; do tb_disable_vfs "$pf" >/dev/null; done

		w0=$(stat_w) r0=$(stat_r) t0=$(tb_us)
		for pf in $pfs; do echo $N >"/sys/bus/pci/devices/$pf/sriov_numvfs" & done
		wait
		t1=$(tb_us) w1=$(stat_w) r1=$(stat_r)
		tb_figure "parallel-$r-ms" "$(tb_elapsed_ms "$t0" "$t1")" ms
		tb_figure "parallel-$r-writes-per-vf" "$(per_vf "$w0" "$w1" $nvf)" acq
		tb_figure "parallel-$r-reads-per-vf" "$(per_vf "$r0" "$r1" $nvf)" acq
		for pf in $pfs; do tb_check "$pf: $N VFs (parallel, round $r)" test "$(tb_count_vfs "$pf")" -eq $N; done
		for pf in $pfs; do tb_disable_vfs "$pf" >/dev/null; done
		r=$((r + 1))
	done
	tb_finish
}
