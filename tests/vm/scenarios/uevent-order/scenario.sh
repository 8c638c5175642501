# uevents announced from several tasks at once reach a listener in SEQNUM
# order: 127 VFs on each of 4 nvme PFs enabled from four writers at once
# and disabled from four writers at once, ROUNDS times (luod_tb.rounds=N,
# default 3), while tb-sysfs-watch's netlink uevent monitor
# (NETLINK_KOBJECT_UEVENT, the kernel's own broadcast; no udevd) logs every
# event.  The series lets SR-IOV configurations of different PFs overlap
# (kernel/patches/6-sriov-parallel) and adds one PF's VFs from several
# tasks (9-vf-parallel); 7.3 numbers an event before it takes the mutex
# that orders its broadcast, so concurrent announcements can reach
# listeners out of SEQNUM order (kernel/patches/15-uevent-order numbers and
# broadcasts in one hold).  Checks: SEQNUMs rise at the listener; every VF
# added and removed once a round; no event lost (ENOBUFS).
N=127
ROUNDS=$(tb_arg rounds || echo 3)
D=/sys/bus/pci/devices

stage1() {
	local r t0 t1 t2 n want
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	tb_set_autoprobe 0
	tb_sysfs_watch_start --events /tmp/ev.log --log /tmp/half.log $pfs
	r=1
	while [ $r -le "$ROUNDS" ]; do
		t0=$(tb_us)
		tb_check "round $r: $N VFs on each PF from four writers at once" tb_write_numvfs_all $N parallel
		t1=$(tb_us)
		n=$(tb_count_all_vfs)
		tb_check "round $r: $((4 * N)) VFs (have $n)" test "$n" -eq $((4 * N))
		tb_check "round $r: 0 VFs on each PF from four writers at once" tb_write_numvfs_all 0 parallel
		t2=$(tb_us)
		tb_check "round $r: no VF left" test "$(tb_count_all_vfs)" -eq 0
		tb_figure "round-$r-enable-ms" "$(tb_elapsed_ms "$t0" "$t1")" ms
		tb_figure "round-$r-disable-ms" "$(tb_elapsed_ms "$t1" "$t2")" ms
		r=$((r + 1))
	done
	sleep 0.5
	tb_sysfs_watch_stop events vf_adds seqnum_errors
	want=$((ROUNDS * 4 * N))
	# The first events whose SEQNUM did not rise, with the one read before.
	awk 'NR > 1 && $1 + 0 <= prev + 0 { print "out of order: " prevline " | " $0; if (++k == 5) exit }
	     { prev = $1; prevline = $0 }' /tmp/ev.log | tb_info
	tb_check "every VF added and removed once a round ($want; $(tb_watch_value vf_adds) adds, $(tb_watch_value vf_removes) removes)" \
		test "$(tb_watch_value vf_adds):$(tb_watch_value vf_removes):$(tb_watch_value vf_unpaired)" = "$want:$want:0"
	tb_check "no uevent lost" test "$(tb_watch_value events_lost)" -eq 0
	tb_check "the watcher's threads ran to the end" test "$(tb_watch_value thread_errors)" -eq 0
	tb_check "SEQNUMs rise at the listener ($(tb_watch_value seqnum_errors) of $(tb_watch_value events) events did not)" \
		test "$(tb_watch_value seqnum_errors)" -eq 0
	tb_finish
}
