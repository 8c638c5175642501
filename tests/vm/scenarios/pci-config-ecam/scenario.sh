# Config accesses to a bus below a bridge go through ECAM, without x86's
# pci_config_lock (a global spinlock taken with interrupts off around
# every type 1 access); the root bus keeps type 1
# (kernel/patches/14-x86-pci-ecam/0001):
#  - what ECAM reads is right: each PF's vendor and device ID and every
#    VF's class code are QEMU's nvme function's, every VF's header reads
#    the same twice, and the PF's namespace reads back what was written
#    with the nvme driver bound (its config writes: bus master, MSI-X);
#  - on a kernel with lock_stat (the variant pci-config-ecam-lockdep,
#    luod_tb.require_lock_stat=1, requires it): reading a root port's
#    config header (bus 0) through sysfs takes pci_config_lock and reading
#    a PF's (below that port) does not; enabling 32 VFs on each PF, both
#    at once, takes it fewer times than there are VFs (a kernel that sends
#    them through type 1 takes it about 80 times a VF: the series before
#    submission 14 fails here);
#  - the VFs go away again, and the kernel reports nothing (WARNING, BUG,
#    lockdep).
D=/sys/bus/pci/devices
NVF=32

# acq LOCK: acquisitions of lock class LOCK in /proc/lock_stat (0 when
# the class has no line: it was not taken since the last reset)
acq() { awk -v n="$1:" 'NF == 13 && $1 == n { a += $9 } END { print a + 0 }' /proc/lock_stat; }
# hex16 FILE OFFSET: the little-endian 16-bit word at OFFSET of FILE
hex16() { od -An -tx2 -j "$2" -N2 "$1" | tr -d ' '; }

stage1() {
	local pfs pf rp a0 a1 vf bad n ns ls
	pfs=$(tb_pfs_of_kind nvme)
	tb_check "two nvme PFs ($(echo $pfs))" test "$(echo "$pfs" | wc -w)" -eq 2
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	ls=0
	if [ -w /proc/lock_stat ]; then
		ls=1
		echo 1 >/proc/sys/kernel/lock_stat 2>/dev/null || true
	elif [ "$(tb_arg require_lock_stat)" = 1 ]; then
		tb_check "lock_stat (/proc/lock_stat, CONFIG_LOCK_STAT) for pci_config_lock" false
	else
		echo "no /proc/lock_stat: pci_config_lock's acquisitions are not counted (pci-config-ecam-lockdep counts them)" | tb_info
	fi
	for pf in $pfs; do
		case $pf in
		0000:00:*) tb_check "$pf is below a bridge (not on the root bus)" false ;;
		esac
	done

	# the root bus keeps type 1: a sysfs read of a root port's config space
	# takes the lock; the same read of a PF (below that port) does not
	pf=$(echo "$pfs" | head -n 1)
	rp=$(basename "$(dirname "$(readlink -f "$D/$pf")")")
	tb_check "$pf's parent $rp is on bus 0" test "${rp#0000:00:}" != "$rp"
	if [ $ls = 1 ]; then
		echo 0 >/proc/lock_stat
		od -An -tx1 -N256 "$D/$rp/config" >/dev/null
		a0=$(acq pci_config_lock)
		tb_figure root-port-config-read-acquisitions "$a0" n
		tb_check "reading $rp's 256-byte config header took pci_config_lock (type 1 on the root bus: $a0 acquisitions)" test "$a0" -gt 0
		echo 0 >/proc/lock_stat
		od -An -tx1 -N256 "$D/$pf/config" >/dev/null
		a1=$(acq pci_config_lock)
		tb_figure pf-config-read-acquisitions "$a1" n
		tb_check "reading $pf's 256-byte config header did not take pci_config_lock (ECAM: $a1 acquisitions)" test "$a1" -eq 0
	fi

	# both PFs' VFs at once
	tb_set_autoprobe 0
	[ $ls = 1 ] && echo 0 >/proc/lock_stat
	for pf in $pfs; do (echo $NVF >"$D/$pf/sriov_numvfs") & done
	wait
	[ $ls = 1 ] && a0=$(acq pci_config_lock)
	n=0
	for pf in $pfs; do n=$((n + $(tb_count_vfs "$pf"))); done
	tb_check "$((2 * NVF)) VFs enabled ($n)" test "$n" -eq $((2 * NVF))
	if [ $ls = 1 ]; then
		tb_figure enable-acquisitions-per-vf "$(awk -v a="$a0" -v n="$n" 'BEGIN { printf "%.2f", n ? a / n : -1 }')" n
		tb_check "enabling $n VFs took pci_config_lock $a0 times: fewer than once a VF" test "$a0" -lt "$n"
	fi

	# QEMU's nvme function: Red Hat's 1b36:0010, class 010802 (NVM Express);
	# a VF's own Vendor and Device ID may read ffff (SR-IOV), its class not
	for pf in $pfs; do
		tb_check_value "$pf's vendor:device in its config space" 1b36:0010 \
			"$(hex16 "$D/$pf/config" 0):$(hex16 "$D/$pf/config" 2)"
		bad=
		for vf in $(tb_vfs "$pf"); do
			[ "$(od -An -tx1 -j9 -N3 "$D/$vf/config" | tr -d ' ')" = 020801 ] ||
				bad="$bad $vf:$(od -An -tx1 -j9 -N3 "$D/$vf/config" | tr -d ' ')"
			od -An -tx1 -N64 "$D/$vf/config" >/tmp/h1
			od -An -tx1 -N64 "$D/$vf/config" >/tmp/h2
			cmp -s /tmp/h1 /tmp/h2 || bad="$bad $vf:header-changed"
		done
		tb_check "$pf's VFs read class 010802 and the same header twice${bad:+ (not:$bad)}" test -z "$bad"
	done

	# the nvme driver on the PF, whose config space is ECAM now: its
	# namespace reads back what was written
	pf=$(echo "$pfs" | head -n 1)
	ns=$(ls "$D/$pf"/nvme/nvme*/ 2>/dev/null | grep -m1 '^nvme[0-9]*n1$')
	tb_check "$pf's namespace 1 ($ns)" test -n "$ns" -a -b "/dev/$ns"
	if [ -n "$ns" ]; then
		dd if=/dev/urandom of=/tmp/pattern bs=64k count=16 2>/dev/null
		dd if=/tmp/pattern of="/dev/$ns" bs=64k count=16 oflag=direct conv=fsync 2>/dev/null
		blockdev --flushbufs "/dev/$ns"
		dd if="/dev/$ns" of=/tmp/back bs=64k count=16 iflag=direct 2>/dev/null
		tb_check "/dev/$ns reads back the 1 MiB written" cmp -s /tmp/pattern /tmp/back
	fi

	for pf in $pfs; do tb_check "$pf's VFs disabled" tb_disable_vfs "$pf"; done
	dmesg >/tmp/kmsg.all
	tb_check "no kernel report" sh -c "! grep -Eq '$TB_KMSG_REPORT' /tmp/kmsg.all"
	grep -E "$TB_KMSG_REPORT" /tmp/kmsg.all | head -n 40 | tb_info
	tb_finish
}
