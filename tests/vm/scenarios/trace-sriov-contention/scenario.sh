# Where SR-IOV enable waits on locks: 127 VFs on each of 4 nvme PFs
# (sriov_drivers_autoprobe 0), PF after PF (phase serial) and from four
# writers at once (phase parallel), ROUNDS rounds (luod_tb.rounds, default
# 1), with the lock:contention_begin and lock:contention_end tracepoints on.
# They fire on the slow path of every spinlock, rwlock, mutex and rwsem
# (kernel/locking/: qspinlock, qrwlock, mutex.c, rwsem.c): a mutex's
# optimistic spin (flags MUTEX|SPIN) and its sleep (MUTEX) are separate
# intervals; an rwsem writer's optimistic spin (rwsem_optimistic_spin())
# has no tracepoint and is not counted.  Each interval runs from a task's
# contention_begin to its next contention_begin or contention_end of the
# same lock (intervals nest: an interrupt can contend inside a spin).
#
# Per phase and round, INFO lines for bench/sriov-parallel/contention:
#   LOCK <phase> <lock address> <flags> <intervals> <total us> <max us>
#       the 40 (lock, flags) pairs with the most time, and for each flags
#       value its sum over all locks as lock address "all";
#   STACK <phase> <lock address> <hits> <frame>;<frame>;...
#       the two most frequent call stacks of contention_begin of each of
#       the 12 locks with the most time (hist trigger, common_stacktrace;
#       the locking functions' own frames dropped);
# and FIGURE <phase>-wall-ms, <phase>-events, <phase>-contended-us (all
# intervals), <phase>-spin-us (flags with SPIN), <phase>-sleep-us (without),
# <phase>-lost-events (the ring buffer's overruns: must be 0).
N=127
ROUNDS=$(tb_arg rounds || echo 1)
D=/sys/bus/pci/devices
T=/sys/kernel/tracing

trace_start() {
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo '!hist:keys=lock_addr.hex,common_stacktrace:vals=hitcount:sort=hitcount.descending:size=16384' \
		>$T/events/lock/contention_begin/trigger 2>/dev/null || true
	echo 'hist:keys=lock_addr.hex,common_stacktrace:vals=hitcount:sort=hitcount.descending:size=16384' \
		>$T/events/lock/contention_begin/trigger
	echo 1 >$T/tracing_on
}

trace_stop() {  # trace_stop PHASE WALL_MS: figures and INFO lines of the phase
	local ph=$1 wall=$2 lost c _ ev all spin slp unm
	echo 0 >$T/tracing_on
	lost=0
	for c in $T/per_cpu/cpu*; do
		lost=$((lost + $(sed -n 's/^overrun: //p' "$c/stats")))
	done
	tb_figure "$ph-wall-ms" "$wall" ms
	tb_figure "$ph-lost-events" "$lost" count
	tb_check "$ph: no trace events lost (overrun $lost)" test "$lost" -eq 0
	# Pair the events per task (per CPU for the idle tasks, pid 0): a stack
	# of open intervals; a begin of the lock already on top closes that
	# interval (a mutex going from spinning to sleeping) and opens one with
	# the new flags; an end closes the top interval of its lock.
	awk -v ph="$ph" -v out=/tmp/cont.$ph '
	{
		b = index($0, " contention_begin: "); e = index($0, " contention_end: ")
		if (!b && !e) next
		pre = substr($0, 1, (b ? b : e) - 1)
		rest = substr($0, (b ? b + 19 : e + 17))
		n = split(pre, f, " ")
		ts = f[n]; sub(/:$/, "", ts); ts = ts * 1e6
		cpu = ""; for (i = 1; i <= n; i++) if (f[i] ~ /^\[[0-9]+\]$/) { cpu = f[i]; break }
		if (!match(pre, /-[0-9]+ +\[/)) next
		pid = substr(pre, RSTART + 1, RLENGTH - 1); sub(/ +\[$/, "", pid)
		key = (pid == 0) ? "0" cpu : pid
		split(rest, r, " "); lk = r[1]
		events++
		if (b) {
			fl = r[2]; sub(/^\(flags=/, "", fl); sub(/\)$/, "", fl)
			d = depth[key] + 0
			if (d > 0 && slk[key, d] == lk) close_top(key, ts)
			else depth[key] = ++d
			slk[key, d] = lk; sfl[key, d] = fl; sts[key, d] = ts
		} else {
			d = depth[key] + 0
			if (d > 0 && slk[key, d] == lk) { close_top(key, ts); depth[key] = d - 1 }
			else unmatched++
		}
	}
	function close_top(k, t,   d, l, fl, dur) {
		d = depth[k]; l = slk[k, d]; fl = sfl[k, d]; dur = t - sts[k, d]
		cnt[l, fl]++; tot[l, fl] += dur; if (dur > mx[l, fl]) mx[l, fl] = dur
		fcnt[fl]++; ftot[fl] += dur; if (dur > fmx[fl]) fmx[fl] = dur
		all += dur; if (fl ~ /SPIN/) spin += dur; else slp += dur
	}
	END {
		for (k in cnt) { split(k, p, SUBSEP); printf "%s %s %d %.1f %.1f\n", p[1], p[2], cnt[k], tot[k], mx[k] > out }
		for (fl in fcnt) printf "all %s %d %.1f %.1f\n", fl, fcnt[fl], ftot[fl], fmx[fl] > out
		printf "FIG %d %.0f %.0f %.0f %d\n", events, all, spin, slp, unmatched
	}' $T/trace >/tmp/cont.fig.$ph
	read -r _ ev all spin slp unm </tmp/cont.fig.$ph
	tb_figure "$ph-events" "$ev" count
	tb_figure "$ph-contended-us" "$all" us
	tb_figure "$ph-spin-us" "$spin" us
	tb_figure "$ph-sleep-us" "$slp" us
	tb_figure "$ph-unmatched-ends" "$unm" count
	sort -k4 -n -r /tmp/cont.$ph | grep -v '^all ' | head -n 40 | sed "s/^/LOCK $ph /" | tb_info
	grep '^all ' /tmp/cont.$ph | sed "s/^/LOCK $ph /" | tb_info
	# The stacks of the 12 locks with the most time, two each.
	sort -k4 -n -r /tmp/cont.$ph | grep -v '^all ' | awk '!s[$1]++ { print $1 }' | head -n 12 >/tmp/cont.top.$ph
	awk -v ph="$ph" -v topf=/tmp/cont.top.$ph '
	BEGIN { while ((getline l < topf) > 0) { sub(/^0+/, "", l); top[l] = 1 } }
	/^\{ lock_addr: / {
		a = $3; sub(/,$/, "", a); sub(/^0x/, "", a); sub(/^0+/, "", a); st = ""; next
	}
	/^ +[A-Za-z_.0-9]+\+0x/ {
		fr = $1; sub(/\+0x.*/, "", fr)
		if (fr ~ /^(contention_begin|trace_contention|__traceiter|queued_|native_queued|_raw_|do_raw|__mutex_lock|mutex_lock|__down|down_|rwsem_|_down_|osq_|__rt_mutex|lock_)/) next
		if (n_fr < 8) st = st (st == "" ? "" : ";") fr
		n_fr++; next
	}
	/^\} hitcount: / {
		if (a in top && seen[a]++ < 2) printf "STACK %s %s %s %s\n", ph, a, $3, st
		n_fr = 0; next
	}' $T/events/lock/contention_begin/hist | tb_info
}

phase() {  # phase NAME serial|parallel
	local t0 t1 pf
	trace_start
	t0=$(tb_us)
	tb_write_numvfs_all $N "$2" || tb_check "$1: every sriov_numvfs write succeeded" false
	t1=$(tb_us)
	trace_stop "$1" "$(tb_elapsed_ms "$t0" "$t1")"
	for pf in $pfs; do tb_check "$pf: $N VFs ($1)" test "$(tb_count_vfs "$pf")" -eq $N; done
	tb_write_numvfs_all 0 serial || tb_check "$1: every disable succeeded" false
}

stage1() {
	local r
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	mountpoint -q $T || mount -t tracefs nodev $T
	tb_check "lock:contention_begin tracepoint (CONFIG_FTRACE, kernel/trace.config)" \
		test -w $T/events/lock/contention_begin/enable
	tb_check "hist triggers (CONFIG_HIST_TRIGGERS)" test -e $T/events/lock/contention_begin/hist
	tb_check "real addresses in the trace (no_hash_pointers)" grep -qw no_hash_pointers /proc/cmdline
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	tb_set_autoprobe 0
	echo 65536 >$T/buffer_size_kb
	echo 1 >$T/events/lock/contention_begin/enable
	echo 1 >$T/events/lock/contention_end/enable
	# A warm-up enable and disable: the first VFs of a boot load caches.
	tb_write_numvfs_all 1 serial && tb_write_numvfs_all 0 serial
	for r in $(seq "$ROUNDS"); do
		phase "serial-r$r" serial
		phase "parallel-r$r" parallel
	done
	tb_finish
}
