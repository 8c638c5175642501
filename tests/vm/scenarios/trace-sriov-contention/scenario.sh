# Where SR-IOV enable waits on locks: 127 VFs on each of 4 nvme PFs
# (sriov_drivers_autoprobe 0), PF after PF (phase serial) and from four
# writers at once (phase parallel), ROUNDS rounds (luod_tb.rounds, default
# 1), with the lock:contention_begin and lock:contention_end tracepoints on
# (kernel/locking/).  What they cover:
#   - mutex (mutex.c): begin(MUTEX|SPIN) before the first trylock and the
#     optimistic spin (so an interval may be an immediate trylock, and a
#     spin includes a schedule() on need_resched), begin(MUTEX) when it
#     sleeps, a first waiter's re-spins as MUTEX|SPIN again, one end at
#     the acquisition: one wait can be several intervals;
#   - rwsem (rwsem.c): the sleep (READ or WRITE); a writer's optimistic
#     spin has no tracepoint;
#   - spinlock (qspinlock.c): only the MCS-queue path (SPIN); the pending
#     waiter's spin, which is how most waits go with 2 vCPUs, is not
#     traced: the TCG profile (bench/sriov-parallel/tcg-profile) counts
#     queued_spin_lock_slowpath's PAUSEs instead;
#   - rwlock (qrwlock.c: SPIN|READ, SPIN|WRITE), semaphore down() (no
#     flags: NONE), percpu rwsem.
# Each interval runs from a task's contention_begin to its next
# contention_begin or contention_end of the same lock; intervals nest (an
# interrupt contends inside a spin; the wait_lock inside a mutex's sleep).
#
# Per phase and round, INFO lines for bench/contention/run:
#   LOCK <phase> <lock address> <flags> <intervals> <total us> <max us>
#       the 40 (lock, flags) pairs with the most time (intervals
#       inclusive of nested ones), and for each flags value its sum over
#       all locks as lock address "all";
#   STACK <phase> <lock address> <hits> <frame>;<frame>;...
#       the two most frequent call chains of contention_begin of each of
#       the 12 locks with the most time (hist trigger, common_stacktrace,
#       the locking functions' own frames dropped, hits summed over the
#       begin sites of one chain);
# and FIGURE <phase>-wall-ms, <phase>-events, <phase>-contended-us,
# <phase>-spin-us (flags with SPIN), <phase>-sleep-us (without): time
# exclusive of nested intervals, so no wait counts twice;
# <phase>-open-at-end (intervals still open when tracing stopped, not
# counted), <phase>-unmatched-ends (ends whose begin came before tracing
# started), <phase>-lost-events (the ring buffer's overruns: must be 0).
N=127
ROUNDS=$(tb_arg rounds || echo 1)
D=/sys/bus/pci/devices
T=/sys/kernel/tracing
E=$T/events/lock
HIST='hist:keys=lock_addr.hex,common_stacktrace:vals=hitcount:sort=hitcount.descending:size=16384'

trace_start() {
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo "!$HIST" >$E/contention_begin/trigger 2>/dev/null || true
	echo "$HIST" >$E/contention_begin/trigger
	echo 1 >$E/contention_begin/enable
	echo 1 >$E/contention_end/enable
	echo 1 >$T/tracing_on
}

trace_stop() {  # trace_stop PHASE WALL_MS: figures and INFO lines of the phase
	local ph=$1 wall=$2 lost c _ ev all spin slp unm open unp
	# Events off first: a hist trigger counts even with tracing_on 0.
	echo 0 >$E/contention_begin/enable
	echo 0 >$E/contention_end/enable
	echo 0 >$T/tracing_on
	cat $E/contention_begin/hist >/tmp/cont.hist.$ph
	lost=0
	for c in $T/per_cpu/cpu*; do
		lost=$((lost + $(sed -n 's/^overrun: //p' "$c/stats")))
	done
	tb_figure "$ph-wall-ms" "$wall" ms
	tb_figure "$ph-lost-events" "$lost" count
	tb_check "$ph: no trace events lost (overrun $lost)" test "$lost" -eq 0
	tb_check "$ph: no hist entries dropped" \
		test "$(sed -n 's/^ *Dropped: *//p' /tmp/cont.hist.$ph)" = 0
	# Pair the events per task (per CPU for the idle tasks, pid 0): a stack
	# of open intervals; a begin of the lock already on top closes that
	# interval (a mutex going from spinning to sleeping) and opens one with
	# the new flags; an end closes the top interval of its lock.  A closed
	# interval's time goes to its lock inclusive of nested ones, and to the
	# phase's totals exclusive of them.
	awk -v ph="$ph" -v out=/tmp/cont.$ph '
	function close_top(k, t,   d, l, fl, dur, ex) {
		d = depth[k]; l = slk[k, d]; fl = sfl[k, d]; dur = t - sts[k, d]
		ex = dur - nest[k, d]; nest[k, d] = 0
		if (d > 1) nest[k, d - 1] += dur
		cnt[l, fl]++; tot[l, fl] += dur; if (dur > mx[l, fl]) mx[l, fl] = dur
		fcnt[fl]++; ftot[fl] += dur; if (dur > fmx[fl]) fmx[fl] = dur
		all += ex; if (fl ~ /SPIN/) spin += ex; else slp += ex
	}
	{
		b = index($0, " contention_begin: "); e = index($0, " contention_end: ")
		if (!b && !e) next
		pre = substr($0, 1, (b ? b : e) - 1)
		rest = substr($0, (b ? b + 19 : e + 17))
		n = split(pre, f, " ")
		ts = f[n]; sub(/:$/, "", ts); ts = ts * 1e6
		cpu = ""; for (i = 1; i <= n; i++) if (f[i] ~ /^\[[0-9]+\]$/) { cpu = f[i]; break }
		if (!match(pre, /-[0-9]+ +\[/)) { unparsed++; next }
		pid = substr(pre, RSTART + 1, RLENGTH - 1); sub(/ +\[$/, "", pid)
		key = (pid == 0) ? "0" cpu : pid
		split(rest, r, " "); lk = r[1]
		events++
		if (b) {
			fl = r[2]; sub(/^\(flags=/, "", fl); sub(/\)$/, "", fl)
			if (fl == "") fl = "NONE"
			d = depth[key] + 0
			if (d > 0 && slk[key, d] == lk) close_top(key, ts)
			else depth[key] = ++d
			slk[key, d] = lk; sfl[key, d] = fl; sts[key, d] = ts; nest[key, d] = 0
		} else {
			d = depth[key] + 0
			if (d > 0 && slk[key, d] == lk) { close_top(key, ts); depth[key] = d - 1 }
			else unmatched++
		}
	}
	END {
		for (k in depth) open += depth[k]
		for (k in cnt) { split(k, p, SUBSEP); printf "%s %s %d %.1f %.1f\n", p[1], p[2], cnt[k], tot[k], mx[k] > out }
		for (fl in fcnt) printf "all %s %d %.1f %.1f\n", fl, fcnt[fl], ftot[fl], fmx[fl] > out
		printf "FIG %d %.0f %.0f %.0f %d %d %d\n", events, all, spin, slp, unmatched, open, unparsed
	}' $T/trace >/tmp/cont.fig.$ph
	read -r _ ev all spin slp unm open unp </tmp/cont.fig.$ph
	tb_figure "$ph-events" "$ev" count
	tb_figure "$ph-contended-us" "$all" us
	tb_figure "$ph-spin-us" "$spin" us
	tb_figure "$ph-sleep-us" "$slp" us
	tb_figure "$ph-unmatched-ends" "$unm" count
	tb_figure "$ph-open-at-end" "$open" count
	tb_check "$ph: every event's task parsed ($unp not)" test "$unp" -eq 0
	sort -k4 -n -r /tmp/cont.$ph | grep -v '^all ' | head -n 40 | sed "s/^/LOCK $ph /" | tb_info
	grep '^all ' /tmp/cont.$ph | sed "s/^/LOCK $ph /" | tb_info
	# The call chains of the 12 locks with the most time, two each, hits
	# summed per chain (mutex.c's begin sites differ only in the frames
	# dropped here).
	sort -k4 -n -r /tmp/cont.$ph | grep -v '^all ' | awk '!s[$1]++ { print $1 }' | head -n 12 >/tmp/cont.top.$ph
	awk -v topf=/tmp/cont.top.$ph '
	BEGIN { while ((getline l < topf) > 0) { sub(/^0+/, "", l); top[l] = 1 } }
	/^\{ lock_addr: / {
		a = $3; sub(/,$/, "", a); sub(/^0x/, "", a); sub(/^0+/, "", a); st = ""; n_fr = 0; next
	}
	/^ +[A-Za-z_.0-9]+\+0x/ {
		fr = $1; sub(/\+0x.*/, "", fr); base = fr; sub(/\..*/, "", base)
		if (base ~ /^(contention_begin|trace_contention_begin|__traceiter_contention_begin|queued_spin_lock_slowpath|native_queued_spin_lock_slowpath|queued_read_lock_slowpath|queued_write_lock_slowpath|_raw_spin_lock|_raw_spin_lock_irq|_raw_spin_lock_irqsave|_raw_spin_lock_bh|_raw_read_lock|_raw_read_lock_irqsave|_raw_write_lock|_raw_write_lock_irq|_raw_write_lock_irqsave|do_raw_spin_lock|__mutex_lock|__mutex_lock_slowpath|__mutex_lock_interruptible_slowpath|__mutex_lock_killable_slowpath|mutex_lock|mutex_lock_interruptible|mutex_lock_killable|mutex_lock_nested|__down|__down_common|__down_interruptible|__down_killable|__down_timeout|down|down_interruptible|down_killable|down_timeout|down_trylock|down_read|down_read_killable|down_read_interruptible|down_write|down_write_killable|rwsem_down_read_slowpath|rwsem_down_write_slowpath|__down_read|__down_read_common|__down_write|__down_write_common|osq_lock|percpu_down_read|percpu_down_write|__percpu_down_read|percpu_rwsem_wait)$/) next
		if (n_fr < 8) st = st (st == "" ? "" : ";") fr
		n_fr++; next
	}
	/^\} hitcount: / {
		if (a in top) hits[a " " st] += $3
		next
	}
	END { for (k in hits) { split(k, p, " "); print p[1], hits[k], p[2] } }' /tmp/cont.hist.$ph |
		sort -k2 -n -r | awk -v ph="$ph" 'seen[$1]++ < 2 { print "STACK", ph, $1, $2, $3 }' | tb_info
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
	tb_check "lock addresses as in System.map (nokaslr)" grep -qw nokaslr /proc/cmdline
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	tb_set_autoprobe 0
	echo 65536 >$T/buffer_size_kb
	# A warm-up enable and disable: the first VFs of a boot load caches.
	tb_write_numvfs_all 1 serial && tb_write_numvfs_all 0 serial
	for r in $(seq "$ROUNDS"); do
		phase "serial-r$r" serial
		phase "parallel-r$r" parallel
	done
	tb_finish
}
