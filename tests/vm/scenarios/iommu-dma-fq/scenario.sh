# A DMA-FQ default domain's flush queue costs 256 entries (about 10 KiB)
# on every possible CPU.  A VF that no driver binds, or that vfio-pci binds
# (it manages DMA itself), never unmaps through its default domain and
# never needs one:
#  - the PF's and the VFs' groups are DMA-FQ (x86's lazy default);
#  - 64 VFs added with autoprobe off grow the kernel's percpu memory
#    (/proc/meminfo Percpu) by less than half a flush queue per possible
#    CPU per VF (a kernel that sets the queue up with the domain grows it
#    by about one queue per CPU per VF: the series before submission 13
#    fails here);
#  - 16 VFs bound to vfio-pci grow it by less than half a queue per CPU
#    per bound VF as well (vfio-pci manages DMA itself); the VFs go away
#    again;
#  - the PF's namespace reads back what was written, with O_DIRECT and
#    the page cache dropped between, in 1 MiB and 4 KiB requests, before
#    and after the VFs (the nvme driver maps and unmaps every request
#    through the PF's domain);
#  - the PF's group is still DMA-FQ afterwards (no failed allocation
#    demoted it) and, on a kernel with lock_stat, the queue's lock was
#    taken: the queue was set up when the nvme driver bound and the
#    unmaps went through it.  Only that check sees a kernel that never
#    sets the queue up (strict unmaps, the same data); the variant
#    iommu-dma-fq-lockdep (luod_tb.require_lock_stat=1) requires it;
#  - the kernel reports nothing (WARNING, BUG, lockdep, "iova flush queue
#    initialization failed").
D=/sys/bus/pci/devices
NVF=64

group_type() { cat "/sys/kernel/iommu_groups/$(basename "$(readlink "$D/$1/iommu_group")")/type" 2>/dev/null; }
percpu_kb() { awk '/^Percpu:/ { print $2 }' /proc/meminfo; }
possible_cpus() {  # the number of CPUs in /sys/devices/system/cpu/possible ("0-1", "0,2-3")
	local n=0 r
	for r in $(tr ',' ' ' </sys/devices/system/cpu/possible); do
		case $r in
		*-*) n=$((n + ${r#*-} - ${r%-*} + 1)) ;;
		*) n=$((n + 1)) ;;
		esac
	done
	echo "$n"
}
blockdev_of() { ls "$D/$1"/nvme/nvme*/ 2>/dev/null | grep -m1 '^nvme[0-9]*n1$'; }

# roundtrip WHAT BS COUNT: writes COUNT blocks of BS of fresh random bytes
# to the namespace and reads them back, both O_DIRECT, the device's page
# cache dropped in between (busybox dd falls back to buffered I/O when
# O_DIRECT is refused); they must be equal.
roundtrip() {
	local what=$1 bs=$2 count=$3 ok=0
	rm -f /tmp/pattern /tmp/back
	if dd if=/dev/urandom of=/tmp/pattern bs="$bs" count="$count" 2>/dev/null &&
		dd if=/tmp/pattern of="/dev/$NS" bs="$bs" count="$count" oflag=direct conv=fsync 2>/dev/null &&
		blockdev --flushbufs "/dev/$NS" &&
		dd if="/dev/$NS" of=/tmp/back bs="$bs" count="$count" iflag=direct 2>/dev/null; then
		ok=1
	fi
	tb_check "$what: $count x $bs written to /dev/$NS and read back with O_DIRECT (dd, blockdev ok: $ok)" test "$ok" = 1
	tb_check "$what: the $count x $bs read back equal what was written" cmp -s /tmp/pattern /tmp/back
}

stage1() {
	local pf p0 p1 ncpu per_vf_b fq_b vf acq n bad=
	pf=$(tb_pfs_of_kind nvme)
	NS=$(blockdev_of "$pf")
	tb_check "one nvme PF ($pf) with namespace 1 ($NS)" test -n "$pf" -a -b "/dev/$NS"
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	tb_check_value "the PF's group type" DMA-FQ "$(group_type "$pf")"
	if [ -w /proc/lock_stat ]; then	# collect (on by default), from here on
		echo 1 >/proc/sys/kernel/lock_stat
		echo 0 >/proc/lock_stat
	elif [ "$(tb_arg require_lock_stat)" = 1 ]; then
		tb_check "lock_stat (/proc/lock_stat, CONFIG_LOCK_STAT) for the flush queue's lock" false
	fi

	roundtrip "before the VFs" 1M 16
	roundtrip "before the VFs" 4k 2048

	tb_set_autoprobe 0
	ncpu=$(possible_cpus)
	fq_b=$((256 * 40))	# IOVA_DEFAULT_FQ_SIZE entries of struct iova_fq_entry
	p0=$(percpu_kb)
	tb_check "$NVF VFs enabled" tb_enable_vfs "$pf" "$NVF"
	p1=$(percpu_kb)
	tb_check "Percpu read from /proc/meminfo ($p0, $p1 kB)" test -n "$p0" -a -n "$p1"
	n=0
	for vf in $(tb_vfs "$pf"); do
		n=$((n + 1))
		[ "$(group_type "$vf")" = DMA-FQ ] || bad="$bad $vf:$(group_type "$vf")"
	done
	tb_check "each of the $n VFs' groups is DMA-FQ${bad:+ (not:$bad)}" test "$n" -eq "$NVF" -a -z "$bad"
	per_vf_b=$(((p1 - p0) * 1024 / NVF))
	tb_figure percpu-per-vf "$per_vf_b" bytes
	echo "Percpu $p0 -> $p1 kB for $NVF VFs: $per_vf_b bytes a VF; $ncpu possible CPUs, a flush queue $fq_b bytes a CPU" | tb_info
	tb_check "percpu memory a VF added ($per_vf_b bytes) < half a flush queue on each of $ncpu CPUs ($((fq_b * ncpu / 2)) bytes)" \
		test "$per_vf_b" -lt $((fq_b * ncpu / 2))

	# 16 VFs bound to vfio-pci (it manages DMA itself): still no queue
	p0=$(percpu_kb)
	for vf in $(tb_vfs "$pf" | head -n 16); do
		tb_check "$vf binds to vfio-pci" tb_bind_vfio "$vf"
	done
	p1=$(percpu_kb)
	per_vf_b=$(((p1 - p0) * 1024 / 16))
	tb_figure percpu-per-vfio-bind "$per_vf_b" bytes
	tb_check "percpu memory a vfio-pci bind ($per_vf_b bytes) < half a flush queue on each of $ncpu CPUs" \
		test "$per_vf_b" -lt $((fq_b * ncpu / 2))
	for vf in $(tb_vfs "$pf" | head -n 16); do
		echo "$vf" >"$D/$vf/driver/unbind"
		echo >"$D/$vf/driver_override"
	done
	tb_check "the VFs disabled" tb_disable_vfs "$pf"

	roundtrip "after the VFs" 1M 16
	roundtrip "after the VFs" 4k 2048
	tb_check_value "the PF's group type afterwards" DMA-FQ "$(group_type "$pf")"
	# With lock_stat (the lockdep kernel): unmaps went through a flush
	# queue, whose lock class exists only once a queue is set up.
	if [ -r /proc/lock_stat ]; then
		acq=$(awk 'NF == 13 && $1 == "&fq->lock:" { print $9; exit }' /proc/lock_stat)
		grep -E '^ *&fq->lock:' /proc/lock_stat | tb_info
		tb_check "lock_stat: the flush queue's lock was taken (${acq:-0} acquisitions)" test "${acq:-0}" -gt 0
	fi

	dmesg >/tmp/kmsg.all
	tb_check "no kernel report" sh -c "! grep -Eq '$TB_KMSG_REPORT|iova flush queue initialization failed' /tmp/kmsg.all"
	grep -E "$TB_KMSG_REPORT|iova flush queue" /tmp/kmsg.all | head -n 40 | tb_info
	tb_finish
}
