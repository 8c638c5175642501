# Issue 5: enable and disable 127 VFs on each of 4 nvme PFs ITER times
# (luod_tb.iter=N on the command line, `tests/vm/run --append
# luod_tb.iter=N`; default 100) on a PROVE_LOCKING kernel, with no lockdep
# splat.  sriov_drivers_autoprobe 0 (VF creation and removal only).  Odd
# rounds write all four sriov_numvfs from four processes at once (the
# staged mutexes and kernfs_rwsem contended), even rounds PF after PF.  A
# reader walks the VFs' sysfs (readdir, lookup, attribute reads) while
# they come and go.  Rounds 1, 26, 51, 76 (and the last) bind VF 0 and the
# last VF of each PF to vfio-pci before the disable: the VFIO opt-in
# (patch 0009, group and vfio-dev devices staged) and removal of bound VFs.
# After each round the round's kernel log is searched for any lockdep,
# RCU, atomic-sleep, WARN or BUG report; at the end /proc/lockdep_stats
# must still say debug_locks 1 (lockdep turns itself off after its first
# report or when a table overflows).
#
# luod_tb.break=plant-splat writes a fake lockdep report line to /dev/kmsg
# in round 1: the scenario must then FAIL (tests/vm/meson.build, suite
# vm-lockdep).
N=127
ITER=$(tb_arg iter || echo 100)
# luod_tb.maxsec=S: start no round after S s of rounds (a time budget);
# the rounds not run make the "ITER rounds" check fail, the rest is checked.
MAXSEC=$(tb_arg maxsec || echo 0)
# luod_tb.deadline=EPOCH: the same by the guest's wall clock (QEMU's RTC
# is the host's UTC): start no round at or after that second.
DEADLINE=$(tb_arg deadline || echo 0)
SPLAT='possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|irq lock inversion|unsafe locking scenario|bad unlock balance|held lock freed|lock held when returning|DEBUG_LOCKS_WARN_ON|lockdep is turned off|turning off the locking correctness validator|too low!|BUG:|WARNING:|Oops|Call Trace|blocked for more than'
D=/sys/bus/pci/devices

numvfs() { local pf; for pf in $pfs; do cat $D/$pf/sriov_numvfs; done | tr '\n' ' '; }
lockdep_figures() {  # lockdep's table use as figures lockdep-$1-*
	local k v
	for k in "lock-classes" "dynamic-keys" "direct dependencies" "dependency chains" "dependency chain hlocks used" "stack-trace entries" "max locking depth"; do
		v=$(sed -n "s/^ *$k: *\([0-9]*\).*/\1/p" /proc/lockdep_stats 2>/dev/null)
		tb_figure "lockdep-$1-$(echo "$k" | tr ' ' '-')" "${v:-?}" count
	done
}
lockdep_stat() { awk -v k="$1:" '$1 == k { print $2; exit }' /proc/lockdep_stats; }

# Searches the kernel log since the last call (dmesg -c) for reports;
# non-zero if there was one, its text (and what follows) in /tmp/splat.txt.
kmsg_clean() {
	dmesg -c >/tmp/kmsg.round
	grep -Eq "$SPLAT" /tmp/kmsg.round || return 0
	grep -E -B 5 -A 150 "$SPLAT" /tmp/kmsg.round | head -n 600 >/tmp/splat.txt
	return 1
}
show_splat() { echo "luod-tb: the kernel's report:" >/dev/console; cat /tmp/splat.txt >/dev/console; }

vfio_bound() {  # VF $1 bound to vfio-pci, its group chardev and vfio-dev device exist
	tb_bind_vfio "$1" && test -c "$(tb_vfio_dev "$1")" && ls -d $D/$1/vfio-dev/vfio* >/dev/null
}

reader() {  # walks the VFs' sysfs until /tmp/stop-reader exists
	local pf v
	while [ ! -e /tmp/stop-reader ]; do
		for pf in $pfs; do
			cat $D/$pf/sriov_numvfs >/dev/null
			for v in $D/$pf/virtfn1 $D/$pf/virtfn63 $D/$pf/virtfn126; do
				ls "$v/" >/dev/null 2>&1
				cat "$v/vendor" "$v/uevent" "$v/iommu_group/type" >/dev/null 2>&1
			done
		done
		ls $D >/dev/null
		sleep 0.2
	done
}

vfio_round() {  # round $1 binds VFs to vfio-pci?
	[ $(($1 % 25)) -eq 1 ] || [ "$1" -eq "$ITER" ]
}

stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	tb_check "lockdep is on (/proc/lockdep_stats debug_locks 1)" test "$(lockdep_stat debug_locks)" = 1
	if kmsg_clean; then
		tb_say "CHECK ok boot: no lockdep/WARN/BUG report in the kernel log"
	else
		tb_check "boot: no lockdep/WARN/BUG report in the kernel log" false
		show_splat
		tb_finish
		return
	fi
	lockdep_figures boot
	tb_set_autoprobe 0
	echo "$ITER rounds of $N VFs on each of $(echo $pfs); odd rounds parallel, even serial; vfio-pci binds in rounds 1, 26, 51, 76 and $ITER; guest clock $(date -u +%H:%M:%S)" | tb_info
	rm -f /tmp/stop-reader
	reader &
	reader_pid=$!
	r=1 bad=0 sum_ms=0 tstart=$(tb_us)
	while [ $r -le "$ITER" ]; do
		if [ "$MAXSEC" -gt 0 ] && [ $(( ($(tb_us) - tstart) / 1000000 )) -ge "$MAXSEC" ]; then
			tb_say "INFO time budget luod_tb.maxsec=$MAXSEC s spent: stopping after $((r - 1)) of $ITER rounds"
			break
		fi
		if [ "$DEADLINE" -gt 0 ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then
			tb_say "INFO luod_tb.deadline=$DEADLINE reached: stopping after $((r - 1)) of $ITER rounds"
			break
		fi
		if [ $((r % 2)) -eq 1 ]; then mode=parallel; else mode=serial; fi
		t0=$(tb_us)
		tb_write_numvfs_all $N $mode || { tb_check "round $r ($mode): writing $N to sriov_numvfs" false; bad=1; }
		t1=$(tb_us)
		n=$(tb_count_all_vfs)
		[ "$n" -eq $((4 * N)) ] ||
			{ tb_check "round $r ($mode): $((4 * N)) VFs after enable (have $n; sriov_numvfs $(numvfs))" false; bad=1; }
		if vfio_round $r; then
			for pf in $pfs; do
				for i in 0 $((N - 1)); do
					v=$(basename "$(readlink $D/$pf/virtfn$i)")
					tb_check "round $r: $v bound to vfio-pci, its group chardev and vfio-dev exist" vfio_bound "$v"
				done
			done
		fi
		t2=$(tb_us)
		tb_write_numvfs_all 0 $mode || { tb_check "round $r ($mode): writing 0 to sriov_numvfs" false; bad=1; }
		t3=$(tb_us)
		n=$(tb_count_all_vfs)
		[ "$n" -eq 0 ] ||
			{ tb_check "round $r ($mode): no VFs after disable (have $n; sriov_numvfs $(numvfs))" false; bad=1; }
		if [ "$TB_BREAK" = plant-splat ] && [ $r -eq 1 ]; then
			echo "possible circular locking dependency detected (planted by luod_tb.break=plant-splat)" >/dev/kmsg
		fi
		if ! kmsg_clean; then
			tb_check "round $r ($mode): no lockdep/WARN/BUG report in the kernel log" false
			show_splat
			bad=1
		fi
		ms=$(tb_elapsed_ms "$t0" "$t3")
		tb_figure "round-$r-$mode-ms" "$ms" ms
		tb_figure "round-$r-enable-ms" "$(tb_elapsed_ms "$t0" "$t1")" ms
		tb_figure "round-$r-disable-ms" "$(tb_elapsed_ms "$t2" "$t3")" ms
		[ $bad -eq 0 ] || break
		sum_ms=$(awk -v a="$sum_ms" -v b="$ms" 'BEGIN { printf "%.1f", a + b }')
		r=$((r + 1))
	done
	touch /tmp/stop-reader
	wait $reader_pid
	clean=$((r - 1))
	tb_check "$ITER rounds ran, all clean ($clean clean)" test "$clean" -eq "$ITER"
	tb_figure rounds "$clean" rounds
	[ "$clean" -gt 0 ] && tb_figure mean-round-ms "$(awk -v s="$sum_ms" -v n="$clean" 'BEGIN { printf "%.1f", s / n }')" ms
	sed 's/^ *//' /proc/lockdep_stats | tb_info
	lockdep_figures end
	tb_check "lockdep saw kernfs_rwsem and the staged mutexes (/proc/lockdep)" \
		sh -c 'grep -q kernfs_rwsem /proc/lockdep && grep -q staged_mutex /proc/lockdep'
	tb_check "lockdep still on at the end (/proc/lockdep_stats debug_locks 1)" test "$(lockdep_stat debug_locks)" = 1
	tb_finish
}
