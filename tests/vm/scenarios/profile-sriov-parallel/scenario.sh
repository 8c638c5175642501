# System-wide CPU profile (perf record -a, cpu-clock at 1 kHz, kernel
# call chains) of SR-IOV enable of 4 nvme PFs x 127 VFs (autoprobe 0),
# once PF after PF and once from four writers at once; for each: wall
# time, samples, and the top kernel symbols by self time and the callers
# of the top ones (perf report in the guest, /proc/kallsyms), as INFO
# lines; FIGURE lines for the samples in each phase and the share of the
# top symbols, read by bench/sriov-parallel/profile.
N=127
D=/sys/bus/pci/devices
CALLERS=$(tb_arg callers || echo acpi_evaluate_object,acpi_ns_get_node)

profile() {  # profile NAME COMMAND...: perf record around COMMAND
	local name=$1 t0 t1
	shift
	perf record -q -a -g -e cpu-clock -F 1000 -o "/tmp/$name.data" -- sleep 600 2>/tmp/perf-$name.err &
	local pp=$!
	sleep 2
	t0=$(tb_us)
	"$@"
	t1=$(tb_us)
	kill -INT "$pp"
	wait "$pp"
	tb_figure "$name-ms" "$(tb_elapsed_ms "$t0" "$t1")" ms
	perf report -i "/tmp/$name.data" --stdio --no-children --sort sym -g none \
		--percent-limit 0.3 2>/dev/null | grep -v -e '^$' -e '^#' | head -n 40 >"/tmp/$name.top"
	tb_figure "$name-samples" "$(perf report -i "/tmp/$name.data" --stdio --sort sym -g none 2>/dev/null |
		sed -n 's/^# Samples: \([0-9.]*[kKM]*\).*/\1/p' | head -n1)" samples
	sed "s/^/$name: /" "/tmp/$name.top" | tb_info
	# Time including callees, kernel functions (where the ACPI, kernfs,
	# IOMMU work is entered from).
	perf report -i "/tmp/$name.data" --stdio --children --sort sym -g none \
		--percent-limit 1.5 2>/dev/null | grep -v -e '^$' -e '^#' | grep -v -e default_idle -e do_idle \
		-e cpu_startup_entry -e start_secondary -e common_startup_64 -e rest_init -e x86_64_start \
		-e start_kernel -e kernel_init | head -n 70 | sed "s/^/$name-children: /" | tb_info
	# The call paths into chosen kernel functions (luod_tb.callers, a comma-
	# separated list; default the ACPI entry points seen in VF addition):
	# for each sample whose stack holds one, the 7 frames above it, counted.
	perf script -i "/tmp/$name.data" -F ip,sym 2>/dev/null | awk -v targets="$CALLERS" '
		function flush(  i, j, path) {
			for (i = 1; i <= k; i++) if (f[i] in T) {
				path = f[i]
				for (j = i + 1; j <= k && j <= i + 7; j++) path = path " <- " f[j]
				C[path]++
				break
			}
			k = 0
		}
		BEGIN { n = split(targets, t, ","); for (i = 1; i <= n; i++) T[t[i]] = 1 }
		/^$/ { flush(); next }
		{ f[++k] = $2 }
		END { flush(); for (p in C) print C[p], p }' | sort -rn | head -n 12 | sed "s/^/$name-paths: /" | tb_info
	# Who calls the hottest kernel symbols.
	perf report -i "/tmp/$name.data" --stdio --no-children --sort sym -g caller,0.5,callee,function,percent \
		--percent-limit 2 2>/dev/null | grep -v -e '^$' -e '^#' | grep -v -e default_idle -e do_idle -e cpu_startup_entry \
		-e start_secondary -e common_startup_64 -e rest_init -e x86_64_start | head -n 200 |
		sed "s/^/$name-callers: /" | tb_info
}
serial() {
	local pf
	for pf in $pfs; do echo $N >"$D/$pf/sriov_numvfs" || return 1; done
}
parallel() {  # waits for its writers only (perf record runs in the background too)
	local pf pids=
	for pf in $pfs; do
		echo $N >"$D/$pf/sriov_numvfs" &
		pids="$pids $!"
	done
	wchan_sample $pids >/tmp/wchan.parallel &
	local sampler=$!
	wait $pids
	wait "$sampler"
}
# wchan_sample PID...: off-CPU profile of the writers: where each one that
# is asleep sleeps (/proc/PID/wchan, read with the shell's builtin read, no
# fork), polled until all have exited; one function name a line.
wchan_sample() {
	local p w alive=1
	while [ $alive = 1 ]; do
		alive=0
		for p in "$@"; do
			[ -e "/proc/$p" ] || continue
			alive=1
			# no newline at the end of wchan: read fails but sets w
			w=
			read -r w <"/proc/$p/wchan" 2>/dev/null
			[ -n "$w" ] && [ "$w" != 0 ] && echo "$w"
		done
	done
}
disable_all() {
	local pf
	for pf in $pfs; do echo 0 >"$D/$pf/sriov_numvfs" || return 1; done
}

stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo $pfs | wc -w)" -eq 4
	tb_check "perf in the guest (LUOD_TB_EXTRA_BINS=/usr/bin/perf)" command -v perf
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	tb_set_autoprobe 0
	profile serial serial
	for pf in $pfs; do tb_check "serial: $pf has $N VFs" test "$(tb_count_vfs "$pf")" -eq $N; done
	disable_all
	profile parallel parallel
	# where the four writers slept (wchan samples, most frequent first)
	sort /tmp/wchan.parallel | uniq -c | sort -rn | head -n 15 | sed 's/^/parallel-wchan: /' | tb_info
	tb_figure parallel-wchan-samples "$(wc -l </tmp/wchan.parallel)" samples
	for pf in $pfs; do tb_check "parallel: $pf has $N VFs" test "$(tb_count_vfs "$pf")" -eq $N; done
	disable_all
	tb_finish
}
