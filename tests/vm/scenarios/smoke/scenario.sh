# Smoke scenario: SR-IOV, vfio-pci, VF settings over netlink, then a real
# kexec with an appended cpio archive; the second kernel checks what
# survived.  luod_tb.break=no-kexec|no-marker|no-vfs makes it fail on purpose.

IGB_VF_MAC=02:1a:2b:3c:4d:5e
IGB_VF_VLAN=42

stage1() {
	tb_figure stage1-uptime-at-init "$(awk -v u="$TB_UPTIME0" 'BEGIN { printf "%.0f", u * 1000 }')" ms
	tb_check "/dev/liveupdate exists (kho=on liveupdate=on)" test -c /dev/liveupdate
	expected=$(tb_hw_pfs | wc -l)
	pfs=$(tb_pfs)
	tb_check "$expected SR-IOV PFs enumerated ($(echo $pfs))" test "$(echo "$pfs" | wc -w)" -eq "$expected"

	for pf in $pfs; do
		kind=$(tb_pf_kind "$pf")
		total=$(cat "/sys/bus/pci/devices/$pf/sriov_totalvfs")
		want=$total
		[ "$TB_BREAK" = no-vfs ] && want=0
		if ms=$(tb_enable_vfs "$pf" "$want"); then
			tb_figure "vf-enable-$kind-$pf-${want}vfs" "$ms" ms
		fi
		tb_check "$pf ($kind): $total VFs appear" test "$(tb_count_vfs "$pf")" -eq "$total"
		tb_check "$pf ($kind): sriov_numvfs reads $total" test "$(cat /sys/bus/pci/devices/$pf/sriov_numvfs)" -eq "$total"

		if [ "$kind" = nvme ]; then
			for vf in $(tb_vfs "$pf" | head -n 2); do
				tb_check "$vf bound to vfio-pci via driver_override" tb_bind_vfio "$vf"
				tb_check "$vf has $(tb_vfio_dev "$vf")" test -c "$(tb_vfio_dev "$vf")"
			done
		fi
		if [ "$kind" = igb ]; then
			dev=$(ls "/sys/bus/pci/devices/$pf/net" 2>/dev/null | head -n 1)
			tb_check "$pf has a netdev ($dev)" test -n "$dev"
			tb_check "ip link set $dev vf 0 mac $IGB_VF_MAC vlan $IGB_VF_VLAN" \
				"$IP" link set "$dev" vf 0 mac "$IGB_VF_MAC" vlan "$IGB_VF_VLAN"
			"$IP" link show "$dev" >/tmp/iplink.out 2>&1
			sed 's/^/    /' /tmp/iplink.out >/dev/console
			tb_check "$dev vf 0 reads back MAC $IGB_VF_MAC, VLAN $IGB_VF_VLAN" \
				grep -Eq "vf 0 .*link/ether $IGB_VF_MAC.*vlan $IGB_VF_VLAN" /tmp/iplink.out
		fi
	done

	# The marker travels in a cpio archive appended (after 4-byte padding)
	# to the same gzip'd initramfs; the kexec command line names it.
	run=$(cat /proc/sys/kernel/random/uuid)
	mkdir -p /tmp/marker/luod-tb
	tsc=$(tb-clock tsc)
	echo "run=$run tsc=$tsc tsc_khz=$(tb_tsc_khz)" >/tmp/marker/luod-tb/marker
	[ "$TB_BREAK" = no-marker ] && rm -r /tmp/marker/luod-tb   # an empty archive
	tb_carry_initrd /tmp/marker
	cmdline=$(sed -e 's/luod_tb\.stage=[0-9]*/luod_tb.stage=2/' -e 's/ luod_tb\.run=[^ ]*//' /proc/cmdline)
	tb_check "kexec -s -l loads the same kernel + initramfs + marker" \
		kexec -s -l /luod-tb/bzImage --initrd=/tmp/initrd2 --command-line="$cmdline luod_tb.run=$run"

	if [ "$TB_FAILED" -ne 0 ]; then
		tb_finish
		return
	fi
	if [ "$TB_BREAK" = no-kexec ]; then
		tb_log "break=no-kexec: powering off instead of kexec -e"
		return
	fi
	tb_say "HOSTMARK kexec-e"
	tb_log "kexec -e (tsc $(tb-clock tsc))"
	kexec -e
	tb_abort "kexec -e returned: $?"
}

stage2() {
	marker=/luod-tb/marker
	tb_check "booted by kexec: luod_tb.run= on the command line" tb_arg run
	# ls, not test -f: a failed check's output (ls's error) is what
	# break=no-marker shows the runner forwarding (tests/vm/meson.build).
	tb_check "marker file from the appended cpio archive exists" ls "$marker"
	if [ -f "$marker" ]; then
		run=$(tb_arg run)
		tb_check "marker belongs to this kexec (run=$run)" grep -q "run=$run " "$marker"
		tsc_before=$(sed -n 's/.*tsc=\([0-9]*\).*/\1/p' "$marker")
		khz=$(sed -n 's/.*tsc_khz=\([0-9]*\).*/\1/p' "$marker")
		# TB_TSC0 was read at the top of /init in this kernel.
		tb_check "TSC kept counting across kexec ($tsc_before -> $TB_TSC0)" \
			awk -v a="$tsc_before" -v b="$TB_TSC0" 'BEGIN { exit !(b > a) }'
		if [ -n "$khz" ] && [ "$khz" -gt 0 ]; then
			tb_figure kexec-e-to-init-tsc "$(awk -v a="$tsc_before" -v b="$TB_TSC0" -v k="$khz" \
				'BEGIN { printf "%.0f", (b - a) / k }')" ms
		fi
	fi
	tb_figure stage2-uptime-at-init "$(awk -v u="$TB_UPTIME0" 'BEGIN { printf "%.0f", u * 1000 }')" ms
	tb_check "/dev/liveupdate exists in the second kernel" test -c /dev/liveupdate
	expected=$(tb_hw_pfs | wc -l)
	pfs=$(tb_pfs)
	tb_check "$expected SR-IOV PFs enumerated again" test "$(echo "$pfs" | wc -w)" -eq "$expected"
	for pf in $pfs; do
		tb_check "$pf: sriov_numvfs is 0 after kexec" test "$(cat /sys/bus/pci/devices/$pf/sriov_numvfs)" -eq 0
	done
	tb_finish
}
