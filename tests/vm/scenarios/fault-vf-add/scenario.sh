# A sriov_numvfs write of 2 VFs, with its Nth fault-injection point failing,
# for N = 1, 2, ... until the write makes fewer than N (tb-fail-nth; CONFIG_FAILSLAB,
# failslab/ignore-gfp-wait N so GFP_KERNEL allocations count).  The failure
# lands anywhere on the enable path: sriov_enable(), the VF's scan, its
# device_add() (device_private, kobject name, the staged window, kernfs
# nodes, the publication), the bus notifiers (IOMMU group), the virtfn and
# physfn links.
#
# After every attempt:
#  - no kernel report in the log other than the injection's own stack dump:
#    no Oops, BUG, WARNING, KASAN, list or refcount corruption (but the
#    IOMMU core's WARN of ALLOWED_WARN, counted);
#  - a failed write left the PF clean: sriov_numvfs 0, no VF device, no
#    virtfn link;
#  - a successful one left 2 VFs, which are removed again (sriov_numvfs 0).
# At the end 2 VFs are enabled without injection, bound to vfio-pci and
# disabled: the PF is usable after the sweep.  The figures count the
# injections and those that hit a VF's device_add().
#
# Without the fix for a VF whose device_add() failed
# (kernel/patches/2-pci-fixes/0001) the first injection that makes a VF's
# device_add() fail (attempt 3) oopses in device_del() (NULL dev->p).
N=2
MAXN=$(tb_arg maxn || echo 5000)
D=/sys/bus/pci/devices
FI=/sys/kernel/debug/failslab

# WARNs of code outside the series that an injected allocation failure
# reaches, kept out of the verdict (counted in the figures): the IOMMU
# core WARNs when it cannot attach a new device to its group's default
# domain (iommu_setup_default_domain(), drivers/iommu/iommu.c), which a
# failed allocation in intel_iommu_attach_device() causes; the VF then
# registers without a working DMA domain, as 7.3 does.
ALLOWED_WARN='WARNING: .* at iommu_setup_default_domain'

stage1() {
	local pfs pf nth out werr inj bad=0 ninj=0 nfail=0 nok=0 ndevadd=0 nstaged=0 nlink=0
	pfs=$(tb_pfs)
	pf=$(echo $pfs | cut -d' ' -f1)
	tb_check "one SR-IOV PF" test "$(echo $pfs | wc -w)" -eq 1
	tb_check "failslab in debugfs ($FI)" test -d $FI
	tb_check "fail-nth (/proc/thread-self/fail-nth)" test -e /proc/thread-self/fail-nth
	echo N >$FI/ignore-gfp-wait
	echo 2 >$FI/verbose
	tb_set_autoprobe 0
	dmesg -c >/dev/null
	rm -f /tmp/kmsg.inj /tmp/kmsg.allowed
	echo "sweep: sriov_numvfs=$N on $pf with fault N failing, N = 1.. (at most $MAXN)" | tb_info
	nth=1
	while [ $nth -le "$MAXN" ]; do
		tb_log "attempt $nth"
		if ! tb_fail_attempt $nth $D/$pf/sriov_numvfs $N "$ALLOWED_WARN"; then
			bad=1
			break
		fi
		out=$(cat /tmp/fail.out)
		werr=${out% *} inj=${out#* }
		[ "$inj" = 1 ] && ninj=$((ninj + 1))
		if [ "$werr" = 0 ]; then nok=$((nok + 1)); else nfail=$((nfail + 1)); fi
		tb_fault_write_after $pf $N "$werr" "attempt $nth (write errno $werr, injected $inj)" ||
			{ bad=1; break; }
		[ "$inj" = 1 ] || break
		[ $((nth % 100)) -eq 0 ] && echo "attempt $nth: $nfail writes failed, $nok succeeded so far" | tb_info
		nth=$((nth + 1))
	done
	if [ $bad = 0 ]; then
		tb_check "the sweep ended (attempt $nth made fewer than $nth injectable calls; at most $MAXN)" test "$inj" = 0
		tb_say "CHECK ok every failed write left the PF clean and the kernel log without a report ($nfail failed, $nok succeeded)"
	fi
	if [ $bad = 1 ]; then
		# the writer may have died holding the PF's device lock: stop here
		tb_finish
		return
	fi
	[ -f /tmp/kmsg.inj ] || : >/tmp/kmsg.inj
	# each line is one injection's stack (innermost first, one token a frame)
	ndevadd=$(grep ' device_add+' /tmp/kmsg.inj | grep -c ' pci_iov_add_virtfn+' || true)
	nstaged=$(grep -c 'device_staged\|kernfs_publish\|sysfs_publish' /tmp/kmsg.inj || true)
	nlink=$(grep -c 'pci_iov_bus_notify\|pci_iov_sysfs_link' /tmp/kmsg.inj || true)
	tb_figure allowed-upstream-warns "$(grep -c 'WARNING:' /tmp/kmsg.allowed 2>/dev/null || echo 0)" count
	tb_figure injections "$ninj" count
	tb_figure writes-failed "$nfail" count
	tb_figure injections-in-vf-device-add "$ndevadd" count
	tb_figure injections-in-staging "$nstaged" count
	tb_figure injections-in-vf-links "$nlink" count
	tb_check "the sweep reached a VF's device_add() ($ndevadd injections below pci_iov_add_virtfn -> device_add)" test "$ndevadd" -gt 0
	echo 0 >$FI/verbose
	tb_fault_sweep_end $pf $N "$ALLOWED_WARN"
	tb_finish
}
