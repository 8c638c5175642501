# SR-IOV enable against hot-unplug: ITER rounds (luod_tb.iter=N, default
# 10; hotplug-sriov-lockdep: 100 on a PROVE_LOCKING kernel).  In round r,
# PF (r-1) mod 4 is the victim.  The other three PFs start enabling 32
# VFs each from three writers; then the victim is removed (odd rounds: its
# own "remove" attribute; even rounds: its parent root port's) while a
# fourth writer enables 32 VFs on the victim itself, started 0.1 s after
# the removal in rounds 1-4, 9-12, ... and 0.1 s before it in rounds 5-8,
# 13-16, ... (then it must succeed, and the PF is removed with its VFs);
# then /sys/bus/pci/rescan brings the victim back.
#
# The first ordering is the one that deadlocks a kernel whose
# sriov_numvfs_store() takes pci_rescan_remove_lock inside the PF's device
# lock (Linux 7.3): the remover waits for the lock, queued behind the
# other PFs' enables, while the victim's writer holds the victim's device
# lock and queues behind the remover; the remover then needs that device
# lock to release the victim's driver.  Lockdep does not see it (device
# locks are not validated); the bounded wait below does.  (A store that
# waited for the lock with its sriov_numvfs attribute active would
# deadlock with the removal's drain of that attribute instead; the fix
# breaks the active protection first.)
#
# Checked each round: every writer and the remover finish within 180 s
# (else their kernel stacks are printed and the run fails); the three
# other PFs have their 32 VFs; the victim's write either enabled its VFs
# before the removal or failed (ENODEV); after the rescan the victim is
# back, bound to nvme, with no VFs; no VF of a removed PF is left; no
# lockdep, WARN or BUG report in the round's kernel log.  Then all VFs are
# disabled from four writers.  With lockdep in the kernel
# (/proc/lockdep_stats), it is on at the start and still on at the end.
N=32
ITER=$(tb_arg iter || echo 10)
BOUND=180
SPLAT='possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|irq lock inversion|unsafe locking scenario|bad unlock balance|held lock freed|lock held when returning|DEBUG_LOCKS_WARN_ON|lockdep is turned off|turning off the locking correctness validator|too low!|BUG:|WARNING:|Oops|Call Trace|blocked for more than'
D=/sys/bus/pci/devices

lockdep_stat() { awk -v k="$1:" '$1 == k { print $2; exit }' /proc/lockdep_stats; }
kmsg_clean() {  # the kernel log since the last call has no report; else /tmp/splat.txt
	dmesg -c >/tmp/kmsg.round
	grep -Eq "$SPLAT" /tmp/kmsg.round || return 0
	grep -E -B 5 -A 150 "$SPLAT" /tmp/kmsg.round | head -n 600 >/tmp/splat.txt
	return 1
}
show_splat() { echo "luod-tb: the kernel's report:" >/dev/console; cat /tmp/splat.txt >/dev/console; }
vfs_of() { tb_count_vfs "$1"; }
port_of() { basename "$(dirname "$(readlink -f "$D/$1")")"; }  # the PF's root port

# Waits for the processes $@ for at most BOUND s; non-zero, with each
# blocked process's kernel stack on the console, if one is still running.
wait_bounded() {
	local end=$(( $(date +%s) + BOUND )) p left
	while :; do
		left=
		for p in "$@"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
		[ -z "$left" ] && return 0
		[ "$(date +%s)" -ge "$end" ] && break
		sleep 0.2
	done
	for p in $left; do
		echo "luod-tb: pid $p ($(cat /proc/$p/cmdline 2>/dev/null | tr '\0' ' ')) blocked; kernel stack:" >/dev/console
		sed 's/^/    /' /proc/$p/stack >/dev/console 2>&1
	done
	return 1
}

stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	lockdep=0
	if [ -e /proc/lockdep_stats ]; then
		lockdep=1
		tb_check "lockdep is on (/proc/lockdep_stats debug_locks 1)" test "$(lockdep_stat debug_locks)" = 1
	fi
	for pf in $pfs; do
		tb_check "$pf sits on a root port ($(port_of "$pf"))" test -e "$D/$(port_of "$pf")/pci_bus"
	done
	if ! kmsg_clean; then
		tb_check "boot: no lockdep/WARN/BUG report in the kernel log" false
		show_splat; tb_finish; return
	fi
	echo "$ITER rounds, lockdep $lockdep: 3 PFs enable $N VFs each while the 4th (or its root port) is removed and rescanned" | tb_info
	r=1 clean=0 hung=0 victim_enabled=0 victim_refused=0 tstart=$(tb_us)
	while [ "$r" -le "$ITER" ]; do
		bad=0
		for pf in $pfs; do echo 0 >$D/$pf/sriov_drivers_autoprobe; done
		set -- $pfs
		shift $(( (r - 1) % 4 ))
		victim=$1
		others=$(echo $pfs | tr ' ' '\n' | grep -v "^$victim\$" | tr '\n' ' ')
		if [ $((r % 2)) -eq 1 ]; then what=PF target=$victim; else what="root port"; target=$(port_of "$victim"); fi
		# rounds 1-4, 9-12, ...: the removal queues before the victim's
		# own enable; rounds 5-8, 13-16, ...: after it, so a PF with VFs
		# being enabled (then enabled) is removed.
		if [ $(( (r - 1) / 4 % 2 )) -eq 0 ]; then order=remove-first; else order=enable-first; fi
		t0=$(tb_us)
		pids=
		for pf in $others; do echo $N >$D/$pf/sriov_numvfs & pids="$pids $!"; done
		sleep 0.1
		if [ $order = remove-first ]; then
			echo 1 >$D/$target/remove & rm_pid=$!
			sleep 0.1
			(echo $N >$D/$victim/sriov_numvfs) 2>/tmp/victim.err & vpid=$!
		else
			(echo $N >$D/$victim/sriov_numvfs) 2>/tmp/victim.err & vpid=$!
			sleep 0.1
			echo 1 >$D/$target/remove & rm_pid=$!
		fi
		if ! wait_bounded $pids $rm_pid $vpid; then
			tb_check "round $r: the enables and the removal of $what $target finish within $BOUND s" false
			hung=1
			break
		fi
		rc=0
		for p in $pids; do wait "$p" || rc=1; done
		tb_check "round $r: the other PFs' sriov_numvfs writes succeeded" test $rc -eq 0
		wait "$rm_pid"
		if wait "$vpid"; then
			victim_enabled=$((victim_enabled + 1))
		else
			victim_refused=$((victim_refused + 1))
			# started before the removal, it had the PF to itself
			[ $order = enable-first ] &&
				{ tb_check "round $r: $victim's enable, started before the removal, succeeded ($(cat /tmp/victim.err))" false; bad=1; }
		fi
		for pf in $others; do
			[ "$(vfs_of "$pf")" -eq $N ] ||
				{ tb_check "round $r: $pf has $N VFs (has $(vfs_of "$pf"))" false; bad=1; }
		done
		[ -e "$D/$victim" ] && { tb_check "round $r: $victim is gone after the removal of $what $target" false; bad=1; }
		echo 1 >/sys/bus/pci/rescan
		n=0
		while [ ! -e "$D/$victim/driver" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
		[ "$(tb_driver_of "$victim")" = nvme ] ||
			{ tb_check "round $r: $victim back after the rescan and bound to nvme (driver '$(tb_driver_of "$victim")')" false; bad=1; }
		[ "$(cat $D/$victim/sriov_numvfs 2>/dev/null)" = 0 ] ||
			{ tb_check "round $r: $victim has sriov_numvfs 0 after the rescan" false; bad=1; }
		set -- $D/*/physfn
		nvf=0; [ -e "$1" ] && nvf=$#
		[ "$nvf" -eq $((3 * N)) ] ||
			{ tb_check "round $r: $((3 * N)) VFs in the system (have $nvf): none of the removed PF's is left" false; bad=1; }
		t1=$(tb_us)
		tb_write_numvfs_all 0 parallel || { tb_check "round $r: disabling all VFs" false; bad=1; }
		set -- $D/*/physfn
		[ -e "$1" ] && { tb_check "round $r: no VFs after the disable (have $#)" false; bad=1; }
		if ! kmsg_clean; then
			tb_check "round $r (removed $what $target): no lockdep/WARN/BUG report in the kernel log" false
			show_splat
			bad=1
		fi
		tb_figure "round-$r-ms" "$(tb_elapsed_ms "$t0" "$t1")" ms
		[ $bad -eq 0 ] || break
		clean=$r
		r=$((r + 1))
	done
	tb_check "$ITER rounds ran, all clean ($clean clean)" test "$clean" -eq "$ITER"
	tb_figure rounds "$clean" rounds
	tb_figure victim-enabled "$victim_enabled" rounds
	tb_figure victim-refused "$victim_refused" rounds
	tb_figure total-s "$(( ($(tb_us) - tstart) / 1000000 ))" s
	if [ $hung -eq 0 ] && [ $lockdep -eq 1 ]; then
		tb_check "lockdep still on at the end (/proc/lockdep_stats debug_locks 1)" test "$(lockdep_stat debug_locks)" = 1
	fi
	tb_finish
}
