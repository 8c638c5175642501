# The serial part of SR-IOV enable on a host with many CPUs: the summed
# hold time of the global locks every VF's addition takes exclusively,
# measured on a kernel without lockdep.  The kernel carries
# bench/hold-share/holdstat.patch (never for submission), which sums the
# hold time of iommu_probe_device_lock (/sys/module/mutex/parameters/
# hold_ns, hold_n) and the write holds of sysfs's kernfs_rwsem
# (/sys/module/rwsem/parameters/whold_ns, whold_n).  4 nvme PFs x 127 VFs,
# sriov_drivers_autoprobe 0, ROUNDS rounds (luod_tb.rounds, default 3),
# each:
#
#   serial    the four PFs enabled one after another, each timed alone
#             (guest CLOCK_MONOTONIC) with the counters reset before it:
#             rR-serial-ms (the four writes summed), rR-serial-work-ms (the
#             same minus the kernel's msleep(100) settle of each, which
#             holds no lock: the part CPUs could share), and per lock
#             rR-serial-LOCK-hold-ms and -acq (LOCK: probe-lock, kernfs-w)
#   parallel  the four from four writers at once: rR-parallel-ms and the
#             same hold figures (holds grow when a holder is preempted)
#
# Amdahl: enables of any number of PFs at once on any number of CPUs
# cannot finish sooner than one lock's summed hold, so rR-serial-work-ms /
# rR-serial-LOCK-hold-ms bounds their speed-up over PF after PF
# (rR-LOCK-speedup-bound), provided the rest of the enable can overlap (on
# 7.3 as shipped it cannot: the enable holds pci_rescan_remove_lock
# exclusively throughout, so its bound is 1).  Checked: each enable adds
# its 127 VFs; every VF's addition takes each lock at least once; each
# window ends with as many releases as acquisitions; a lock's summed hold
# is not longer than its window, nor, for one PF's enable, than the window
# minus the settle, which holds neither lock (one holder at a time: a
# longer sum is a counting bug, and fails the bench).  The windows are
# read with builtins only (no fork inside them); the guest's clocksource
# is printed, since each hold includes one clock read at either end.
D=/sys/bus/pci/devices
M=/sys/module/mutex/parameters
R=/sys/module/rwsem/parameters
N=127
SETTLE_MS=100

reset_holds() {
	local f
	for f in $M/hold_ns $M/hold_n $M/hold_acq $R/whold_ns $R/whold_n $R/whold_acq; do echo 0 >"$f"; done
}
# holds_to FILE: "probe_ns probe_releases kernfs_ns kernfs_releases
# probe_acquisitions kernfs_acquisitions"
holds_to() {
	echo "$(cat $M/hold_ns) $(cat $M/hold_n) $(cat $R/whold_ns) $(cat $R/whold_n) $(cat $M/hold_acq) $(cat $R/whold_acq)" >"$1"
}
disable_all() { local pf; for pf in $pfs; do echo 0 >"$D/$pf/sriov_numvfs" || return 1; done; }
# check_window WHAT LIMIT_NS NVF HOLDS_FILE: each lock's summed hold within
# LIMIT_NS (the window, or for one PF's enable the window minus the settle),
# each VF's addition took each lock, every acquisition was released
check_window() {
	local what=$1 limit=$2 nvf=$3 pns pn kns kn pa ka
	read -r pns pn kns kn pa ka <"$4"
	tb_check "$what: iommu_probe_device_lock held $((pns / 1000)) us, not longer than $((limit / 1000)) us" test "$pns" -le "$limit"
	tb_check "$what: kernfs_rwsem written $((kns / 1000)) us, not longer than $((limit / 1000)) us" test "$kns" -le "$limit"
	tb_check "$what: iommu_probe_device_lock taken $pn times for $nvf VFs (at least once a VF)" test "$pn" -ge "$nvf"
	tb_check "$what: kernfs_rwsem written $kn times for $nvf VFs (at least once a VF)" test "$kn" -ge "$nvf"
	tb_check "$what: iommu_probe_device_lock acquired $pa times, released $pn" test "$pa" -eq "$pn"
	tb_check "$what: kernfs_rwsem acquired $ka times for writing, released $kn" test "$ka" -eq "$kn"
}
ms() { awk -v a="$1" 'BEGIN { printf "%.1f", a / 1e6 }'; }

stage1() {
	local rounds r pf a b w sw sp spn sk skn pns pn kns kn pa ka
	pfs=$(tb_pfs_of_kind nvme)
	tb_check "four nvme PFs ($(echo $pfs))" test "$(echo "$pfs" | wc -w)" -eq 4
	tb_check "a bench/hold-share kernel ($M/hold_acq, $R/whold_acq)" test -w $M/hold_acq -a -w $R/whold_acq
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" | tb_info
	for pf in $pfs; do echo 0 >"$D/$pf/sriov_drivers_autoprobe"; done
	rounds=$(tb_arg rounds); rounds=${rounds:-3}
	tb_figure vfs-per-pf $N n
	tb_figure rounds "$rounds" n
	r=1
	while [ $r -le "$rounds" ]; do
		sw=0 sp=0 spn=0 sk=0 skn=0
		for pf in $pfs; do
			sleep 0.5
			reset_holds
			tb_clock_to /tmp/t0
			echo $N >"$D/$pf/sriov_numvfs" || tb_check "round $r: $pf: write $N to sriov_numvfs" false
			tb_clock_to /tmp/t1
			holds_to /tmp/h
			read -r a </tmp/t0
			read -r b </tmp/t1
			w=$((b - a))
			tb_check "round $r: serial: $pf has $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
			check_window "round $r: serial $pf (its window minus the settle)" $((w - SETTLE_MS * 1000000)) $N /tmp/h
			read -r pns pn kns kn pa ka </tmp/h
			sw=$((sw + w)) sp=$((sp + pns)) spn=$((spn + pn)) sk=$((sk + kns)) skn=$((skn + kn))
		done
		tb_figure "r$r-serial-ms" "$(ms $sw)" ms
		tb_figure "r$r-serial-work-ms" "$(ms $((sw - 4 * SETTLE_MS * 1000000)))" ms
		tb_figure "r$r-serial-probe-lock-hold-ms" "$(ms $sp)" ms
		tb_figure "r$r-serial-probe-lock-acq" "$spn" n
		tb_figure "r$r-serial-kernfs-w-hold-ms" "$(ms $sk)" ms
		tb_figure "r$r-serial-kernfs-w-acq" "$skn" n
		tb_figure "r$r-probe-lock-share" "$(awk -v h="$sp" -v w="$((sw - 4 * SETTLE_MS * 1000000))" 'BEGIN { printf "%.3f", h / w }')" n
		tb_figure "r$r-kernfs-w-share" "$(awk -v h="$sk" -v w="$((sw - 4 * SETTLE_MS * 1000000))" 'BEGIN { printf "%.3f", h / w }')" n
		tb_figure "r$r-probe-lock-speedup-bound" "$(awk -v h="$sp" -v w="$((sw - 4 * SETTLE_MS * 1000000))" 'BEGIN { printf "%.2f", w / h }')" x
		tb_figure "r$r-kernfs-w-speedup-bound" "$(awk -v h="$sk" -v w="$((sw - 4 * SETTLE_MS * 1000000))" 'BEGIN { printf "%.2f", w / h }')" x
		disable_all || tb_check "round $r: disable after serial" false
		sleep 2
		reset_holds
		tb_clock_to /tmp/t0
		for pf in $pfs; do ( echo $N >"$D/$pf/sriov_numvfs" ) & done
		wait
		tb_clock_to /tmp/t1
		holds_to /tmp/h
		read -r a </tmp/t0
		read -r b </tmp/t1
		for pf in $pfs; do
			tb_check "round $r: parallel: $pf has $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
		done
		check_window "round $r: parallel" $((b - a)) $((4 * N)) /tmp/h
		read -r pns pn kns kn pa ka </tmp/h
		tb_figure "r$r-parallel-ms" "$(ms $((b - a)))" ms
		tb_figure "r$r-parallel-probe-lock-hold-ms" "$(ms "$pns")" ms
		tb_figure "r$r-parallel-probe-lock-acq" "$pn" n
		tb_figure "r$r-parallel-kernfs-w-hold-ms" "$(ms "$kns")" ms
		tb_figure "r$r-parallel-kernfs-w-acq" "$kn" n
		disable_all || tb_check "round $r: disable after parallel" false
		sleep 2
		r=$((r + 1))
	done
	tb_finish
}
