# Staged sysfs seen from userspace: uevents of VFs and vfio devices, and a
# poller looking for a half-built VF directory.  One nvme PF x 32 VFs.
# tb-sysfs-watch (tests/vm/tb-sysfs-watch.c) runs while the VFs are added:
# a scanner thread reads the PF's parent directory in a tight loop and
# looks up, in every VF directory it finds, the entries device_add()
# creates and the VF's links (ENTRIES: physfn in the VF's directory, and
# @virtfn, the PF's virtfnN link to it); a directory lacking any is
# half-built (the base kernel shows a VF's directory while device_add()
# still fills it, and makes both links after device_add()).  Its
# netlink uevent monitor (NETLINK_KOBJECT_UEVENT, no udevd) logs SEQNUM
# ACTION DEVPATH and, at a VF's add, whether its directory was complete.
# Then two VFs are bound to vfio-pci.  Checks: the watcher saw every VF
# directory, complete in the end, and never half-built; every VF is
# announced once (add), after no event of its own; its directory is
# complete at its add; its bind follows its add; SEQNUMs rise; no event
# lost.
N=32
ENTRIES=uevent,subsystem,config,vendor,device,driver_override,iommu_group,physfn,@virtfn

stage1() {
	pf=$(tb_pfs)
	tb_check "one SR-IOV PF" test "$(echo "$pf" | wc -w)" -eq 1
	tb_set_autoprobe 0
	tb_sysfs_watch_start --entries "$ENTRIES" --events /tmp/ev.log --log /tmp/half.log "$pf"
	echo $N >"/sys/bus/pci/devices/$pf/sriov_numvfs"
	tb_check "$pf: $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
	vfs=$(tb_vfs "$pf")
	v1=$(echo "$vfs" | sed -n 1p) v2=$(echo "$vfs" | sed -n 2p)
	tb_check "$v1 bound to vfio-pci" tb_bind_vfio "$v1"
	tb_check "$v2 bound to vfio-pci" tb_bind_vfio "$v2"
	sleep 1
	tb_sysfs_watch_stop scans scan_us vf_dirs half_built half_built_vfs half_built_mean_us \
		half_built_max_us events vf_adds_partial
	tb_info </tmp/ev.log
	tb_check "the watcher saw $N VF directories, all complete in the end" \
		test "$(tb_watch_value vf_dirs):$(tb_watch_value vf_complete)" = "$N:$N"
	tb_check "no half-built VF directory seen ($(tb_watch_value half_built) times, $(tb_watch_value half_built_vfs) VFs, in $(tb_watch_value scans) scans)" \
		test "$(tb_watch_value half_built)" -eq 0
	tb_check "no uevent lost" test "$(tb_watch_value events_lost)" -eq 0
	tb_check "the watcher's threads ran to the end ($(tb_watch_value thread_errors) stopped on an error)" \
		test "$(tb_watch_value thread_errors)" -eq 0
	tb_check "SEQNUMs rise ($(tb_watch_value seqnum_errors) did not)" test "$(tb_watch_value seqnum_errors)" -eq 0
	tb_check "$N VF adds, each VF exactly one, none partial, no VF event before its add" \
		test "$(tb_watch_value vf_adds):$(tb_watch_value vf_adds_not_once):$(tb_watch_value vf_adds_partial):$(tb_watch_value vf_events_before_add)" = "$N:0:0:0"
	for v in $vfs; do
		first=$(awk -v v="$v" '$3 ~ "/" v "$" { print $2; exit }' /tmp/ev.log)
		adds=$(awk -v v="$v" '$3 ~ "/" v "$" && $2 == "add"' /tmp/ev.log | wc -l)
		state=$(awk -v v="$v" '$3 ~ "/" v "$" && $2 == "add" { print $4 }' /tmp/ev.log)
		tb_check "$v: announced once, first, complete" test "$first:$adds:$state" = "add:1:complete"
	done
	for v in $v1 $v2; do
		order=$(awk -v v="$v" '$3 ~ "/" v "$" { printf "%s ", $2 }' /tmp/ev.log)
		tb_check "$v: add before bind ($order)" sh -c "echo '$order' | grep -q '^add .*bind'"
		grp=$(basename "$(readlink "/sys/bus/pci/devices/$v/iommu_group")")
		tb_check "$v: vfio group $grp announced (add)" grep -q " add /devices/virtual/vfio/$grp " /tmp/ev.log
	done
	tb_finish
}
