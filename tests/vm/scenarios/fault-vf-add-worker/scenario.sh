# A sriov_numvfs write of 8 VFs with one slab allocation of an unbound
# kworker failing, for a sweep of points in the kworkers' allocations.
# With 2 CPUs, sriov_add_vfs() adds VF 0 in the writer and VFs 1..7 from
# the writer and one worker on system_unbound_wq (kernel/patches/
# 9-vf-parallel); fault-vf-add's fail-nth is per task and so never fails
# the worker.  Here failslab's task filter is on and every kworker/u
# thread has make-it-fail set; `space` BYTES lets that many bytes of their
# allocations through and fails the next one (`times` 1), for BYTES = 0,
# STEP, 2 x STEP, ... up to MAXB (luod_tb.step, luod_tb.maxb).
#
# After every attempt, as in fault-vf-add:
#  - no kernel report in the log other than the injection's own stack dump
#    (but the IOMMU core's WARN of ALLOWED_WARN, counted);
#  - a failed write left the PF clean: sriov_numvfs 0, no VF device, no
#    virtfn link;
#  - a successful one left 8 VFs, which are removed again.
# Checks at the end: some injections landed in a worker's VF addition
# (sriov_add_work -> pci_iov_add_virtfn in the injection's stack) and made
# the write fail, and the PF works afterwards (8 VFs, one bound to
# vfio-pci).
N=8
STEP=$(tb_arg step || echo 2048)
MAXB=$(tb_arg maxb || echo 196608)
D=/sys/bus/pci/devices
FI=/sys/kernel/debug/failslab
ALLOWED_WARN='WARNING: .* at iommu_setup_default_domain'

# make-it-fail on every unbound kworker (new ones are made on demand, so
# before every attempt)
mark_kworkers() {
	local p c
	for p in /proc/[0-9]*; do
		read -r c <"$p/comm" 2>/dev/null || continue
		case $c in kworker/u*) echo 1 >"$p/make-it-fail" 2>/dev/null ;; esac
	done
}

stage1() {
	local pfs pf b rc left injw=0 ninj=0 nfail=0 nok=0 nworker=0 nworkerfail=0 bad=0 attempts=0
	pfs=$(tb_pfs)
	pf=$(echo $pfs | cut -d' ' -f1)
	tb_check "one SR-IOV PF" test "$(echo $pfs | wc -w)" -eq 1
	tb_check "failslab in debugfs ($FI)" test -d $FI
	tb_check "the VFs are added by workers (pci_iov.vf_add_workers $(cat /sys/module/pci_iov/parameters/vf_add_workers 2>/dev/null))" \
		test "$(cat /sys/module/pci_iov/parameters/vf_add_workers 2>/dev/null)" = 0
	echo N >$FI/ignore-gfp-wait
	echo 2 >$FI/verbose
	echo Y >$FI/task-filter
	echo 1 >$FI/interval
	tb_set_autoprobe 0
	dmesg -c >/dev/null
	rm -f /tmp/kmsg.inj /tmp/kmsg.allowed
	echo "sweep: sriov_numvfs=$N on $pf, the unbound kworkers' allocation after BYTES failing, BYTES = 0, $STEP, .. $MAXB" | tb_info
	b=0
	while [ $b -le "$MAXB" ]; do
		attempts=$((attempts + 1))
		mark_kworkers
		echo 1 >$FI/times
		echo $b >$FI/space
		echo 100 >$FI/probability
		rc=0
		echo $N >$D/$pf/sriov_numvfs 2>/dev/null || rc=1
		echo 0 >$FI/probability
		left=$(cat $FI/times)
		tb_kmsg_split "$ALLOWED_WARN"
		if grep -Eq "$TB_KMSG_REPORT" /tmp/kmsg.rest; then
			tb_check "bytes $b (write failed: $rc): no kernel report" false
			head -n 200 /tmp/kmsg.round >/dev/console
			bad=1; break
		fi
		injw=0
		if [ "$left" = 0 ]; then
			ninj=$((ninj + 1))
			[ -f /tmp/kmsg.inj ] || : >/tmp/kmsg.inj
			# this attempt's injection is the last stack line added
			if tail -n 1 /tmp/kmsg.inj | grep ' sriov_add_work+' | grep -q ' pci_iov_add_virtfn+'; then
				injw=1 nworker=$((nworker + 1))
			fi
		fi
		if [ $rc = 0 ]; then
			nok=$((nok + 1))
		else
			nfail=$((nfail + 1))
			[ $injw = 1 ] && nworkerfail=$((nworkerfail + 1))
		fi
		tb_fault_write_after $pf $N $rc "bytes $b (write failed: $rc, injected in a worker's VF: $injw)" ||
			{ bad=1; break; }
		[ $((attempts % 20)) -eq 0 ] && echo "bytes $b: $ninj injections ($nworker in a worker's VF addition), $nfail writes failed" | tb_info
		b=$((b + STEP))
	done
	echo 0 >$FI/verbose
	echo N >$FI/task-filter
	if [ $bad = 1 ]; then
		tb_finish
		return
	fi
	tb_say "CHECK ok every attempt left the PF clean or with $N VFs, and the kernel log without a report ($attempts attempts, $nfail writes failed, $nok succeeded)"
	tb_figure attempts "$attempts" count
	tb_figure injections "$ninj" count
	tb_figure injections-in-worker-vf-add "$nworker" count
	tb_figure writes-failed-by-worker-injection "$nworkerfail" count
	tb_figure allowed-upstream-warns "$(grep -c 'WARNING:' /tmp/kmsg.allowed 2>/dev/null || echo 0)" count
	tb_check "injections landed in a worker's VF addition and failed the write ($nworker injections, $nworkerfail writes failed by one)" \
		test "$nworkerfail" -gt 0
	tb_fault_sweep_end $pf $N "$ALLOWED_WARN"
	tb_finish
}
