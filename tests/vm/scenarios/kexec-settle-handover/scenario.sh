# The SR-IOV settle at kexec handed to the next kernel (kernel patch 1/2).
# Stage 1 enables 8 VFs on 4 PFs, turns pci_iov.kexec_settle_handover on
# and kexecs (kexec_file_load, KHO on): the old kernel clears VF Enable and
# leaves the rest of the second to the next kernel.  Stage 2 checks that
# this kernel received it and waited it out before its first read of an
# SR-IOV capability (dmesg, this kernel's clock; host-check checks the
# same across both kernels with the host's), re-enables the VFs, turns the
# handover off and kexecs again, the parameter on the next command line.
# Stage 3 checks that nothing was handed over that time (the old kernel
# waited itself), and that the parameter from its command line is set
# with its subtree.
VFS=8

# dmesg timestamp (s) of the first line containing $1, and the line
dmesg_line() { dmesg | grep -m1 -F "$1"; }
dmesg_ts() { echo "$1" | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'; }

# The handover's KHO subtree as the outgoing kernel's KHO debugfs shows it
SUBTREE=/sys/kernel/debug/kho/out/sub_fdts/pci-sriov-settle

enable_and_kexec() {  # enable_and_kexec HANDOVER(0|1) NEXT_STAGE
	local pfs pf param=/sys/module/pci_iov/parameters/kexec_settle_handover cmdline
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo $pfs | wc -w)" -eq 4
	for pf in $pfs; do
		[ "$(tb_count_vfs "$pf")" -eq "$VFS" ] || tb_check "$pf: $VFS VFs enabled" tb_enable_vfs "$pf" "$VFS"
	done
	tb_check "$param exists" test -w "$param"
	# The subtree and its preserved page exist only while the handover
	# is set: none at boot (the parameter is off), one once it is set,
	# none again once it is cleared.
	tb_check "$param off at boot" grep -qx N "$param"
	tb_check "no KHO subtree while the handover is off" test ! -e "$SUBTREE"
	echo 1 >"$param"
	tb_check "$param set: reads back Y" grep -qx Y "$param"
	tb_check "$param set: the KHO subtree is added" test -e "$SUBTREE"
	if [ "$1" = 0 ]; then
		echo 0 >"$param"
		tb_check "$param cleared: reads back N" grep -qx N "$param"
		tb_check "$param cleared: the KHO subtree is removed" test ! -e "$SUBTREE"
	fi
	cmdline=$(sed "s/luod_tb\.stage=[0-9]*/luod_tb.stage=$2/" /proc/cmdline)
	# Stage 3's kernel gets the parameter on its command line: set
	# before KHO is up, it takes effect at device_initcall.
	[ "$2" = 3 ] && cmdline="$cmdline pci_iov.kexec_settle_handover=1"
	# The initramfs, with itself carried along for stage 2's own kexec.
	[ "$2" = 2 ] && tb_carry_self
	tb_check "initramfs for the next kernel" tb_carry_initrd
	tb_check "kexec -s -l the same kernel" \
		kexec -s -l /luod-tb/bzImage --initrd=/tmp/initrd2 --command-line="$cmdline"
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return 1; }
	tb_say "HOSTMARK kexec-e-$2"
	kexec -e
	tb_abort "kexec -e returned: $?"
}

stage1() {
	enable_and_kexec 1 2
}

stage2() {
	local got waited left w at pf
	tb_figure stage2-uptime-at-init "$(awk -v u="$TB_UPTIME0" 'BEGIN { printf "%.0f", u * 1000 }')" ms
	got=$(dmesg_line "PF(s) cleared VF Enable at kexec, ")
	waited=$(dmesg_line "of the settle handed over at kexec")
	tb_check "the handover was received: '$got'" tb_contains "$got" "SR-IOV: 4 PF(s) cleared VF Enable at kexec, "
	tb_check "the handover was waited on: '$waited'" tb_contains "$waited" "SR-IOV: waited "
	left=$(echo "$got" | sed -n 's/.* at kexec, \([0-9]*\) ms of the settle left.*/\1/p')
	w=$(echo "$waited" | sed -n 's/.* waited \([0-9]*\) ms of .*/\1/p')
	at=$(echo "$waited" | sed -n 's/.* capability read at \([0-9]*\) ms.*/\1/p')
	# What the old kernel left: the second minus the few ms between its
	# last VF Enable clear and its syscore shutdown.
	tb_check "settle left by the old kernel ($left ms) in (0, 1000]" \
		awk -v l="$left" 'BEGIN { exit !(l != "" && l > 0 && l <= 1000) }'
	# The first SR-IOV capability read comes at least that long after this
	# kernel's clock started (CLOCK_MONOTONIC, the clock the kernel waits
	# on; printk's sched_clock differs from it by tens of ms under TCG).
	# The old kernel's last steps, purgatory and this kernel's start
	# before its clock are on top of it: host-check, on the host's clock.
	tb_check "first SR-IOV read at $at ms of this kernel's clock >= the $left ms left (waited $w ms)" \
		awk -v a="$at" -v l="$left" 'BEGIN { exit !(a != "" && a >= l) }'
	tb_figure handover-left "$left" ms
	tb_figure handover-waited "$w" ms
	for pf in $(tb_pfs); do
		tb_check "$pf: sriov_numvfs 0 after the kexec" grep -qx 0 "/sys/bus/pci/devices/$pf/sriov_numvfs"
	done
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	enable_and_kexec 0 3
}

stage3() {
	local pf
	tb_figure stage3-uptime-at-init "$(awk -v u="$TB_UPTIME0" 'BEGIN { printf "%.0f", u * 1000 }')" ms
	tb_check "pci_iov.kexec_settle_handover=1 on the command line: reads Y" \
		grep -qx Y /sys/module/pci_iov/parameters/kexec_settle_handover
	tb_check "... and its KHO subtree was added at boot" test -e "$SUBTREE"
	tb_check "nothing handed over with the handover off" \
		sh -c '! dmesg | grep -q -e "cleared VF Enable at kexec, " -e "of the settle handed over"'
	for pf in $(tb_pfs); do
		tb_check "$pf: sriov_numvfs 0 after the kexec" grep -qx 0 "/sys/bus/pci/devices/$pf/sriov_numvfs"
		tb_check "$pf: $VFS VFs re-enabled" tb_enable_vfs "$pf" "$VFS"
	done
	tb_finish
}
