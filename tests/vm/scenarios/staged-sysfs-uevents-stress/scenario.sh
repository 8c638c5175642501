# Staged sysfs seen from userspace at scale: 127 VFs on each of 4 nvme PFs
# enabled and disabled ITER times (luod_tb.iter=N, default 10; odd rounds
# the four sriov_numvfs writes from four processes at once, even rounds PF
# after PF; round 1 binds VF 0 of each PF to vfio-pci) while tb-sysfs-watch
# (tests/vm/tb-sysfs-watch.c) watches all four PFs: a scanner thread reads
# the PFs' parent directories in a loop and looks up, in every VF directory
# it finds, the entries device_add() creates and the VF's links (ENTRIES;
# @virtfn is the PF's virtfnN link to the VF); its netlink uevent monitor
# (NETLINK_KOBJECT_UEVENT, what `udevadm monitor --kernel` shows) checks
# each VF's add against the same entries.  A VF's remove makes the scanner
# wait until its directory is gone, then look at the next round's afresh.
# Checks: every VF directory of every round seen, and seen complete, never
# half-built; every VF added and removed once a round (ITER x 508 each),
# every add complete, no event of a VF while it is not present, no add
# twice; SEQNUMs rise; no uevent lost.
# The base kernel fails it (bench/staged-sysfs/uevents runs the one-PF
# scenario on both kernels).
N=127
ITER=$(tb_arg iter || echo 10)
ENTRIES=uevent,subsystem,config,vendor,device,driver_override,iommu_group,physfn,@virtfn
D=/sys/bus/pci/devices

stage1() {
	pfs=$(tb_pfs)
	npf=$(echo "$pfs" | wc -w)
	tb_check "4 SR-IOV PFs" test "$npf" -eq 4
	tb_check "at least one round (luod_tb.iter=$ITER)" test "$ITER" -ge 1
	tb_set_autoprobe 0
	tb_sysfs_watch_start --entries "$ENTRIES" --events /tmp/ev.log --log /tmp/half.log $pfs
	echo "$ITER rounds of $N VFs on each of $(echo $pfs); odd rounds parallel, even serial" | tb_info
	r=1 bad=0
	while [ $r -le "$ITER" ]; do
		if [ $((r % 2)) -eq 1 ]; then mode=parallel; else mode=serial; fi
		t0=$(tb_us)
		tb_write_numvfs_all $N $mode || { tb_check "round $r ($mode): writing $N to sriov_numvfs" false; bad=1; }
		t1=$(tb_us)
		n=$(tb_count_all_vfs)
		[ "$n" -eq $((npf * N)) ] ||
			{ tb_check "round $r ($mode): $((npf * N)) VFs after enable (have $n)" false; bad=1; }
		if [ $r -eq 1 ]; then
			for pf in $pfs; do
				v=$(basename "$(readlink $D/$pf/virtfn0)")
				tb_check "round 1: $v bound to vfio-pci" tb_bind_vfio "$v"
			done
		fi
		tb_write_numvfs_all 0 $mode || { tb_check "round $r ($mode): writing 0 to sriov_numvfs" false; bad=1; }
		t2=$(tb_us)
		[ "$(tb_count_all_vfs)" -eq 0 ] || { tb_check "round $r ($mode): no VFs after disable" false; bad=1; }
		tb_figure "round-$r-enable-ms" "$(tb_elapsed_ms "$t0" "$t1")" ms
		tb_figure "round-$r-ms" "$(tb_elapsed_ms "$t0" "$t2")" ms
		[ $bad -eq 0 ] || break
		# Let the scanner see every removed directory gone before
		# the next round creates it again.
		sleep 0.5
		r=$((r + 1))
	done
	tb_sysfs_watch_stop scans scan_us vf_sightings half_built half_built_vfs half_built_mean_us \
		half_built_max_us events vf_adds vf_adds_partial teardown_sightings
	grep -c . /tmp/ev.log | sed 's/^/uevents logged: /' | tb_info
	rounds=$((r - 1))
	want=$((rounds * npf * N))
	tb_check "$ITER rounds ran ($rounds)" test "$rounds" -eq "$ITER"
	tb_check "every VF directory of every round seen, and seen complete ($want; $(tb_watch_value vf_sightings) seen, $(tb_watch_value vf_completions) complete)" \
		test "$(tb_watch_value vf_sightings):$(tb_watch_value vf_completions)" = "$want:$want"
	tb_check "no half-built VF directory seen ($(tb_watch_value half_built) times, $(tb_watch_value half_built_vfs) VFs, in $(tb_watch_value scans) scans)" \
		test "$(tb_watch_value half_built)" -eq 0
	tb_check "every VF added and removed once a round ($want; $(tb_watch_value vf_adds) adds, $(tb_watch_value vf_removes) removes; $(tb_watch_value vf_adds_min)-$(tb_watch_value vf_adds_max) adds per VF)" \
		test "$(tb_watch_value vf_adds):$(tb_watch_value vf_removes):$(tb_watch_value vf_unpaired):$(tb_watch_value vf_adds_min):$(tb_watch_value vf_adds_max)" = "$want:$want:0:$rounds:$rounds"
	# An add is checked when it is read, not when it was sent: this
	# catches an add sent before the directory was complete only if the
	# monitor reads it before the rest is made (base: 1-8 of 32 a run).
	tb_check "every add read with the VF's directory complete ($(tb_watch_value vf_adds_partial) partial, $(tb_watch_value vf_adds_gone) read after the directory was gone)" \
		test "$(tb_watch_value vf_adds_partial):$(tb_watch_value vf_adds_gone)" = "0:0"
	tb_check "no VF event while the VF is not present, no add twice ($(tb_watch_value vf_events_before_add) VFs, $(tb_watch_value vf_adds_double) adds)" \
		test "$(tb_watch_value vf_events_before_add):$(tb_watch_value vf_adds_double)" = "0:0"
	tb_check "every removed VF directory seen gone before its next add ($(tb_watch_value vf_remove_unconfirmed) not)" \
		test "$(tb_watch_value vf_remove_unconfirmed)" -eq 0
	tb_check "no uevent lost" test "$(tb_watch_value events_lost)" -eq 0
	tb_check "the watcher's threads ran to the end ($(tb_watch_value thread_errors) stopped on an error)" \
		test "$(tb_watch_value thread_errors)" -eq 0
	tb_check "SEQNUMs rise ($(tb_watch_value seqnum_errors) did not)" test "$(tb_watch_value seqnum_errors)" -eq 0
	tb_finish
}
