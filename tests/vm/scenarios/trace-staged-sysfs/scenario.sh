# Add VFS VFs to one nvme PF (sriov_drivers_autoprobe 0, after a warm-up VF
# added and removed) with instrument.sh's trace knobs armed: the kernel logs
# the stack of every kernfs_rwsem acquisition meanwhile; the log goes to the
# console with a KTRACE prefix for bench/staged-sysfs/trace to read.
VFS=2
D=/sys/kernel/debug
per_vf() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f", (b - a) / n }'; }

stage1() {
	pf=$(tb_pfs | head -n 1)
	tb_check "kernfs_rwsem trace knobs in debugfs" test -w $D/kernfs_rwsem_trace_writes
	tb_set_autoprobe 0
	echo 1 >"/sys/bus/pci/devices/$pf/sriov_numvfs"
	tb_disable_vfs "$pf" >/dev/null
	dmesg -c >/dev/null
	w0=$(cat $D/kernfs_rwsem_writes) r0=$(cat $D/kernfs_rwsem_reads)
	echo 2000 >$D/kernfs_rwsem_trace_writes
	echo 2000 >$D/kernfs_rwsem_trace_reads
	echo $VFS >"/sys/bus/pci/devices/$pf/sriov_numvfs"
	echo 0 >$D/kernfs_rwsem_trace_reads
	echo 0 >$D/kernfs_rwsem_trace_writes
	w1=$(cat $D/kernfs_rwsem_writes) r1=$(cat $D/kernfs_rwsem_reads)
	tb_figure writes-per-vf "$(per_vf "$w0" "$w1" $VFS)" acq
	tb_figure reads-per-vf "$(per_vf "$r0" "$r1" $VFS)" acq
	tb_check "$pf: $VFS VFs" test "$(tb_count_vfs "$pf")" -eq $VFS
	dmesg | sed 's/^/KTRACE /' >/dev/console
	tb_finish
}
