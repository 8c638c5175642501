# A bind of VF 0 to vfio-pci (driver_override, then its BDF written to
# /sys/bus/pci/drivers/vfio-pci/bind) with its Nth fault-injection point
# failing, for N = 1, 2, ... until the bind makes fewer than N (tb-fail-nth;
# failslab/ignore-gfp-wait N so GFP_KERNEL allocations count).  The failure
# lands anywhere in vfio-pci's probe: the vfio_device, its IOMMU binding,
# the VFIO group (its allocation, name, chardev and device_add()), the
# vfio-dev device.
#
# The sweep runs once with the writer pinned to each online CPU.  Whether
# a kernfs node's creation allocates a radix-tree node for the root's inode
# IDR depends on where the IDR's cyclic cursor stands (every node created
# anywhere moves it) and on the CPU's idr_preload() pool, so the calls
# before the Nth are not the same in every attempt and a sweep can step
# over an allocation.  Sweeping again, on another CPU, makes a miss less
# likely; it does not rule one out.
#
# After every attempt:
#  - no kernel report in the log other than the injection's own stack dump
#    (no Oops, BUG, WARNING, KASAN, list or refcount corruption);
#  - a failed bind left the VF without a driver and without /dev/vfio/G
#    (G: the VF's IOMMU group);
#  - a successful one left the VF on vfio-pci with the group's chardev
#    registered (/sys/class/vfio/G/dev) and its node /dev/vfio/G, and is
#    unbound again.  One exception, 7.3's own: when the injection failed
#    vfio_devnode()'s name allocation (device_get_devnode() under
#    devtmpfs_create_node()), device_get_devnode() falls back to the
#    device's name and devtmpfs makes /dev/G instead; that node must then
#    be the group's chardev (its major:minor), and as devtmpfs never
#    removes it (the removal asks for /dev/vfio/G) the scenario does.
# At the end the VF binds without injection, is unbound, and both VFs are
# disabled: their IOMMU groups must then be gone from
# /sys/kernel/iommu_groups (a reference a failed bind leaked keeps one).
#
# Without the fix for a group whose registration failed
# (kernel/patches/8-vfio-group/0001) the first injection that makes the
# group's cdev_device_add() fail gives WARNING in vfio_group_release().
D=/sys/bus/pci/devices
DRV=/sys/bus/pci/drivers/vfio-pci
FI=/sys/kernel/debug/failslab
MAXN=$(tb_arg maxn || echo 5000)

# vf_unbound VF DEV: VF has no driver and no VFIO group chardev DEV
# (/dev/vfio/G), nor /dev/G (7.3's fallback node, below)
vf_unbound() {
	[ ! -e "$D/$1/driver" ] || { echo "bound to $(tb_driver_of "$1")"; return 1; }
	[ ! -e "$2" ] || { echo "$2 exists"; return 1; }
	[ ! -e "/sys/class/vfio/$(basename "$2")" ] || { echo "/sys/class/vfio/$(basename "$2") exists"; return 1; }
	[ ! -e "/dev/$(basename "$2")" ] || { echo "/dev/$(basename "$2") exists"; return 1; }
}

# The stack of a failed allocation of the group's node name: vfio_devnode()
# (a tail call, so not in the stack) -> kasprintf(), under
# devtmpfs_create_node() for the group's device (staged: from its
# publication in device_add()); one line of /tmp/kmsg.inj
DEVNODE_STACK=' kasprintf+[^ ]* device_get_devnode+[^ ]* devtmpfs_create_node+.* cdev_device_add+[^ ]* vfio_group_'

# online_cpus: the online CPUs' numbers, one a line
online_cpus() {
	tr ',' '\n' </sys/devices/system/cpu/online |
		awk -F- 'NF == 1 { print $1 } NF == 2 { for (i = $1; i <= $2; i++) print i }'
}

# node_is PATH MAJ:MIN: PATH is the character device MAJ:MIN (decimal, as
# sysfs's dev attribute has it)
node_is() {
	[ -c "$1" ] && [ "$(stat -c '%t:%T' "$1")" = "$(printf '%x:%x' "${2%:*}" "${2#*:}")" ]
}

# bound_ok VF G STACK: after a bind that succeeded, VF is on vfio-pci and
# group G's chardev is registered with its node (above); STACK is the
# attempt's injected stack (empty if none).  Prints what is wrong and
# returns 1, or returns 0 and prints "fallback" when the node is 7.3's
# fallback /dev/G.
bound_ok() {
	local vf=$1 g=$2 stack=$3 majmin
	[ "$(tb_driver_of "$vf")" = vfio-pci ] || { echo "$vf on '$(tb_driver_of "$vf")', not vfio-pci"; return 1; }
	majmin=$(cat "/sys/class/vfio/$g/dev" 2>/dev/null) ||
		{ echo "no /sys/class/vfio/$g/dev"; return 1; }
	node_is "/dev/vfio/$g" "$majmin" && return 0
	if echo "$stack" | grep -q "$DEVNODE_STACK" &&
	   [ ! -e "/dev/vfio/$g" ] && node_is "/dev/$g" "$majmin"; then
		echo fallback
		return 0
	fi
	echo "no /dev/vfio/$g with the group's chardev $majmin"
	return 1
}

# sweep CPU VF G: the sweep above with tb-fail-nth pinned to CPU, VF in
# IOMMU group G.  Leaves "<injections> <binds failed> <binds succeeded>
# <fallback nodes> <last N>" in /tmp/sweep.out; returns 1 after a CHECK FAIL.
sweep() {
	local cpu=$1 vf=$2 g=$3 nth=1 out werr inj ok n0 n1 stack ninj=0 nfail=0 nok=0 nfb=0
	echo "sweep on CPU $cpu: $vf bound to vfio-pci with fault N failing, N = 1.. (at most $MAXN)" | tb_info
	while [ $nth -le "$MAXN" ]; do
		tb_log "CPU $cpu attempt $nth"
		n0=$(cat /tmp/kmsg.inj 2>/dev/null | wc -l)
		tb_fail_attempt $nth $DRV/bind "$vf" "" "$cpu" || return 1
		out=$(cat /tmp/fail.out)
		werr=${out% *} inj=${out#* }
		n1=$(cat /tmp/kmsg.inj 2>/dev/null | wc -l)
		# an injected attempt dumps one stack, or none when the failed
		# allocation was __GFP_NOWARN (fault injection does not dump those)
		stack=
		if [ "$n1" -gt $((n0 + inj)) ]; then
			tb_check "CPU $cpu attempt $nth: at most $inj injection stack in the kernel log (have $((n1 - n0)))" false
			return 1
		fi
		[ "$n1" -gt "$n0" ] && stack=$(tail -n 1 /tmp/kmsg.inj)
		[ "$inj" = 1 ] && ninj=$((ninj + 1))
		if [ "$werr" = 0 ]; then
			nok=$((nok + 1))
			if ! ok=$(bound_ok "$vf" "$g" "$stack"); then
				tb_check "CPU $cpu attempt $nth: the bind succeeded: $ok" false
				return 1
			fi
			echo "$vf" >$DRV/unbind ||
				{ tb_check "CPU $cpu attempt $nth: unbinding $vf" false; return 1; }
			if [ "$ok" = fallback ]; then
				nfb=$((nfb + 1))
				echo "CPU $cpu attempt $nth: vfio_devnode() failed, 7.3 made /dev/$g" | tb_info
				rm -f "/dev/$g"
			fi
		else
			nfail=$((nfail + 1))
		fi
		if ! vf_unbound "$vf" "/dev/vfio/$g" >/tmp/unbound.out; then
			tb_check "CPU $cpu attempt $nth (bind errno $werr, injected $inj): $vf unbound afterwards: $(cat /tmp/unbound.out)" false
			return 1
		fi
		[ "$inj" = 1 ] || break
		[ $((nth % 100)) -eq 0 ] && echo "CPU $cpu attempt $nth: $nfail binds failed, $nok succeeded so far" | tb_info
		nth=$((nth + 1))
	done
	echo "$ninj $nfail $nok $nfb $nth" >/tmp/sweep.out
	if [ "$inj" != 0 ]; then
		tb_check "CPU $cpu: the sweep ended (an attempt made fewer than N injectable calls by N = $MAXN)" false
		return 1
	fi
}

stage1() {
	local pfs pf v vf2 g g2 dev cpu s ninj=0 nfail=0 nok=0 nfb=0 ngroup=0 ndevnode=0
	pfs=$(tb_pfs)
	pf=$(echo $pfs | cut -d' ' -f1)
	tb_check "one SR-IOV PF" test "$(echo $pfs | wc -w)" -eq 1
	tb_check "failslab in debugfs ($FI)" test -d $FI
	tb_check "fail-nth (/proc/thread-self/fail-nth)" test -e /proc/thread-self/fail-nth
	tb_set_autoprobe 0
	tb_check "2 VFs enabled" tb_enable_vfs $pf 2
	v=$(tb_vfs $pf | head -n 1)
	vf2=$(tb_vfs $pf | sed -n 2p)
	g=$(basename "$(readlink $D/$v/iommu_group)")
	dev=/dev/vfio/$g
	tb_check "VF $v in IOMMU group $g, unbound" vf_unbound "$v" "$dev"
	echo vfio-pci >$D/$v/driver_override
	echo N >$FI/ignore-gfp-wait
	echo 2 >$FI/verbose
	dmesg -c >/dev/null
	rm -f /tmp/kmsg.inj /tmp/kmsg.allowed
	for cpu in $(online_cpus); do
		if ! sweep "$cpu" "$v" "$g"; then
			tb_finish
			return
		fi
		s=$(cat /tmp/sweep.out)
		tb_say "CHECK ok CPU $cpu: the sweep ended at N = ${s##* } after ${s%% *} injections; every failed bind left $v unbound, every successful one with its group's chardev node, the kernel log without a report"
		set -- $s
		ninj=$((ninj + $1)) nfail=$((nfail + $2)) nok=$((nok + $3)) nfb=$((nfb + $4))
	done
	[ -f /tmp/kmsg.inj ] || : >/tmp/kmsg.inj
	# each line is one injection's stack (innermost first, one token a frame)
	ngroup=$(grep -c ' cdev_device_add+.* vfio_' /tmp/kmsg.inj || true)
	ndevnode=$(grep -c "$DEVNODE_STACK" /tmp/kmsg.inj || true)
	tb_figure injections "$ninj" count
	tb_figure binds-failed "$nfail" count
	tb_figure binds-succeeded "$nok" count
	tb_figure injections-in-group-cdev-device-add "$ngroup" count
	tb_figure injections-in-devtmpfs-devnode "$ndevnode" count
	tb_figure binds-with-fallback-node "$nfb" count
	tb_check "the sweeps reached the VFIO group's cdev_device_add() ($ngroup injections)" test "$ngroup" -gt 0
	echo 0 >$FI/verbose
	tb_check "after the sweeps: $v bound to vfio-pci" tb_bind_vfio "$v"
	tb_check "after the sweeps: $dev is a character device" test -c "$dev"
	echo "$v" >$DRV/unbind
	g2=$(basename "$(readlink $D/$vf2/iommu_group)")
	echo 0 >$D/$pf/sriov_numvfs
	tb_check "after the VFs are disabled: IOMMU group $g gone from /sys/kernel/iommu_groups" \
		test ! -e /sys/kernel/iommu_groups/$g
	tb_check "after the VFs are disabled: IOMMU group $g2 gone from /sys/kernel/iommu_groups" \
		test ! -e /sys/kernel/iommu_groups/$g2
	tb_kmsg_split
	tb_check "after the sweeps: no kernel report" sh -c "! grep -Eq '$TB_KMSG_REPORT' /tmp/kmsg.rest"
	tb_finish
}
