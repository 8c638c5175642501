# /proc/lock_stat around three phases, each cleared before it starts
# (write 0 to /proc/lock_stat) and read when it ends:
#   serial:   127 VFs enabled on each of 4 nvme PFs, PF after PF
#             (sriov_drivers_autoprobe 0: VF creation only);
#   parallel: the same from four writers at once (after a disable);
#   bind:     BINDS VFs of each PF bound to vfio-pci (driver_override and
#             drivers_probe), PF after PF: the VFIO group chardevs;
#   bindpar:  the next BINDS VFs of each PF bound the same way from four
#             binders at once, one per PF: VFIO groups created
#             concurrently (vfio.group_lock).
# For each phase and each lock class of LOCKS: FIGURE
# <phase>-<class>-<field> for acquisitions, contentions, waittime-total
# and holdtime-total (us); rwsems have a -W (write) and a -R (read) line.
# Per-VF figures are derived by bench/lock-stat/run.  The whole table of
# each phase goes to the log (INFO) for classes not listed.
N=127
BINDS=$(tb_arg binds || echo 8)
D=/sys/bus/pci/devices
# lock_stat's class names (the lock's expression at its init); a class is
# matched by this prefix (the staged mutexes are one class).
LOCKS='&root->kernfs_rwsem &group->mutex pci_rescan_remove_lock pci_bridge_d3_lock pci_virtfn_bus_lock &vfio.group_lock iommu_probe_device_lock device_hotplug_lock uevent_sock_mutex dpm_list_mtx gdp_mutex pci_bus_sem &kernfs_locks->staged_mutex kernfs_satellite_lock'

# Prints "<class> <acquisitions> <contentions> <waittime-total> <holdtime-total>"
# for every class line of /proc/lock_stat (13 fields: name: and the 12
# counters; con-bounces contentions waittime-min -max -total -avg
# acq-bounces acquisitions holdtime-min -max -total -avg).
lockstat_lines() {
	awk 'NF == 13 && $1 ~ /:$/ { n = $1; sub(/:$/, "", n); print n, $9, $3, $6, $12 }' /proc/lock_stat
}

phase_figures() {  # phase_figures PHASE: the LOCKS' figures from /proc/lock_stat
	local ph=$1 l v
	lockstat_lines >/tmp/ls.$ph
	for l in $LOCKS; do
		awk -v k="$l" -v ph="$ph" 'index($1, k) == 1 {
			rest = substr($1, length(k) + 1)
			suf = ""
			if (rest ~ /-[WR]$/) suf = substr(rest, length(rest) - 1)
			else if (rest != "" && rest !~ /^\[/) next
			f = k suf; gsub(/[^A-Za-z0-9_.-]/, "", f)
			printf "%s-%s-acq %s\n%s-%s-con %s\n%s-%s-wait-us %s\n%s-%s-hold-us %s\n", ph, f, $2, ph, f, $3, ph, f, $4, ph, f, $5
		}' /tmp/ls.$ph
	done | while read -r l v; do tb_figure "$l" "$v" count; done
	sort -k2 -n -r /tmp/ls.$ph | head -n 25 | sed "s/^/$ph: /" | tb_info
}

stage1() {
	local pfs pf v n
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo "$pfs" | wc -w)" -eq 4
	tb_check "lock_stat (/proc/lock_stat, CONFIG_LOCK_STAT)" test -w /proc/lock_stat
	tb_check "lockdep still on (debug_locks 1)" \
		test "$(awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats)" = 1
	tb_set_autoprobe 0
	echo 1 >/proc/sys/kernel/lock_stat 2>/dev/null || true

	echo 0 >/proc/lock_stat
	for pf in $pfs; do echo $N >"$D/$pf/sriov_numvfs"; done
	phase_figures serial
	for pf in $pfs; do tb_check "$pf: $N VFs (serial)" test "$(tb_count_vfs "$pf")" -eq $N; done
	for pf in $pfs; do echo 0 >"$D/$pf/sriov_numvfs"; done

	echo 0 >/proc/lock_stat
	for pf in $pfs; do echo $N >"$D/$pf/sriov_numvfs" & done
	wait
	phase_figures parallel
	for pf in $pfs; do tb_check "$pf: $N VFs (parallel)" test "$(tb_count_vfs "$pf")" -eq $N; done

	n=0
	echo 0 >/proc/lock_stat
	for pf in $pfs; do
		for v in $(tb_vfs "$pf" | head -n "$BINDS"); do
			tb_bind_vfio "$v" && n=$((n + 1))
		done
	done
	phase_figures bind
	tb_check "$((4 * BINDS)) VFs bound to vfio-pci (have $n)" test $n -eq $((4 * BINDS))
	tb_figure binds "$n" count

	echo 0 >/proc/lock_stat
	for pf in $pfs; do
		for v in $(tb_vfs "$pf" | sed -n "$((BINDS + 1)),$((2 * BINDS))p"); do
			tb_bind_vfio "$v" || echo "$v" >>/tmp/bindpar.failed
		done &
	done
	wait
	phase_figures bindpar
	n=0
	for pf in $pfs; do
		for v in $(tb_vfs "$pf" | head -n $((2 * BINDS))); do
			[ "$(tb_driver_of "$v")" = vfio-pci ] && n=$((n + 1))
		done
	done
	tb_check "$((8 * BINDS)) VFs on vfio-pci after the four binders (have $n; failed: $(cat /tmp/bindpar.failed 2>/dev/null))" \
		test $n -eq $((8 * BINDS))
	tb_figure vfs-per-phase $((4 * N)) count
	tb_check "lockdep still on at the end (debug_locks 1)" \
		test "$(awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats)" = 1
	tb_finish
}
