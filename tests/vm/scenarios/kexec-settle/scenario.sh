# kexec with VFs enabled on 4 PFs; stage 2 measures kernel start -> init
# and the SR-IOV re-enable right after boot, and checks the settle rule:
# after VF Enable is cleared, nothing re-enables the VFs within 1 s.
VFS=8

stage1() {
	pfs=$(tb_pfs)
	tb_check "4 SR-IOV PFs" test "$(echo $pfs | wc -w)" -eq 4
	for pf in $pfs; do
		tb_check "$pf: $VFS VFs enabled" tb_enable_vfs "$pf" "$VFS"
	done
	cmdline=$(sed 's/luod_tb\.stage=[0-9]*/luod_tb.stage=2/' /proc/cmdline)
	tb_check "kexec -s -l the same kernel" \
		kexec -s -l /luod-tb/bzImage --initrd=/luod-tb/initrd.gz --command-line="$cmdline"
	if [ -n "${KEXEC_SETTLE_HANDOVER:-}" ]; then
		tb_check "pci_iov.kexec_settle_handover set" \
			sh -c 'echo 1 >/sys/module/pci_iov/parameters/kexec_settle_handover'
	elif [ -e /sys/module/pci_iov/parameters/kexec_settle_handover ]; then
		# Without KHO (no kho=on) the handover cannot be set: the write
		# fails with EOPNOTSUPP and the parameter stays off.  (The base
		# kernel, which bench/kexec-settle also runs, has no parameter.)
		tb_check "pci_iov.kexec_settle_handover refused without KHO" \
			sh -c '! echo 1 2>/tmp/ho.err >/sys/module/pci_iov/parameters/kexec_settle_handover'
		tb_check "the refusal is EOPNOTSUPP: '$(cat /tmp/ho.err 2>/dev/null)'" grep -q "not supported" /tmp/ho.err
		tb_check "pci_iov.kexec_settle_handover stays N" \
			grep -qx N /sys/module/pci_iov/parameters/kexec_settle_handover
	fi
	[ "$TB_FAILED" -eq 0 ] || { tb_finish; return; }
	if [ -n "${KEXEC_SETTLE_DISABLE_FIRST:-}" ]; then
		tb_say "HOSTMARK disable-start"
		t0=$(tb_us)
		for pf in $pfs; do echo 0 >"/sys/bus/pci/devices/$pf/sriov_numvfs" & done
		wait
		tb_figure disable-4pf-parallel "$(tb_elapsed_ms "$t0" "$(tb_us)")" ms
	else
		tb_say "HOSTMARK disable-start"
	fi
	tb_say "HOSTMARK kexec-e"
	kexec -e
	tb_abort "kexec -e returned: $?"
}

stage2() {
	# Kernel start to init in this kernel (guest clock): PCI enumeration,
	# and on a base kernel the 1 s settle sleep per PF found with VF Enable
	# set.  The host's kexec-e -> init-stage2 marks add the old kernel's
	# shutdown (bench/kexec-settle).
	tb_figure stage2-uptime-at-init "$(awk -v u="$TB_UPTIME0" 'BEGIN { printf "%.0f", u * 1000 }')" ms
	pfs=$(tb_pfs)
	for pf in $pfs; do
		tb_check "$pf: sriov_numvfs 0 after the kexec" grep -qx 0 "/sys/bus/pci/devices/$pf/sriov_numvfs"
	done
	# SR-IOV re-enable right after boot, PF after PF (what luod would do
	# first; no settle may be left to wait out by now).  Each write's time
	# from tb_enable_vfs in this shell: the loop must take their sum.
	t0=$(tb_us)
	for pf in $pfs; do tb_enable_vfs "$pf" "$VFS" >"/tmp/reenable-$pf" || echo "$pf" >>/tmp/reenable-failed; done
	reenable=$(tb_elapsed_ms "$t0" "$(tb_us)")
	parts=
	for pf in $pfs; do
		tb_check "$pf: $VFS VFs re-enabled" test "$(tb_count_vfs "$pf")" -eq "$VFS"
		parts="$parts $(cat "/tmp/reenable-$pf")"
	done
	tb_check "no re-enable failed" test ! -e /tmp/reenable-failed
	tb_figure reenable-4pf-after-boot "$reenable" ms
	tb_check_serial "re-enable of the 4 PFs after boot" "$reenable" $parts

	# The settle rule still holds: disable, then re-enable at once.
	pf=$(echo $pfs | cut -d' ' -f1)
	t0=$(tb_us)
	echo 0 >"/sys/bus/pci/devices/$pf/sriov_numvfs"
	t1=$(tb_us)
	echo "$VFS" >"/sys/bus/pci/devices/$pf/sriov_numvfs"
	t2=$(tb_us)
	off=$(tb_elapsed_ms "$t0" "$t1") on=$(tb_elapsed_ms "$t1" "$t2")
	tb_figure disable-1pf "$off" ms
	tb_figure immediate-reenable-1pf "$on" ms
	tb_check "VF Enable cleared -> set again no sooner than 1 s (disable took $off ms)" \
		awk -v t="$(tb_elapsed_ms "$t0" "$t1")" 'BEGIN { exit !(t >= 1000) }'
	tb_check "$pf: the immediate re-enable gave $VFS VFs" grep -qx "$VFS" "/sys/bus/pci/devices/$pf/sriov_numvfs"
	tb_finish
}
