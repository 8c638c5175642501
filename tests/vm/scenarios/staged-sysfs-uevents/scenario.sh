# A uevent listener (busybox uevent, one handler run per event, in order)
# logs SEQNUM ACTION DEVPATH and whether the device's directory was
# complete (uevent, config, vendor, subsystem) when the event was
# handled; a poller scans the PF's directory for VF directories while the
# VFs are added and logs any it sees without those entries.  Then two VFs
# are bound to vfio-pci.  Checks: every VF is announced once (add), after
# no event of its own; its directory is complete at its add; its bind
# follows its add; SEQNUMs rise; the poller never saw a half-built VF.
N=32
complete() {  # complete DIR: entries device_add() creates for a VF
	[ -e "$1/uevent" ] && [ -e "$1/config" ] && [ -e "$1/vendor" ] && [ -e "$1/subsystem" ]
}

stage1() {
	pf=$(tb_pfs)
	tb_check "one SR-IOV PF" test "$(echo "$pf" | wc -w)" -eq 1
	tb_set_autoprobe 0
	cat >/tmp/ev.sh <<'EOS'
#!/bin/sh
s=partial
[ -e "/sys$DEVPATH/uevent" ] && [ -e "/sys$DEVPATH/config" ] && [ -e "/sys$DEVPATH/vendor" ] && [ -e "/sys$DEVPATH/subsystem" ] && s=complete
echo "$SEQNUM $ACTION $DEVPATH $s" >>/tmp/ev.log
EOS
	chmod +x /tmp/ev.sh
	: >/tmp/ev.log
	uevent /tmp/ev.sh &
	ev_pid=$!
	sleep 1
	pfdir=$(readlink -f /sys/bus/pci/devices/$pf/..)
	(
		while [ ! -e /tmp/stop-poll ]; do
			for d in "$pfdir"/0000:??:??.?; do
				[ -e "$d" ] || continue
				case $(basename "$d") in "$pf") continue ;; esac
				complete "$d" || echo "half-built: $d" >>/tmp/poll.log
			done
		done
	) &
	poll_pid=$!
	echo $N >"/sys/bus/pci/devices/$pf/sriov_numvfs"
	tb_check "$pf: $N VFs" test "$(tb_count_vfs "$pf")" -eq $N
	vfs=$(tb_vfs "$pf")
	v1=$(echo "$vfs" | sed -n 1p) v2=$(echo "$vfs" | sed -n 2p)
	tb_check "$v1 bound to vfio-pci" tb_bind_vfio "$v1"
	tb_check "$v2 bound to vfio-pci" tb_bind_vfio "$v2"
	sleep 3
	touch /tmp/stop-poll
	wait $poll_pid
	kill $ev_pid
	tb_info </tmp/ev.log
	[ -e /tmp/poll.log ] && head -5 /tmp/poll.log | tb_info
	tb_check "the poller never saw a half-built VF directory" test ! -s /tmp/poll.log
	tb_check "SEQNUMs rise" sh -c 'awk "NR > 1 && \$1 <= p { exit 1 } { p = \$1 }" /tmp/ev.log'
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
