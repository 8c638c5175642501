# SR-IOV enable of 4 nvme PFs x 127 VFs (sriov_drivers_autoprobe 0),
# guest CLOCK_MONOTONIC ms and the writer's CPU time (utime + stime of the
# process that writes sriov_numvfs, in which the kernel adds the VFs;
# 10 ms ticks), ROUNDS rounds (luod_tb.rounds, default 2), figures per
# round and their median over rounds (bench/sriov-parallel/run):
#
#   alone-PF        each PF enabled by itself, nothing else running
#   serial          the four PF after PF from one shell
#   parallel        the four from four writers at once
#   bound           max(slowest PF alone, sum of the four PFs' CPU time / 2
#                   vCPUs): no schedule of the four enables on 2 vCPUs can
#                   finish sooner
#   serial-cpu, parallel-cpu: the four writers' CPU time summed, in each mode
#                   (more CPU for the same work in parallel: spinning or
#                   contention)
#   bind-serial, bind-parallel: BIND VFs of each PF (luod_tb.bind, default
#                   16) bound to vfio-pci, PF after PF vs one binder per PF
#                   at once, after the enable
#
#   calib-*         one CPU-bound job alone vs two at once (user code; and
#                   kernel code: tmpfs mkdir/rmdir), once per boot: what
#                   2 vCPUs give in this bed at all (2.0 = no gain)
#
# Lower bounds checked (a figure below them is a measuring bug, it fails):
# every enable >= 100 ms (the kernel's msleep(100)); serial >= the sum of
# its four parts; parallel >= each of its own writes.
N=127
ROUNDS=$(tb_arg rounds || echo 2)
BIND=$(tb_arg bind || echo 16)
D=/sys/bus/pci/devices
NCPU=$(grep -c ^processor /proc/cpuinfo)

# ticks STAT: utime + stime in ms from a /proc/PID/stat line (fields 14
# and 15; USER_HZ is 100 on x86, 10 ms a tick).
ticks() { echo "$1" | awk '{ sub(/^.*\) /, ""); split($0, f, " "); print (f[12] + f[13]) * 10 }'; }
# enable PF N OUT: writes N to PF's sriov_numvfs from a subshell; OUT gets
# "wall_ms cpu_ms", the CPU time that subshell spent in the write (the
# kernel adds the VFs in the writer's context).  busybox's read and echo are
# builtins, so /proc/self is the subshell and the write is its own.
enable() {
	local s0 s1 t0 t1
	(
		read -r s0 </proc/self/stat
		t0=$(tb_us)
		echo "$2" >"$D/$1/sriov_numvfs" || exit 1
		t1=$(tb_us)
		read -r s1 </proc/self/stat
		echo "$(tb_elapsed_ms "$t0" "$t1") $(( $(ticks "$s1") - $(ticks "$s0") ))" >"$3"
	)
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
calibrate() {
	local k t0 one two
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
		# each PF alone
		slowest=0 cpusum=0
		for pf in $pfs; do
			enable "$pf" $N /tmp/alone-$pf || tb_check "round $r: $pf alone: writing $N to sriov_numvfs" false
			tb_check "round $r: $pf alone: $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
			tb_check_ge "round $r: $pf alone" "$(f1 /tmp/alone-$pf)" $TB_ENABLE_MIN_MS "the kernel's msleep(100)"
			tb_figure "r$r-alone-$pf-ms" "$(f1 /tmp/alone-$pf)" ms
			tb_figure "r$r-alone-$pf-cpu-ms" "$(f2 /tmp/alone-$pf)" ms
			slowest=$(max "$slowest" "$(f1 /tmp/alone-$pf)")
			cpusum=$((cpusum + $(f2 /tmp/alone-$pf)))
			echo 0 >"$D/$pf/sriov_numvfs"
		done
		bound=$(max "$slowest" "$(awk -v c="$cpusum" -v n="$NCPU" 'BEGIN { printf "%.1f", c / n }')")
		tb_figure "r$r-slowest-alone-ms" "$slowest" ms
		tb_figure "r$r-cpu-sum-ms" "$cpusum" ms
		tb_figure "r$r-bound-ms" "$bound" ms

		# PF after PF
		t0=$(tb_us) parts=
		for pf in $pfs; do
			enable "$pf" $N /tmp/ser-$pf || tb_check "round $r: serial: $pf's write" false
			parts="$parts $(f1 /tmp/ser-$pf)"
		done
		serial=$(tb_elapsed_ms "$t0" "$(tb_us)")
		tb_check_serial "round $r: 4x$N PF after PF" "$serial" $parts
		tb_figure "r$r-serial-ms" "$serial" ms
		c=0; for pf in $pfs; do c=$((c + $(f2 /tmp/ser-$pf))); done
		tb_figure "r$r-serial-cpu-ms" "$c" ms
		t0=$(tb_us)
		for pf in $pfs; do bind_pf "$pf" || tb_check "round $r: serial binds of $pf" false; done
		tb_figure "r$r-bind-serial-ms" "$(tb_elapsed_ms "$t0" "$(tb_us)")" ms
		unbind_all
		disable_all || tb_check "round $r: disable after serial" false

		# four writers at once
		t0=$(tb_us)
		for pf in $pfs; do enable "$pf" $N /tmp/par-$pf & done
		wait
		parallel=$(tb_elapsed_ms "$t0" "$(tb_us)")
		for pf in $pfs; do
			tb_check "round $r: parallel: $pf has $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
			tb_check_ge "round $r: 4 writers at once" "$parallel" "$(f1 /tmp/par-$pf)" "$pf's write, part of it"
			tb_check_ge "round $r: $pf's write among four" "$(f1 /tmp/par-$pf)" $TB_ENABLE_MIN_MS "the kernel's msleep(100)"
		done
		tb_figure "r$r-parallel-ms" "$parallel" ms
		c=0; for pf in $pfs; do c=$((c + $(f2 /tmp/par-$pf))); done
		tb_figure "r$r-parallel-cpu-ms" "$c" ms
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
		tb_figure "r$r-parallel-over-serial" "$(awk -v p="$parallel" -v s="$serial" 'BEGIN { printf "%.3f", p / s }')" x
		tb_figure "r$r-parallel-over-bound" "$(awk -v p="$parallel" -v b="$bound" 'BEGIN { printf "%.3f", p / b }')" x
		r=$((r + 1))
	done
	tb_finish
}
