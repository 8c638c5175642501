# SR-IOV enable of 4 nvme PFs x 127 VFs (sriov_drivers_autoprobe 0),
# guest CLOCK_MONOTONIC ms and the writer's CPU time (the process that
# writes sriov_numvfs, in which the kernel adds the VFs), ROUNDS rounds
# (luod_tb.rounds, default 2), figures per round and their median over
# rounds (bench/sriov-parallel/run):
#
#   alone-PF        each PF enabled by itself, nothing else running
#   serial          the four PF after PF from one shell
#   parallel        the four from four writers at once
#   bound           max(slowest PF alone, sum of the four PFs' CPU time / 2
#                   vCPUs): no schedule of the four enables on 2 vCPUs can
#                   finish sooner (CPU time in 10 ms ticks, utime + stime)
#   bound-settle    max(each PF's fastest enable, settle + the four PFs'
#                   CPU after their settle / vCPUs): every enable first
#                   sleeps TB_ENABLE_MIN_MS (the kernel's msleep(100) after
#                   VF Enable, before any VF is added), so when four writers
#                   start together no VF work can run before that sleep
#                   ends, and what each writer does after it (its CPU minus
#                   at most the CPU of a one-VF enable, which bounds the
#                   work before the sleep, independent of the VF count) must
#                   fit on the vCPUs after it.  Per PF the smaller of its
#                   two lone measurements is taken (alone, and its part of
#                   the serial run): one noisy run must not raise the
#                   floor.  A lower bound for four writers started at once
#                   (as here) provided CPU measured alone is not more than
#                   the same work needs among four; above bound whenever
#                   the settle exceeds 4 x one-VF CPU / vCPUs
#   bound-settle-sys the same with the CPU of the whole guest during the
#                   serial run (/proc/stat) instead of the writers' own: it
#                   also counts the bench's forks (informational)
#   bound-sys       max(slowest PF alone, the whole guest's busy CPU time
#                   during the serial run / vCPUs): bound with the four
#                   PFs' CPU taken from /proc/stat, so that it counts the
#                   work a PF's enable hands to kworkers (kernel submission
#                   9 adds a PF's VFs from workers, whose CPU the writers'
#                   own figures miss); it also counts the bench's forks,
#                   so it is printed, not checked as a lower bound
#   bound-work      bound with the enables' whole CPU (work-sum): the
#                   writers' (se.sum_exec_runtime) and every kernel
#                   thread's (kworkers included), the smaller of the four
#                   PFs alone summed and the serial run; unlike bound-sys
#                   it counts no fork of the bench's (the forks run in the
#                   bench's shells, not in kernel threads)
#   bound-settle-work bound-settle with work-sum instead of the writers'
#                   CPU: the floor for four writers started at once when
#                   part of the work runs in kworkers, under bound-settle's
#                   assumptions (parallel-work-over-work-sum shows the last
#                   one's: below 1, the four needed less CPU together)
#   settle-over-bound, settle-work-over-bound-work: bound-settle / bound,
#                   bound-settle-work / bound-work: above 1.25, the target
#                   "four writers <= 1.25 x bound" is below what any
#                   schedule can reach in that round
#   *-kthread-exec  the kernel threads' CPU in that window (alone: the four
#                   windows summed), less kthread-base each
#   kthread-base    the kernel threads' CPU in a window of the same make
#                   (snapshots around two host samples, 600 ms, after a
#                   disable) with no write: their background and the last
#                   disable's deferred work; serial-null-kthread-exec: the
#                   same in the null run's window (no host samples)
#   parallel-work-exec: the parallel run's writers' and kernel threads' CPU
#   one-vf-cpu      the largest writer CPU of a one-VF enable over the PFs
#   *-exec          the writers' CPU summed: se.sum_exec_runtime, read from
#                   /proc/self/sched in ms (it is brought up to date at
#                   ticks and switches, so a reading can lag by one tick,
#                   4 ms at HZ=250); the ticks figures (utime + stime) are
#                   derived from the same clock, cut to 10 ms
#   serial-cpu, parallel-cpu: the same in 10 ms ticks (utime + stime)
#   *-sys-busy, *-sys-idle: vCPU-ms the whole guest spent busy / idle in
#                   that run (/proc/stat, all vCPUs; tick samples, tens of
#                   ms of error), busy split into *-sys-user, *-sys-system
#                   and *-sys-irq; serial-null-sys-busy: the same four
#                   subshells writing to /dev/null, what the bench's own
#                   forks and reads cost in a serial run (the parallel run
#                   forks twice per writer, so it costs more there);
#                   parallel-idle-beyond-settle: parallel-sys-idle minus
#                   vCPUs x settle: idle vCPU time outside the settle (the
#                   writers blocked, or not started yet)
#   parallel-start-spread, parallel-end-spread: the last writer's start
#                   (end) minus the first's, from their own clock readings
#   parallel-vcsw, parallel-ivcsw: the four writers' voluntary (blocked:
#                   sleeps, lock waits) and involuntary (preempted) context
#                   switches summed
#   *-over-*        ratios within each round (the run script prints their
#                   medians)
#   bind-serial, bind-parallel: BIND VFs of each PF (luod_tb.bind, default
#                   16) bound to vfio-pci, PF after PF vs one binder per PF
#                   at once, after the enable
#
#   bare-ms, bare-sys-busy-ms: four writers that only write (no readings
#                   in the subshells), wall and guest busy time from the
#                   parent
#   pw-thread, pw-process: the four enables from tb-pwrite's writers
#                   started at one barrier, as threads of one process
#                   (a writer following another on a vCPU loads no page
#                   table) and as processes: wall (-ms), summed writer CPU
#                   (-exec-ms, CLOCK_THREAD_CPUTIME_ID), context switches;
#                   pw-process-exec-over-thread-exec is what switching
#                   address spaces costs the same kernel work here
#   *-ipi-res, -cal, -tlb, -loc: rescheduling, function call and TLB
#                   shootdown IPIs and local timer interrupts in that run,
#                   all vCPUs (/proc/interrupts)
#   speed-begin-ms, -mid-ms, -end-ms: a short user code loop alone (the
#                   fastest of three) at the start of the round, before
#                   the four writers and at the end: the host's speed
#                   (bench/sriov-parallel/run leaves out a round whose
#                   probes are off the run's median)
#   calib-*         one CPU-bound job alone vs two at once (user code; and
#                   kernel code: tmpfs mkdir/rmdir), once per boot: what
#                   2 vCPUs give in this bed at all (2.0 = no gain); and
#                   calib-switch-thread-us / -process-us: one context
#                   switch without / with an address-space switch;
#                   calib-pause-us: one PAUSE instruction (the body of a
#                   cpu_relax() spin loop)
#   serial-vcsw, serial-ivcsw: the four writers' context switches in the
#                   serial run
#   parallel-extra-exec-ms: the four writers' CPU in the parallel run
#                   minus in the serial run; parallel-extra-switch-est-ms:
#                   their extra context switches x calib-switch-process-us
#                   (how much of that CPU switching alone would explain)
#
# Lower bounds checked (a figure below them is a measuring bug, or for
# bound-settle and bound-settle-work a broken assumption of theirs; it
# fails):
# every enable >= 100 ms (the kernel's msleep(100)); serial >= the sum of
# its four parts; parallel >= each of its own writes, >= bound-settle and
# >= bound-settle-work;
# every writer's exec CPU > 0 and <= its wall time; tb-pwrite's runs >=
# bound-settle.
N=127
ROUNDS=$(tb_arg rounds || echo 2)
BIND=$(tb_arg bind || echo 16)
D=/sys/bus/pci/devices
NCPU=$(grep -c ^processor /proc/cpuinfo)

# ticks STAT: utime + stime in ms from a /proc/PID/stat line (fields 14
# and 15; USER_HZ is 100 on x86, 10 ms a tick).
ticks() { echo "$1" | awk '{ sub(/^.*\) /, ""); split($0, f, " "); print (f[12] + f[13]) * 10 }'; }
# sched_to FILE: "sum_exec_runtime_ms nr_voluntary_switches
# nr_involuntary_switches" of this shell process into FILE, from
# /proc/self/sched (ms with ns digits).  Builtins only, so /proc/self is
# the shell that calls it; busybox reads a byte per read(), so the loop
# stops at the last line it needs.
sched_to() {
	local k c v ex=- vs=- is=-
	while read -r k c v; do
		case $k in
		se.sum_exec_runtime) ex=$v ;;
		nr_voluntary_switches) vs=$v ;;
		nr_involuntary_switches) is=$v; break ;;
		esac
	done </proc/self/sched
	echo "$ex $vs $is" >"$1"
}
# cpustat_to FILE: "busy_ms idle_ms user_ms system_ms irq_ms" of the whole
# guest, all vCPUs summed, from /proc/stat's cpu line (user nice system
# idle iowait irq softirq steal, USER_HZ ticks; irq_ms is irq + softirq):
# builtins only.
cpustat_to() {
	local c u n s i w q sq st rest
	read -r c u n s i w q sq st rest </proc/stat
	echo "$(( (u + n + s + q + sq + st) * 10 )) $(( (i + w) * 10 )) $(( (u + n) * 10 )) $(( s * 10 ))" \
		"$(( (q + sq) * 10 ))" >"$1"
}
# kthreads_to FILE: "PID sum_exec_runtime_ms" of every kernel thread
# (PF_KTHREAD, 0x200000, in /proc/PID/stat's flags) into FILE, from
# /proc/PID/sched: the CPU that kworkers spend for an enable (kernel
# submission 9 adds a PF's VFs from workers), which the writers' own
# figures miss.  Runtime, not /proc/stat's tick samples (a running
# thread's can lag by a tick, as the writers').  What kernel threads do
# anyway in a window is measured apart (kthread-base below).  Outside the
# timed windows (it reads two files per kernel thread); builtins only.
# Non-zero when it found none.
kthreads_to() {
	local out=$1 d line
	: >"$out"
	for d in /proc/[0-9]*; do
		read -r line 2>/dev/null <"$d/stat" || continue
		# after the comm: state ppid pgrp session tty_nr tpgid flags
		set -- ${line##*) }
		[ $# -ge 7 ] && [ $(( $7 & 0x200000 )) -ne 0 ] || continue
		kthread_exec "$d" "${d#/proc/}" >>"$out"
	done
	[ -s "$out" ]
}
kthread_exec() {  # kthread_exec DIR PID: "PID ms" from DIR/sched
	local k c v
	while read -r k c v; do
		case $k in se.sum_exec_runtime) echo "$2 $v"; return ;; esac
	done 2>/dev/null <"$1/sched"
}
# kthreads_ms A B: the kernel threads' CPU between kthreads_to files A and
# B, ms (a thread started in between counts from 0, as does a PID whose
# runtime went down, a new thread on a reused PID; one that ended is lost:
# kworkers end after minutes idle)
kthreads_ms() {
	awk 'FILENAME == ARGV[1] { a[$1] = $2; next }
		{ d = $2 - (($1 in a) ? a[$1] : 0); s += (d < 0) ? $2 : d } END { printf "%.1f", s }' "$1" "$2"
}
# ipis_to FILE: "RES CAL TLB LOC" of the whole guest into FILE, from
# /proc/interrupts (rescheduling, function call and TLB shootdown IPIs,
# local timer interrupts; x86 also sends remote TLB shootdowns as
# function calls, so CAL includes them), all CPUs summed: builtins only.
ipis_to() {
	local k rest w n res=0 cal=0 tlb=0 loc=0
	while read -r k rest; do
		case $k in RES:|CAL:|TLB:|LOC:) ;; *) continue ;; esac
		n=0
		for w in $rest; do
			case $w in *[!0-9]*) break ;; esac
			n=$((n + w))
		done
		case $k in RES:) res=$n ;; CAL:) cal=$n ;; TLB:) tlb=$n ;; LOC:) loc=$n ;; esac
	done </proc/interrupts
	echo "$res $cal $tlb $loc" >"$1"
}
# ipi_figures NAME A B: the IPI and timer counts of window NAME (ipis_to
# files A and B) as figures NAME-ipi-res, -cal, -tlb, -loc
ipi_figures() {
	local k=1 n
	for n in res cal tlb loc; do
		tb_figure "$1-ipi-$n" "$(cat "$2" "$3" | awk -v k=$k 'NR == 1 { a = $k } NR == 2 { print $k - a }')" n
		k=$((k + 1))
	done
}
# ms_between A B: ms from tb_clock_to file A to tb_clock_to file B
ms_between() { cat "$1" "$2" | awk 'NR == 1 { a = $1 } NR == 2 { if ($1 == "-") print "-"; else printf "%.1f", ($1 - a) / 1e6 }'; }
# enable PF N OUT: writes N to PF's sriov_numvfs from a subshell, leaving
# raw readings in OUT.* for result (below): /proc/self/stat and
# /proc/self/sched before and after the write and the clock around it.
# The kernel adds the VFs in the writer's context; busybox's read, echo and
# the sched_to loop are builtins, so /proc/self is the subshell and the
# write is its own, and the clock and CPU readings are builtins too
# (tb_clock_to, sched_to): four writers at once compete with nothing of the
# bench's but their forks and those readings.  A failed write leaves "-"
# as its end time, so result gives no wall time for it.
enable() { timed_write "$D/$1/sriov_numvfs" "$2" "$3"; }
# timed_write FILE VALUE OUT: enable's subshell for any FILE (the null run
# writes to /dev/null)
timed_write() {
	(
		local s0 s1
		tb_clock_to "$3.c0"
		read -r s0 </proc/self/stat
		sched_to "$3.s0"
		echo "$2" >"$1" || { echo - >"$3.c1"; exit 1; }
		sched_to "$3.s1"
		read -r s1 </proc/self/stat
		tb_clock_to "$3.c1"
		echo "$s0" >"$3.p0"
		echo "$s1" >"$3.p1"
	)
}
# result OUT: from enable's readings, OUT gets "wall_ms cpu_ms exec_ms vcsw
# ivcsw": the write's wall time, the writer's CPU in it in ticks (utime +
# stime) and in se.sum_exec_runtime ms, and its voluntary and involuntary
# context switches.
result() {
	echo "$(ms_between "$1.c0" "$1.c1") $(( $(ticks "$(cat "$1.p1")") - $(ticks "$(cat "$1.p0")") ))" \
		"$(cat "$1.s0" "$1.s1" | awk 'NR == 1 { e = $1; v = $2; i = $3 }
			NR == 2 { printf "%.1f %d %d", $1 - e, $2 - v, $3 - i }')" >"$1"
}
disable_all() {
	local pf
	for pf in $pfs; do echo 0 >"$D/$pf/sriov_numvfs" || return 1; done
}
bind_pf() {  # bind_pf PF: BIND of its VFs to vfio-pci; non-zero on a failure
	local v
	for v in $(tb_vfs "$1" | head -n "$BIND"); do tb_bind_vfio "$v" || return 1; done
}
unbind_all() {
	local pf v
	for pf in $pfs; do
		for v in $(tb_vfs "$pf" | head -n "$BIND"); do
			echo "$v" >/sys/bus/pci/drivers/vfio-pci/unbind 2>/dev/null
			echo >"$D/$v/driver_override"
		done
	done
}
f1() { cut -d' ' -f1 "$1"; }
f2() { cut -d' ' -f2 "$1"; }
f3() { cut -d' ' -f3 "$1"; }
# sumf K FILE...: sum of field K over the files; maxf K FILE...: largest
sumf() { local k=$1; shift; cat "$@" | awk -v k="$k" '{ s += $k } END { printf "%.1f", s }'; }
maxf() { local k=$1; shift; cat "$@" | awk -v k="$k" 'NR == 1 || $k + 0 > m { m = $k + 0 } END { printf "%.1f", m }'; }
# cpudiff A B FIELD: field FIELD (1 busy, 2 idle) of cpustat B minus A, ms
cpudiff() { cat "$1" "$2" | awk -v k="$3" 'NR == 1 { a = $k } NR == 2 { print $k - a }'; }
# check_exec WHAT FILE: the write has a wall time, and the writer's CPU
# in it is > 0 and <= that wall time (above it is a measuring bug)
check_exec() {
	tb_check "$1: writer CPU $(f3 "$2") ms > 0 and <= wall $(f1 "$2") ms" \
		awk -v c="$(f3 "$2")" -v w="$(f1 "$2")" 'BEGIN { exit !(w != "-" && c + 0 > 0 && c + 0 <= w + 0.5) }'
}
# spread CLOCKFILE...: ms from the earliest to the latest tb_clock_to reading
spread() { cat "$@" | awk 'NR == 1 || $1 < lo { lo = $1 } $1 > hi { hi = $1 } END { printf "%.1f", (hi - lo) / 1e6 }'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b + 0 > a + 0) ? b : a }'; }

# What two vCPUs give this bed at all, kernel and user code: one job alone
# vs two at once, wall ms (calib-*).  user: an awk loop; kernel: 2000
# mkdir+rmdir of a tmpfs directory (dentry and inode allocations).
job_user() { awk 'BEGIN { for (i = 0; i < 300000; i++) s += i }'; }
job_kernel() {
	local i=0
	mkdir -p "/tmp/calib-$1"
	while [ $i -lt 2000 ]; do mkdir "/tmp/calib-$1/d" && rmdir "/tmp/calib-$1/d"; i=$((i + 1)); done
}
# speed_probe NAME: the host's speed now, as the wall ms of a short user
# code loop run alone, the fastest of three (figure NAME).  The machine the
# bed runs on can be slowed by other tenants (no steal time is reported):
# the same loop took 1269 ms in one VM and 1884 ms in the next of one bench
# run.  Single loops also ran 40-55% slower at the same points of both VMs
# of another run (round 1's start and middle, right after other work of
# the guest's: its deferred work, presumably, not the host); the fastest
# of three leaves such a spike out and still sees a host that stays slow.
# Taken at the start, middle and end of every round;
# bench/sriov-parallel/run compares them across rounds and VMs.
speed_probe() {
	local t0 i ms best=
	for i in 1 2 3; do
		t0=$(tb_us)
		awk 'BEGIN { for (i = 0; i < 60000; i++) s += i }'
		ms=$(tb_elapsed_ms "$t0" "$(tb_us)")
		best=$(awk -v a="${best:-$ms}" -v b="$ms" 'BEGIN { print (b + 0 < a + 0) ? b : a }')
	done
	tb_figure "$1" "$best" ms
}
# calib-switch-{thread,process}-us: one context switch between two tasks
# pinned to one vCPU (tb-switch: a pipe ping-pong), threads of one process
# vs two processes (each switch loads another page table); under TCG the
# second may cost far more than on hardware.  SWITCH_US keeps the process
# figure for the switch estimate of each round.
calibrate() {
	local k t0 one two
	for k in thread process; do
		tb-switch "$k" 2000 >/tmp/switch-$k || tb_check "tb-switch $k runs" false
		tb_figure "calib-switch-$k-us" "$(cut -d' ' -f3 /tmp/switch-$k)" us
	done
	SWITCH_US=$(cut -d' ' -f3 /tmp/switch-process)
	# one PAUSE (a cpu_relax() spin iteration), with the host's count of
	# the vCPU's exits from TCG's loop around it (calib-pause-vcpu-exits
	# in hostfigures: about 200000 if every PAUSE leaves the loop)
	tb_hostsample begin calib-pause
	tb-switch pause 200000 >/tmp/pause || tb_check "tb-switch pause runs" false
	tb_hostsample end calib-pause
	tb_figure calib-pause-us "$(cut -d' ' -f3 /tmp/pause)" us
	for k in user kernel; do
		t0=$(tb_us); job_$k a; one=$(tb_elapsed_ms "$t0" "$(tb_us)")
		t0=$(tb_us); job_$k a & job_$k b & wait; two=$(tb_elapsed_ms "$t0" "$(tb_us)")
		tb_figure "calib-$k-one-ms" "$one" ms
		tb_figure "calib-$k-two-ms" "$two" ms
		tb_figure "calib-$k-two-over-one" "$(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.3f", a / b }')" x
	done
}

stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	tb_set_autoprobe 0
	calibrate
	echo "4 PFs x $N VFs, $NCPU vCPUs, $ROUNDS rounds, $BIND vfio-pci binds per PF" | tb_info
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		speed_probe "r$r-speed-begin-ms"
		# one VF of each PF alone: its writer CPU bounds what an enable does
		# before the settle sleep (bound-settle)
		for pf in $pfs; do
			enable "$pf" 1 /tmp/one-$pf || tb_check "round $r: $pf: writing 1 to sriov_numvfs" false
			result /tmp/one-$pf
			echo 0 >"$D/$pf/sriov_numvfs"
		done
		onecpu=$(maxf 3 $(for pf in $pfs; do echo /tmp/one-$pf; done))
		tb_figure "r$r-one-vf-cpu-ms" "$onecpu" ms

		# each PF alone
		slowest=0 cpusum=0 i=0
		for pf in $pfs; do
			i=$((i + 1))
			kthreads_to /tmp/kt-alone0-$pf
			tb_hostsample begin r$r-alone-$i
			enable "$pf" $N /tmp/alone-$pf || tb_check "round $r: $pf alone: writing $N to sriov_numvfs" false
			tb_hostsample end r$r-alone-$i
			kthreads_to /tmp/kt-alone1-$pf
			result /tmp/alone-$pf
			tb_check "round $r: $pf alone: $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
			tb_check_ge "round $r: $pf alone" "$(f1 /tmp/alone-$pf)" $TB_ENABLE_MIN_MS "the kernel's msleep(100)"
			check_exec "round $r: $pf alone" /tmp/alone-$pf
			tb_figure "r$r-alone-$pf-ms" "$(f1 /tmp/alone-$pf)" ms
			tb_figure "r$r-alone-$pf-cpu-ms" "$(f2 /tmp/alone-$pf)" ms
			tb_figure "r$r-alone-$pf-exec-ms" "$(f3 /tmp/alone-$pf)" ms
			slowest=$(max "$slowest" "$(f1 /tmp/alone-$pf)")
			cpusum=$((cpusum + $(f2 /tmp/alone-$pf)))
			echo 0 >"$D/$pf/sriov_numvfs"
		done
		# kthread-base: the kernel threads' CPU in a window like the
		# others' (snapshots around the host's two samples, after a
		# disable) with no write in it: their background and the last
		# disable's deferred work, taken off each window's figure below
		kthreads_to /tmp/kt-base0 || tb_check "round $r: kernel threads found in /proc" false
		tb_hostsample begin r$r-kbase
		tb_hostsample end r$r-kbase
		kthreads_to /tmp/kt-base1
		kbase=$(kthreads_ms /tmp/kt-base0 /tmp/kt-base1)
		tb_figure "r$r-kthread-base-ms" "$kbase" ms
		alonefiles=$(for pf in $pfs; do echo /tmp/alone-$pf; done)
		execsum=$(sumf 3 $alonefiles)
		bound=$(max "$slowest" "$(awk -v c="$cpusum" -v n="$NCPU" 'BEGIN { printf "%.1f", c / n }')")
		tb_figure "r$r-slowest-alone-ms" "$slowest" ms
		tb_figure "r$r-cpu-sum-ms" "$cpusum" ms
		tb_figure "r$r-exec-sum-ms" "$execsum" ms
		tb_figure "r$r-bound-ms" "$bound" ms

		# PF after PF
		# (the four writers' forks, reads and writes between the two
		# /proc/stat reads)
		kthreads_to /tmp/kt-ser0
		tb_hostsample begin r$r-serial
		ipis_to /tmp/ipi-ser0
		cpustat_to /tmp/st-ser0
		tb_clock_to /tmp/ser-c0
		for pf in $pfs; do
			enable "$pf" $N /tmp/ser-$pf || tb_check "round $r: serial: $pf's write" false
		done
		tb_clock_to /tmp/ser-c1
		cpustat_to /tmp/st-ser1
		ipis_to /tmp/ipi-ser1
		tb_hostsample end r$r-serial
		kthreads_to /tmp/kt-ser1
		ipi_figures r$r-serial /tmp/ipi-ser0 /tmp/ipi-ser1
		serial=$(ms_between /tmp/ser-c0 /tmp/ser-c1)
		for pf in $pfs; do result /tmp/ser-$pf; done
		parts=$(for pf in $pfs; do f1 /tmp/ser-$pf; done)
		tb_check_serial "round $r: 4x$N PF after PF" "$serial" $parts
		tb_figure "r$r-serial-ms" "$serial" ms
		c=0; for pf in $pfs; do c=$((c + $(f2 /tmp/ser-$pf))); check_exec "round $r: serial $pf" /tmp/ser-$pf; done
		tb_figure "r$r-serial-cpu-ms" "$c" ms
		serfiles=$(for pf in $pfs; do echo /tmp/ser-$pf; done)
		tb_figure "r$r-serial-exec-ms" "$(sumf 3 $serfiles)" ms
		tb_figure "r$r-serial-vcsw" "$(sumf 4 $serfiles)" n
		tb_figure "r$r-serial-ivcsw" "$(sumf 5 $serfiles)" n
		# bound-settle: per PF the smaller of its lone CPU figures and wall
		# times (alone, serial part); see the header
		minsum=$(for pf in $pfs; do cat /tmp/alone-$pf /tmp/ser-$pf | awk 'NR == 1 { c = $3; w = $1 }
			NR == 2 { if ($3 < c) c = $3; if ($1 < w) w = $1; print w, c }'; done |
			awk '{ if ($1 > w) w = $1; c += $2 } END { printf "%.1f %.1f", w, c }')
		bsettle=$(echo "$minsum" | awk -v s="$TB_ENABLE_MIN_MS" -v o="$onecpu" -v n="$NCPU" '{
			x = $2 - 4 * o; if (x < 0) x = 0; x = s + x / n; printf "%.1f", ($1 > x) ? $1 : x }')
		tb_figure "r$r-bound-settle-ms" "$bsettle" ms
		serbusy=$(cpudiff /tmp/st-ser0 /tmp/st-ser1 1)
		tb_figure "r$r-serial-sys-busy-ms" "$serbusy" ms
		tb_figure "r$r-serial-sys-idle-ms" "$(cpudiff /tmp/st-ser0 /tmp/st-ser1 2)" ms
		bsettlesys=$(max "$slowest" "$(awk -v s="$TB_ENABLE_MIN_MS" -v c="$serbusy" -v o="$onecpu" -v n="$NCPU" \
			'BEGIN { w = c - 4 * o; if (w < 0) w = 0; printf "%.1f", s + w / n }')")
		tb_figure "r$r-bound-settle-sys-ms" "$bsettlesys" ms
		boundsys=$(max "$slowest" "$(awk -v c="$serbusy" -v n="$NCPU" 'BEGIN { printf "%.1f", c / n }')")
		tb_figure "r$r-bound-sys-ms" "$boundsys" ms
		# the same four subshells writing to /dev/null instead: what the
		# bench itself costs the guest in a serial run (forks, readings)
		kthreads_to /tmp/kt-nul0
		cpustat_to /tmp/st-nul0
		for pf in $pfs; do timed_write /dev/null $N /tmp/nul-$pf; done
		cpustat_to /tmp/st-nul1
		kthreads_to /tmp/kt-nul1
		tb_figure "r$r-serial-null-sys-busy-ms" "$(cpudiff /tmp/st-nul0 /tmp/st-nul1 1)" ms
		tb_figure "r$r-serial-null-kthread-exec-ms" "$(kthreads_ms /tmp/kt-nul0 /tmp/kt-nul1)" ms
		# bound-work, bound-settle-work: bound and bound-settle with the
		# enables' whole CPU, the writers' and the kernel threads' (runtime,
		# unlike bound-sys's ticks, and no fork of the bench's), each
		# window's kernel-thread figure less kthread-base; the smaller of
		# the four alone (summed) and the serial run
		alonek=$(for pf in $pfs; do kthreads_ms /tmp/kt-alone0-$pf /tmp/kt-alone1-$pf; echo; done |
			awk -v b="$kbase" '{ x = $1 - b; s += (x > 0) ? x : 0 } END { printf "%.1f", s }')
		serk=$(awk -v k="$(kthreads_ms /tmp/kt-ser0 /tmp/kt-ser1)" -v b="$kbase" \
			'BEGIN { x = k - b; printf "%.1f", (x > 0) ? x : 0 }')
		tb_figure "r$r-alone-kthread-exec-ms" "$alonek" ms
		tb_figure "r$r-serial-kthread-exec-ms" "$serk" ms
		worksum=$(awk -v a="$execsum" -v ak="$alonek" -v s="$(sumf 3 $serfiles)" -v sk="$serk" \
			'BEGIN { x = a + ak; y = s + sk; printf "%.1f", (y < x) ? y : x }')
		tb_figure "r$r-work-sum-ms" "$worksum" ms
		boundwork=$(max "$slowest" "$(awk -v c="$worksum" -v n="$NCPU" 'BEGIN { printf "%.1f", c / n }')")
		tb_figure "r$r-bound-work-ms" "$boundwork" ms
		bsettlework=$(echo "$minsum" | awk -v s="$TB_ENABLE_MIN_MS" -v c="$worksum" -v o="$onecpu" -v n="$NCPU" '{
			x = c - 4 * o; if (x < 0) x = 0; x = s + x / n; printf "%.1f", ($1 > x) ? $1 : x }')
		tb_figure "r$r-bound-settle-work-ms" "$bsettlework" ms
		# whether 1.25 x bound can be met at all, per round (above 1.25: no
		# schedule of four writers started at once can meet it)
		tb_figure "r$r-settle-over-bound" "$(awk -v s="$bsettle" -v b="$bound" 'BEGIN { printf "%.3f", s / b }')" x
		tb_figure "r$r-settle-work-over-bound-work" \
			"$(awk -v s="$bsettlework" -v b="$boundwork" 'BEGIN { printf "%.3f", s / b }')" x
		for k in 3 4 5; do
			tb_figure "r$r-serial-sys-$(echo x x user system irq | cut -d' ' -f$k)-ms" "$(cpudiff /tmp/st-ser0 /tmp/st-ser1 $k)" ms
		done
		t0=$(tb_us)
		for pf in $pfs; do bind_pf "$pf" || tb_check "round $r: serial binds of $pf" false; done
		tb_figure "r$r-bind-serial-ms" "$(tb_elapsed_ms "$t0" "$(tb_us)")" ms
		unbind_all
		disable_all || tb_check "round $r: disable after serial" false

		# four writers at once
		speed_probe "r$r-speed-mid-ms"
		kthreads_to /tmp/kt-par0
		tb_hostsample begin r$r-parallel
		ipis_to /tmp/ipi-par0
		cpustat_to /tmp/st-par0
		tb_clock_to /tmp/par-c0
		for pf in $pfs; do enable "$pf" $N /tmp/par-$pf & done
		wait
		tb_clock_to /tmp/par-c1
		cpustat_to /tmp/st-par1
		ipis_to /tmp/ipi-par1
		tb_hostsample end r$r-parallel
		kthreads_to /tmp/kt-par1
		ipi_figures r$r-parallel /tmp/ipi-par0 /tmp/ipi-par1
		parallel=$(ms_between /tmp/par-c0 /tmp/par-c1)
		for pf in $pfs; do result /tmp/par-$pf; done
		for pf in $pfs; do
			tb_check "round $r: parallel: $pf has $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
			tb_check_ge "round $r: 4 writers at once" "$parallel" "$(f1 /tmp/par-$pf)" "$pf's write, part of it"
			tb_check_ge "round $r: $pf's write among four" "$(f1 /tmp/par-$pf)" $TB_ENABLE_MIN_MS "the kernel's msleep(100)"
		done
		tb_check_ge "round $r: 4 writers at once" "$parallel" "$bsettle" "bound-settle: the settle and the writers' CPU on $NCPU vCPUs"
		tb_check_ge "round $r: 4 writers at once" "$parallel" "$bsettlework" \
			"bound-settle-work: the settle and the writers' and kernel threads' CPU on $NCPU vCPUs"
		tb_figure "r$r-parallel-ms" "$parallel" ms
		c=0; for pf in $pfs; do c=$((c + $(f2 /tmp/par-$pf))); check_exec "round $r: parallel $pf" /tmp/par-$pf; done
		tb_figure "r$r-parallel-cpu-ms" "$c" ms
		parfiles=$(for pf in $pfs; do echo /tmp/par-$pf; done)
		tb_figure "r$r-parallel-exec-ms" "$(sumf 3 $parfiles)" ms
		park=$(awk -v k="$(kthreads_ms /tmp/kt-par0 /tmp/kt-par1)" -v b="$kbase" \
			'BEGIN { x = k - b; printf "%.1f", (x > 0) ? x : 0 }')
		tb_figure "r$r-parallel-kthread-exec-ms" "$park" ms
		parwork=$(awk -v a="$(sumf 3 $parfiles)" -v k="$park" 'BEGIN { printf "%.1f", a + k }')
		tb_figure "r$r-parallel-work-exec-ms" "$parwork" ms
		# work-sum takes the enables to need no less CPU among four than
		# alone or one after another: this ratio shows whether they did
		tb_figure "r$r-parallel-work-over-work-sum" "$(awk -v p="$parwork" -v w="$worksum" 'BEGIN { printf "%.3f", p / w }')" x
		tb_figure "r$r-parallel-start-spread-ms" "$(spread $(for pf in $pfs; do echo /tmp/par-$pf.c0; done))" ms
		tb_figure "r$r-parallel-end-spread-ms" "$(spread $(for pf in $pfs; do echo /tmp/par-$pf.c1; done))" ms
		tb_figure "r$r-parallel-vcsw" "$(sumf 4 $parfiles)" n
		tb_figure "r$r-parallel-ivcsw" "$(sumf 5 $parfiles)" n
		# the writers' CPU beyond the serial run's, and what their extra
		# switches would cost at calib-switch-process-us each (a writer
		# pays for the page-table load and the cold TLB after it)
		tb_figure "r$r-parallel-extra-exec-ms" "$(awk -v p="$(sumf 3 $parfiles)" -v s="$(sumf 3 $serfiles)" \
			'BEGIN { printf "%.1f", p - s }')" ms
		tb_figure "r$r-parallel-extra-switch-est-ms" "$(cat $parfiles $serfiles | awk -v u="$SWITCH_US" \
			'NR <= 4 { p += $4 + $5 } NR > 4 { s += $4 + $5 } END { printf "%.1f", (p - s) * u / 1000 }')" ms
		paridle=$(cpudiff /tmp/st-par0 /tmp/st-par1 2)
		tb_figure "r$r-parallel-sys-busy-ms" "$(cpudiff /tmp/st-par0 /tmp/st-par1 1)" ms
		tb_figure "r$r-parallel-sys-idle-ms" "$paridle" ms
		for k in 3 4 5; do
			tb_figure "r$r-parallel-sys-$(echo x x user system irq | cut -d' ' -f$k)-ms" "$(cpudiff /tmp/st-par0 /tmp/st-par1 $k)" ms
		done
		tb_figure "r$r-parallel-idle-beyond-settle-ms" "$((paridle - NCPU * TB_ENABLE_MIN_MS))" ms
		t0=$(tb_us)
		for pf in $pfs; do bind_pf "$pf" >/tmp/bind-$pf 2>&1 & done
		wait
		tb_figure "r$r-bind-parallel-ms" "$(tb_elapsed_ms "$t0" "$(tb_us)")" ms
		for pf in $pfs; do
			n=0
			for v in $(tb_vfs "$pf" | head -n "$BIND"); do [ "$(tb_driver_of "$v")" = vfio-pci ] && n=$((n + 1)); done
			tb_check "round $r: parallel binds: $BIND VFs of $pf on vfio-pci" test $n -eq "$BIND"
		done
		unbind_all
		disable_all || tb_check "round $r: disable after parallel" false
		# The same four writers with nothing but the write (no clock or
		# CPU readings in the subshells): wall from the parent, the
		# guest's busy time from /proc/stat; what the writers' own
		# readings cost when four run at once.
		tb_hostsample begin r$r-bare
		cpustat_to /tmp/st-bare0
		tb_clock_to /tmp/bare-c0
		for pf in $pfs; do (echo $N >"$D/$pf/sriov_numvfs") & done
		wait
		tb_clock_to /tmp/bare-c1
		cpustat_to /tmp/st-bare1
		tb_hostsample end r$r-bare
		for pf in $pfs; do
			tb_check "round $r: bare writers: $pf has $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
		done
		tb_figure "r$r-bare-ms" "$(ms_between /tmp/bare-c0 /tmp/bare-c1)" ms
		tb_figure "r$r-bare-sys-busy-ms" "$(cpudiff /tmp/st-bare0 /tmp/st-bare1 1)" ms
		disable_all || tb_check "round $r: disable after the bare writers" false

		# The same four enables from tb-pwrite's writers, started at one
		# barrier: threads of one process (no page-table load when one
		# writer follows another on a vCPU) and processes (one at every
		# such switch, as the shell's writers): the same kernel work, so
		# the CPU difference is what switching address spaces costs here.
		# The order alternates over rounds.
		modes="thread process"
		[ $((r % 2)) -eq 0 ] && modes="process thread"
		for mode in $modes; do
			rm -f /tmp/pw-$mode
			tb_hostsample begin r$r-pw-$mode
			ipis_to /tmp/ipi-pw0
			tb-pwrite $mode $(for pf in $pfs; do echo "$D/$pf/sriov_numvfs=$N"; done) >/tmp/pw-$mode ||
				tb_check "round $r: tb-pwrite $mode: the four writes" false
			ipis_to /tmp/ipi-pw1
			tb_hostsample end r$r-pw-$mode
			ipi_figures r$r-pw-$mode /tmp/ipi-pw0 /tmp/ipi-pw1
			for pf in $pfs; do
				tb_check "round $r: tb-pwrite $mode: $pf has $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
			done
			tail -n 1 /tmp/pw-$mode >/tmp/pw-$mode.total
			read -r x pw pc pv pi </tmp/pw-$mode.total
			if [ "$x" != total ]; then
				# a failed write: no figures of that run
				tb_check "round $r: tb-pwrite $mode printed its total" false
				disable_all || tb_check "round $r: disable after tb-pwrite $mode" false
				continue
			fi
			tb_check_ge "round $r: tb-pwrite $mode" "$pw" "$bsettle" "bound-settle"
			tb_figure "r$r-pw-$mode-ms" "$pw" ms
			tb_figure "r$r-pw-$mode-exec-ms" "$pc" ms
			tb_figure "r$r-pw-$mode-vcsw" "$pv" n
			tb_figure "r$r-pw-$mode-ivcsw" "$pi" n
			disable_all || tb_check "round $r: disable after tb-pwrite $mode" false
		done
		pt=$(tail -n 1 /tmp/pw-thread | awk '$1 == "total" { print $3 }')
		pp=$(tail -n 1 /tmp/pw-process | awk '$1 == "total" { print $3 }')
		[ -n "$pt" ] && [ -n "$pp" ] &&
		tb_figure "r$r-pw-process-exec-over-thread-exec" "$(awk -v a="$pp" -v b="$pt" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')" x
		[ -n "$pt" ] &&
		tb_figure "r$r-pw-thread-exec-over-serial-exec" "$(awk -v a="$pt" -v b="$(sumf 3 $serfiles)" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')" x
		ptw=$(tail -n 1 /tmp/pw-thread | awk '$1 == "total" { print $2 }')
		if [ -n "$ptw" ]; then
			tb_figure "r$r-pw-thread-over-bound" "$(awk -v a="$ptw" -v b="$bound" 'BEGIN { printf "%.3f", a / b }')" x
			tb_figure "r$r-pw-thread-over-bound-settle" "$(awk -v a="$ptw" -v b="$bsettle" 'BEGIN { printf "%.3f", a / b }')" x
		fi
		tb_figure "r$r-parallel-over-serial" "$(awk -v p="$parallel" -v s="$serial" 'BEGIN { printf "%.3f", p / s }')" x
		tb_figure "r$r-parallel-over-bound" "$(awk -v p="$parallel" -v b="$bound" 'BEGIN { printf "%.3f", p / b }')" x
		tb_figure "r$r-parallel-over-bound-settle" "$(awk -v p="$parallel" -v b="$bsettle" 'BEGIN { printf "%.3f", p / b }')" x
		tb_figure "r$r-parallel-exec-over-serial-exec" "$(awk -v p="$(sumf 3 $parfiles)" -v s="$(sumf 3 $(for pf in $pfs; do echo /tmp/ser-$pf; done))" 'BEGIN { printf "%.3f", p / s }')" x
		tb_figure "r$r-parallel-over-bound-settle-sys" "$(awk -v p="$parallel" -v b="$bsettlesys" 'BEGIN { printf "%.3f", p / b }')" x
		tb_figure "r$r-parallel-over-bound-sys" "$(awk -v p="$parallel" -v b="$boundsys" 'BEGIN { printf "%.3f", p / b }')" x
		tb_figure "r$r-parallel-over-bound-work" "$(awk -v p="$parallel" -v b="$boundwork" 'BEGIN { printf "%.3f", p / b }')" x
		tb_figure "r$r-parallel-over-bound-settle-work" "$(awk -v p="$parallel" -v b="$bsettlework" 'BEGIN { printf "%.3f", p / b }')" x
		speed_probe "r$r-speed-end-ms"
		r=$((r + 1))
	done
	tb_finish
}
