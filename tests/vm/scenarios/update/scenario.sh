# luod end to end: record, preserve, kexec, restore in parallel, report.
# The first kernel configures SR-IOV as an operator would and saves the
# inventory (tb-inventory flat) into a cpio archive appended to the initrd;
# then `luoctl update`.  The second kernel starts luod, which must bring
# everything back by itself; the inventory must then equal the saved one
# except for what must change (IOMMU group numbers).
# Variables set by variants: UPDATE_BACKEND (luo|initrd|file), UPDATE_BREAK_PF,
# UPDATE_BREAK_HOW (unbind: the PF's driver is gone; remove: the PF is gone;
# vfio: the PF is driven by vfio-pci, which refuses the sriov_numvfs write),
# UPDATE_COLD (the new kernel does not start luod; a cold boot follows).

: "${UPDATE_BACKEND:=luo}"
LUOD_ARGS=--max-delay=3
[ "$UPDATE_BACKEND" = file ] && LUOD_ARGS="$LUOD_ARGS --backends=file"
# Inhibitors in the main scenario only: hv2 pauses for 2 s after
# PrepareForUpdate, hv3 never lets go (the 3 s maximum applies).
INHIBITORS=
[ "$UPDATE_BACKEND" = luo ] && [ -z "${UPDATE_BREAK_PF:-}" ] && INHIBITORS=1
IGB_VFS=7

stage1() {
	nvmes=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	tb_check "two nvme PFs ($(echo $nvmes)) and one igb PF ($igb)" \
		test "$(echo $nvmes | wc -w)" -eq 2 -a -n "$igb"
	tb_check "luod starts on the system bus" tb_start_luod $LUOD_ARGS
	tb_check "luoctl status says idle" sh -c 'luoctl status | grep -q "state:   idle"'

	tb_enable_all_vfs $nvmes $igb
	tb_bind_vfio_some $nvmes      # some VFs of each nvme PF on vfio-pci
	dev=$(tb_pf_netdev "$igb")
	tb_check "igb VF 1: MAC, VLAN 77, trust on" "$IP" link set "$dev" vf 1 mac 02:aa:bb:cc:dd:01 vlan 77 trust on
	tb_check "igb VF 4: MAC, VLAN 4000 qos 3" "$IP" link set "$dev" vf 4 mac 02:aa:bb:cc:dd:04 vlan 4000 qos 3
	tb_check "igb VF 6: trust on, spoofchk off" "$IP" link set "$dev" vf 6 trust on spoofchk off
	luoctl vfs 2>&1 | tb_info
	# A hypervisor assigns VFs of both nvme PFs to two guests (by PF identity
	# and VF index); the assignments must come back after the kexec.
	n0=$(echo $nvmes | cut -d' ' -f1) n1=$(echo $nvmes | cut -d' ' -f2)
	id0=$(tb_pf_identity "$n0") id1=$(tb_pf_identity "$n1")
	tb_check "a consumer assigns VF 0 and 2 of $n0 to vm-a, VF 1 of $n1 to vm-b" \
		tb-hypervisor hv1 assign vm-a "$id0" 0 assign vm-a "$id0" 2 assign vm-b "$id1" 1
	mkdir -p /tmp/carry/luod-tb
	tb-hypervisor hv1 list | grep '^assignment' | sort >/tmp/carry/luod-tb/assignments-before
	tb_check "... and a VF held by vm-a is refused to vm-b (EBUSY, naming vm-a)" \
		sh -c "tb-hypervisor hv2 assign vm-b '$id0' 2 2>&1 | grep -q 'held by guest vm-a of consumer hv1'"

	# The inventory before, for the second kernel.
	tb_save_inventory
	tb_carry_initrd

	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --dry-run >/tmp/plan 2>&1
	tb_check "luoctl update --dry-run plans the $UPDATE_BACKEND backend" grep -q "\"backend\": \"$UPDATE_BACKEND\"" /tmp/plan
	tb_check "dry run changed nothing (state idle)" sh -c 'luoctl status | grep -q "state:   idle"'
	tb_check "the plan loads the kernel with kexec_file_load(2)" grep -q '"loader": "kexec_file_load"' /tmp/plan
	tb_check "preflight: the new kernel has the PF and VF drivers" \
		grep -q '"drivers": "present in .*lib.*modules' /tmp/plan
	mount --bind /luod-tb/modules-no-igb /lib/modules
	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --dry-run >/tmp/plan-no-igb 2>&1
	tb-hypervisor - dry-run /luod-tb/bzImage /tmp/initrd2 >/tmp/plan-no-igb.bus 2>&1
	umount /lib/modules
	tb_check "preflight: a new kernel without igb is refused, naming the PF" \
		grep -q "lacks drivers: PF $igb (igb): no driver in .* matches pci:v00008086" /tmp/plan-no-igb
	tb_check "... as org.luod1.Error.DriversMissing" grep -q '\[org.luod1.Error.DriversMissing\]$' /tmp/plan-no-igb.bus
	check_invalid_record
	tb_check "a missing kernel image is refused, naming it" \
		sh -c 'luoctl update --kernel /nonexistent --yes 2>&1 | grep -q "/nonexistent"'
	tb_check "a file kexec cannot load is refused, nothing changes" \
		sh -c 'luoctl update --kernel /luod-tb/hardware --yes 2>&1 | grep -q "kexec_file_load refused /luod-tb/hardware"'
	tb_check "... luod says failed, no kernel loaded" \
		sh -c 'luoctl status | grep -q "state:   failed" && grep -qx 0 /sys/kernel/kexec_loaded'
	[ "$UPDATE_BACKEND" = initrd ] && check_swapped_kernel
	tb_inventory >/tmp/inventory-now
	tb_check "... and the VFs are untouched" cmp /tmp/inventory-now /tmp/carry/luod-tb/inventory-before

	if [ "$TB_FAILED" -ne 0 ]; then
		tb_show_luod_log
		tb_finish
		return
	fi
	if [ -n "$INHIBITORS" ]; then
		id0=$(tb_pf_identity "$(echo $nvmes | cut -d' ' -f1)")
		TB_HOSTMARK=1 tb-hypervisor hv2 assign vm-c "$id0" 5 inhibit delay "pausing vm-c" 2 >/tmp/hv2.out 2>&1 &
		id1=$(tb_pf_identity "$(echo $nvmes | cut -d' ' -f2)")
		tb-hypervisor hv3 assign vm-d "$id1" 3 inhibit delay "stuck" 600 >/tmp/hv3.out 2>&1 &
		tb-hypervisor hv4 inhibit block "migrating vm-d" 600 >/tmp/hv4.out 2>&1 &
		hv4=$!
		n=0
		until grep -q held /tmp/hv2.out 2>/dev/null && grep -q held /tmp/hv3.out 2>/dev/null &&
			grep -q held /tmp/hv4.out 2>/dev/null; do
			n=$((n + 1)); [ $n -gt 300 ] && break; sleep 0.1
		done
		tb_check "a block inhibitor refuses the update with its holder's reason, nothing changes" \
			sh -c 'luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 --yes 2>&1 |
				grep -q "Update blocked by consumer hv4: migrating vm-d" && grep -qx 0 /sys/kernel/kexec_loaded'
		kill "$hv4"
		sleep 0.5
	fi
	# luoctl prints each Phase as luod enters it; "persist" follows the wait
	# for delay inhibitors at once: the host stamps that moment (HOSTMARK
	# luod-persist), the blackout start of the guest whose consumer never
	# let go (hv3's vm-d).
	tb_update_kexec 2
}

# A record the next kernel's luod could not read is refused in the
# preflight, dry runs included: a VF's driver_override that is not UTF-8
# (the kernel takes any bytes).  No module indexes for the new kernel (an
# empty /lib/modules), so the driver check does not refuse it first.
check_invalid_record() {
	local vf
	vf=$(tb_vfs "$igb" | tail -n 1)
	mkdir -p /tmp/no-modules
	mount --bind /tmp/no-modules /lib/modules
	printf '\377vfio\n' >"/sys/bus/pci/devices/$vf/driver_override"
	tb-hypervisor - dry-run /luod-tb/bzImage /tmp/initrd2 >/tmp/plan-invalid.bus 2>&1
	echo >"/sys/bus/pci/devices/$vf/driver_override"
	umount /lib/modules
	tb_info </tmp/plan-invalid.bus
	tb_check "preflight: a VF driver_override that is not UTF-8 is refused as org.luod1.Error.InvalidRecord" \
		grep -q 'driver_override.*\[org.luod1.Error.InvalidRecord\]$' /tmp/plan-invalid.bus
	tb_check "... and the override is gone again" \
		sh -c "[ \"\$(cat /sys/bus/pci/devices/$vf/driver_override)\" = '(null)' ]"
}

# The initrd backend loads after the wait for delay inhibitors, long after
# the preflight opened the kernel: a real kernel renamed over its path in
# that window must not be loaded (it was never checked); the update is
# refused naming it, luoctl exits 6, nothing is loaded.
check_swapped_kernel() {
	local hv upd rc n
	cp /luod-tb/bzImage /tmp/swap-k
	tb-hypervisor hvS inhibit delay "pausing" 600 >/tmp/hvS.out 2>&1 &
	hv=$!
	n=0
	until grep -q held /tmp/hvS.out 2>/dev/null; do n=$((n + 1)); [ $n -gt 300 ] && break; sleep 0.1; done
	luoctl update --kernel /tmp/swap-k --initrd /tmp/initrd2 --append "luod_tb.stage=99" --yes >/tmp/swap.out 2>&1 &
	upd=$!
	n=0
	until grep -q "^prepare " /tmp/hvS.out 2>/dev/null; do n=$((n + 1)); [ $n -gt 300 ] && break; sleep 0.1; done
	cp /luod-tb/bzImage /tmp/swap-k2
	mv /tmp/swap-k2 /tmp/swap-k
	kill "$hv"
	rc=0
	wait "$upd" || rc=$?
	cat /tmp/swap.out | tb_info
	tb_check "a kernel renamed over after the preflight is refused by name (luoctl exit 6, was $rc)" \
		sh -c "[ $rc -eq 6 ] && grep -q 'kexec_file_load refused /tmp/swap-k: the kernel image changed' /tmp/swap.out"
	tb_check "... and nothing is loaded" grep -qx 0 /sys/kernel/kexec_loaded
	rm -f /tmp/swap-k
}

# inhibitor_held CONSUMER TIMED_OUT: the consumer's held_ms in the flat
# report (/tmp/report.flat) when its timed_out is TIMED_OUT (true, false);
# nothing otherwise.
inhibitor_held() {
	sed -n "s/.*\"consumer\":\"$1\",\"held_ms\":\([0-9.]*\),\"timed_out\":$2[,}].*/\1/p" /tmp/report.flat
}

# inhibitor_in_range CONSUMER TIMED_OUT LO HI: true when the consumer's
# held_ms (inhibitor_held) is in [LO, HI) ms; otherwise prints the report's
# inhibitors, the output of the failed check.
inhibitor_in_range() {
	local held
	held=$(inhibitor_held "$1" "$2")
	awk -v h="$held" -v lo="$3" -v hi="$4" 'BEGIN { exit !(h != "" && h >= lo && h < hi) }' && return 0
	sed 's/.*"inhibitors"/inhibitors/; s/\].*/]/' /tmp/report.flat
	echo    # report.flat has no final newline
	return 1
}

# The events each consumer got after the kexec: exactly its PFs', in kernel
# seqnum order, none before its PF's restore ended, the held ones marked.
# hv2 holds a VF of nvme PF 1 ($id0), hv3 one of nvme PF 2 ($id1).
check_events() {
	local id0 id1 p2 p3 x hv mine other f end pf0 pf1 vf0 vf1 last t0
	id0=$(tb_pf_identity "$(echo $nvmes | cut -d' ' -f1)")
	id1=$(tb_pf_identity "$(echo $nvmes | cut -d' ' -f2)")
	tb-hypervisor hv2 restored events 3 >/tmp/hv2-ev.out 2>&1 &
	p2=$!
	tb-hypervisor hv3 restored events 3 >/tmp/hv3-ev.out 2>&1 &
	p3=$!
	wait $p2 $p3
	tb-hypervisor - fetch 0 >/tmp/all-ev.out 2>&1
	grep -c '^event ' /tmp/hv2-ev.out | sed 's/^/hv2 events: /' | tb_info
	grep -c '^event ' /tmp/hv3-ev.out | sed 's/^/hv3 events: /' | tb_info
	head -n 3 /tmp/hv2-ev.out | tb_info
	tb_check "report: device events from the udev source" \
		sh -c 'luoctl report --json | tr -d " \n" | grep -q "\"events\":{\"source\":\"udev\""'
	# Where the time from the restore's end to the release of the held
	# events went: its parts in order, adding up to the whole.
	luoctl report --json | tr -d ' \n' | sed -n 's/.*"release":{\([^}]*\)}.*/\1/p' | tr ',' '\n' |
		sed 's/"//g; s/:/ /' | awk 1 >/tmp/release.txt
	sed 's/^/events release: /' /tmp/release.txt | tb_info
	tb_check "report: events.release, the restore's end to the release, is the sum of its four parts" \
		awk '{ v[$1] = $2 } END { s = v["until_attach_ms"] + v["scan_ms"] + v["attribute_ms"] + v["udev_queue_ms"];
			exit !(NR == 5 && v["after_restore_ms"] > 0 && s - v["after_restore_ms"] < 0.5 &&
				v["after_restore_ms"] - s < 0.5) }' /tmp/release.txt
	for x in "hv2 $id0 $id1" "hv3 $id1 $id0"; do
		set -- $x
		hv=$1 mine=$2 other=$3
		f=/tmp/$hv-ev.out
		tb_check "$hv got events, all of its PF ($mine)" \
			sh -c "grep -q '^event ' $f && ! grep '^event ' $f | grep -qv '^event $mine '"
		tb_check "$hv: in strictly increasing seqnum order" \
			sh -c "grep '^event ' $f | awk 'NR > 1 && \$3 <= last { exit 1 } { last = \$3 }'"
		grep '^event ' $f | awk '{ print $3 }' >/tmp/$hv-seq
		grep "^fetched $mine " /tmp/all-ev.out | awk '{ print $3 }' >/tmp/$hv-want
		tb_check "$hv: exactly the buffered events of its PF, none lost, none twice ($(wc -l </tmp/$hv-want))" \
			cmp /tmp/$hv-want /tmp/$hv-seq
		tb_check "$hv: the events of the other PF exist and did not reach it" \
			sh -c "grep -q '^fetched $other ' /tmp/all-ev.out"
		# The PF's restore end (CLOCK_MONOTONIC us) from the report.
		end=$(luoctl report --json | tr -d ' \n\\' | sed 's/},{/}\n{/g' | grep "\"identity\":\"$mine\"" |
			sed -n 's/.*"end_monotonic_us":\([0-9]*\).*/\1/p' | head -n 1)
		[ -n "$end" ] || luoctl report --json | grep -n "end_mono\|identity" >/dev/console
		tb_check "$hv: none before its PF's restore ended (at $end us)" \
			sh -c "[ -n '$end' ] && grep '^event ' $f | sed 's/.* at=\([0-9]*\).*/\1/' | awk -v e='$end' '\$1 < e { exit 1 }'"
		tb_check "$hv: the events of the restore were held (held= > 0)" \
			sh -c "[ \$(grep '^event ' $f | grep -vc ' held=0 ') -ge 8 ]"
		# --replay-uevents: one "add" per restored VF, one SYNTH_UUID per PF.
		tb_check "$hv: its PF's 8+ VFs replayed as add events with one SYNTH_UUID" \
			sh -c "[ \$(grep '^event .* add pci .* synth=' $f | wc -l) -ge 8 ] &&
				[ \$(grep '^event .* add pci .* synth=' $f | sed 's/.*synth=//' | sort -u | wc -l) -eq 1 ]"
	done
	# A live event after the restore: a "change" written to a VF of each
	# PF (a synthetic uevent: SYNTH_UUID=0); hv2 (connected, registered again) gets its PF's one, not held,
	# after everything it had; the other PF's goes only to the buffer.
	pf0=$(echo $nvmes | cut -d' ' -f1) pf1=$(echo $nvmes | cut -d' ' -f2)
	vf0=$(tb_vfs "$pf0" | sed -n 2p) vf1=$(tb_vfs "$pf1" | sed -n 2p)
	last=$(grep '^fetched ' /tmp/all-ev.out | tail -n 1 | awk '{ print $3 }')
	tb-hypervisor hv2 events 4 >/tmp/hv2-live.out 2>&1 &
	p2=$!
	sleep 1
	echo change >"/sys/bus/pci/devices/$vf1/uevent"
	t0=$(tb-clock us)
	echo change >"/sys/bus/pci/devices/$vf0/uevent"
	wait $p2
	# From the write to hv2's DeviceEvent: udevd's work and luod's delivery.
	sed -n 's/^event .* change pci .* at=\([0-9]*\).*/\1/p' /tmp/hv2-live.out | head -n 1 |
		awk -v t0="$t0" '{ printf "live event: uevent written to DeviceEvent received %.1f ms\n", ($1 - t0) / 1000 }' |
		tb_info
	tb-hypervisor - fetch "$last" >/tmp/live-ev.out 2>&1
	tb_info </tmp/hv2-live.out
	tb_check "live: the observer sees both changes after seqnum $last" \
		sh -c "grep -q '^fetched $id0 [0-9]* change pci .*/$vf0 synth=0\$' /tmp/live-ev.out &&
			grep -q '^fetched $id1 [0-9]* change pci .*/$vf1 synth=0\$' /tmp/live-ev.out"
	tb_check "live: hv2 gets exactly its PF's change ($vf0), not held, none of before again" \
		sh -c "[ \$(grep -c '^event ' /tmp/hv2-live.out) -eq 1 ] &&
			grep -q '^event $id0 [0-9]* change pci .*/$vf0 held=0 ' /tmp/hv2-live.out &&
			[ \$(grep '^event ' /tmp/hv2-live.out | awk '{ print \$3 }') -gt $last ]"
}

# journal_wait FILE MESSAGE_ID LINE...: the export of MESSAGE_ID's entries
# into FILE, read again for up to 5 s until each LINE is a line of it.
# journald takes luod's datagrams in its own time, so an entry luod sent
# just before may not be in the journal yet (journalctl --sync would ask
# the service manager, and this guest has none); the checks on FILE then
# say what is missing.
journal_wait() {
	local f=$1 id=$2 n=0 l ok
	shift 2
	while :; do
		journalctl -o export MESSAGE_ID="$id" >"$f" 2>&1
		ok=1
		for l in "$@"; do grep -qx "$l" "$f" || ok=0; done
		if [ "$ok" = 1 ]; then
			[ "$n" -eq 0 ] || echo "journal: $id's entries complete at read $((n + 1))" | tb_info
			return 0
		fi
		[ "$n" -ge 50 ] && return 1
		n=$((n + 1))
		sleep 0.1
	done
}

# Per-guest phases in the report and the journal's structured entries.
check_guest_report() {
	local g
	luoctl report --json | tr -d ' \n' >/tmp/report.flat2
	luoctl report >/tmp/report-guests.txt 2>&1
	tb_info </tmp/report-guests.txt
	for g in vm-c vm-d; do
		sed 's/"consumer":/\n&/g' /tmp/report.flat2 | grep "\"guest\":\"$g\"" >/tmp/$g.json
		tb_check "report: $g's phases, in order, each later than the one before" sh -c "
			sed 's/\"name\":\"\([a-z-]*\)\",\"at_ms\":\([-0-9.]*\)/\n\1 \2\n/g' /tmp/$g.json |
				grep -E '^[a-z-]+ -?[0-9.]+\$' >/tmp/$g.phases
			[ \"\$(cut -d' ' -f1 /tmp/$g.phases | tr '\n' ' ')\" = 'blackout-start persist-and-kexec kernel-start luod-start pfs-enabled vfs-bound events-replayed running ' ] &&
			awk 'NR > 1 && \$2 < last { exit 1 } { last = \$2 }' /tmp/$g.phases"
		sed 's/^/    /' /tmp/$g.phases >/dev/console
	done
	journal_wait /tmp/journal-guests 6a5d2568ed744c5490da7a3bb22c65ba LUOD_GUEST=vm-c LUOD_GUEST=vm-d
	[ -s /tmp/journal-guests ] || { cat /tmp/journald.log; journalctl --no-pager | tail -n 5; } >/dev/console 2>&1
	tb_check "journal: a guest-running entry (catalog MESSAGE_ID) for vm-c and vm-d with their downtimes" \
		sh -c "grep -qx LUOD_GUEST=vm-c /tmp/journal-guests && grep -qx LUOD_GUEST=vm-d /tmp/journal-guests &&
			grep -qx 'LUOD_DOWNTIME_MS=$(sed -n 's/^running vm-c //p' /tmp/hv2-running.out)' /tmp/journal-guests"
	journalctl -x --no-pager MESSAGE_ID=6a5d2568ed744c5490da7a3bb22c65ba >/tmp/journal-x 2>&1
	tb_check "journal: the catalog explains it (journalctl -x)" grep -q "Where the time went" /tmp/journal-x
	journal_wait /tmp/journal-restore 6313cbabc01e4e02a7fdca3d2a60da04 LUOD_PFS=3
	tb_check "journal: a restore entry, 3 PFs, none failed, with the blackout" \
		sh -c "grep -qx LUOD_PFS=3 /tmp/journal-restore && grep -qx LUOD_PFS_FAILED=0 /tmp/journal-restore &&
			grep -q '^LUOD_BLACKOUT_MS=[0-9]' /tmp/journal-restore"
}

stage2() {
	tb_say "HOSTMARK stage2-init"
	nvmes=$(tb_pfs_of_kind nvme) igb=$(tb_pfs_of_kind igb)
	tb_check "booted with luod.update_id" grep -q 'luod.update_id=' /proc/cmdline
	if [ -n "${UPDATE_COLD:-}" ]; then
		# luod never runs in this kernel: the state stays on the disk.
		tb_check "state file on the disk after the kexec" test -s /var/lib/luod/state.luod-state
		cp /var/lib/luod/state.luod-state /var/lib/luod/state.copy
		tb_powercycle 3
	fi
	broken=
	if [ -n "${UPDATE_BREAK_PF:-}" ]; then
		broken=$(echo $nvmes | cut -d' ' -f2)
		if [ "${UPDATE_BREAK_HOW:-unbind}" = remove ]; then
			echo 1 >"/sys/bus/pci/devices/$broken/remove"
			nvmes=$(echo $nvmes | cut -d' ' -f1)
			broken_why="not found by its identity: No such device"
		elif [ "${UPDATE_BREAK_HOW:-unbind}" = vfio ]; then
			echo vfio-pci >"/sys/bus/pci/devices/$broken/driver_override"
			echo "$broken" >/sys/bus/pci/drivers/nvme/unbind
			echo "$broken" >/sys/bus/pci/drivers_probe
			tb_check "$broken now driven by vfio-pci" \
				test "$(basename "$(readlink "/sys/bus/pci/devices/$broken/driver")")" = vfio-pci
			broken_why="writing sriov_numvfs 8 (driven by vfio-pci now, by nvme when recorded): No such file or directory"
		else
			echo "$broken" >/sys/bus/pci/drivers/nvme/unbind
			broken_why="waiting for its driver.*Connection timed out"
		fi
		tb_log "broke $broken (${UPDATE_BREAK_HOW:-unbind}) before luod starts"
	fi
	# The main variant runs systemd-udevd (luod takes events from the udev
	# source) and journald, as a host does; the others show the kernel
	# source fallback.
	if [ -n "$INHIBITORS" ]; then
		tb_check "systemd-udevd runs" tb_start_udevd
		tb_check "systemd-journald runs" tb_start_journald
		LUOD_ARGS2=--replay-uevents
	fi
	[ -n "${UPDATE_EVENT_BUFFER:-}" ] && LUOD_ARGS2="${LUOD_ARGS2:-} --event-buffer=$UPDATE_EVENT_BUFFER"
	tb_check "luod starts" tb_start_luod --driver-wait=3 ${LUOD_ARGS2:-}
	tb_show_luod_log
	tb_say "HOSTMARK luod-ready"
	luoctl status 2>&1 | tb_info
	luoctl report >/tmp/report.txt 2>&1
	tb_info </tmp/report.txt
	luoctl report --json >/tmp/report.json 2>&1
	tb_inventory >/tmp/inventory-after

	if [ -n "$broken" ]; then
		tb_check "luod state is failed" sh -c 'luoctl status | grep -q "state:   failed"'
		tb_check "report: $broken failed, naming the PF and the errno" \
			grep -q "PF $broken .*$broken_why" /tmp/report.json
		tb-hypervisor hv1 restored >/tmp/restored.out 2>&1
		tb_check "GuestRestored to hv1: vm-b failed naming $broken, vm-a ok" \
			sh -c "grep -q '^restored hv1 vm-b failed PF $broken' /tmp/restored.out && grep -q '^restored hv1 vm-a ok' /tmp/restored.out"
		tb_check "report: guest vm-b (its VF on $broken) failed, naming the PF; vm-a ok" \
			sh -c "grep -Eq 'hv1/vm-b +1 +failed .*PF $broken' /tmp/report.txt && grep -Eq 'hv1/vm-a +2 +ok' /tmp/report.txt"
		tb-hypervisor hv1 running vm-b guests >/tmp/running-b.out 2>&1
		tb_check "GuestRunning on vm-b records a downtime; GetGuests still says failed" \
			sh -c "grep -Eq '^running vm-b [1-9]' /tmp/running-b.out && grep -Eq '^guest hv1 vm-b failed [1-9]' /tmp/running-b.out"
		tb_check "report: the two other PFs ok" tb_report_pfs_ok 2
		tb_check_restored $(for pf in $nvmes $igb; do [ "$pf" = "$broken" ] || echo "$pf"; done)
		tb_check "the preserved state is kept (state file)" test -s /var/lib/luod/state.luod-state
		[ "${UPDATE_BREAK_HOW:-}" = vfio ] &&
			tb_check "$broken: no VFs, as the kernel refused" grep -qx 0 "/sys/bus/pci/devices/$broken/sriov_numvfs"
		# hv1 gives one VF of vm-a up; luod restarts (the kept state is
		# restored again): the assignments stay as hv1 left them.
		set -- $(tb-hypervisor - list | grep '^assignment hv1 vm-a ' | head -n 1)
		tb_check "hv1 unassigns VF $5 of vm-a" tb-hypervisor hv1 unassign vm-a "$4" "$5"
		tb-hypervisor - list | grep '^assignment ' | sort >/tmp/assignments-hv1
		kill "$TB_LUOD_PID"; wait "$TB_LUOD_PID"
		tb_spawn_luod /tmp/luod-again.log --driver-wait=3 ${LUOD_ARGS2:-}
		tb_wait_luod
		tb-hypervisor - list | grep '^assignment ' | sort >/tmp/assignments-again
		tb_check "luod restarted: the kept state restored again, 2 assignments as hv1 left them" \
			sh -c "[ \$(wc -l </tmp/assignments-again) -eq 2 ] && cmp /tmp/assignments-hv1 /tmp/assignments-again &&
				grep -q 'taken over before (luod restarted)' /tmp/luod-again.log"
		tb_finish
		return
	fi

	tb_check "luod state is restored" sh -c 'luoctl status | grep -q "state:   restored"'
	# An observer ("-": not registered) lists them: registering as hv1 here
	# would be sent hv1's buffered events, and this one-shot call would
	# consume them (what luod sent under a name it does not send again).
	tb-hypervisor - list | grep '^assignment hv1 ' | sort >/tmp/assignments-after
	tb_check "the 3 VF assignments came back across the kexec" \
		sh -c 'test "$(wc -l </luod-tb/assignments-before)" -eq 3 && cmp /luod-tb/assignments-before /tmp/assignments-after'
	tb_check "... and are saved in /var/lib/luod/assignments.json" grep -q '"guest": *"vm-b"' /var/lib/luod/assignments.json
	# The hypervisor learns its guests' VFs are back and says when each runs:
	# luod gives each guest's downtime from the blackout start (TSC).
	# With a small event buffer, hv1's first registration comes after the
	# drops: it must be told (EventsLost), then sent what is left.
	if [ -n "${UPDATE_EVENT_BUFFER:-}" ]; then
		tb-hypervisor hv1 restored events 3 >/tmp/hv1-ev.out 2>&1
		echo "exit status $?" >>/tmp/hv1-ev.out
	fi
	tb-hypervisor hv1 restored guests running vm-a guests >/tmp/guests.out 2>&1
	dbus-send --system --print-reply --dest=org.luod1 /org/luod1 org.freedesktop.DBus.Properties.Get \
		string:org.luod1.Manager string:Guests >/tmp/guests-prop 2>&1
	tb_check "property Guests (dbus-send): vm-a running with its downtime, vm-b ok" \
		sh -c 'tr -d "\n" </tmp/guests-prop | grep -q "string \"vm-a\" *string \"running\" *double [1-9]" &&
			tr -d "\n" </tmp/guests-prop | grep -q "string \"vm-b\" *string \"ok\" *double -1"' 
	tb_info </tmp/guests.out
	tb_check "GuestRestored signals to hv1 on registering: vm-a ok, vm-b ok" \
		sh -c 'grep -q "^restored hv1 vm-a ok" /tmp/guests.out && grep -q "^restored hv1 vm-b ok" /tmp/guests.out'
	tb_check "GetGuests: vm-a and vm-b of hv1 restored ok" \
		sh -c 'grep -q "^guest hv1 vm-a ok" /tmp/guests.out && grep -q "^guest hv1 vm-b ok" /tmp/guests.out'
	tb_check "GuestRunning vm-a: a downtime, then GetGuests says running" \
		sh -c 'grep -Eq "^running vm-a [1-9][0-9]*\.[0-9]" /tmp/guests.out && grep -q "^guest hv1 vm-a running [1-9]" /tmp/guests.out'
	tb_check "GuestRunning for a guest hv1 never had is refused" \
		sh -c 'tb-hypervisor hv1 running vm-z 2>&1 | grep -q "Consumer hv1 has no guest vm-z"'
	tb_check "report.json: vm-a's downtime, vm-b not running yet" \
		sh -c 'luoctl report --json | tr -d " \n" | grep -q "\"guest\":\"vm-a\",\"vfs\":2,\"result\":\"running\",\"error\":null,\"downtime_ms\":[1-9]"'
	ms=$(sed -n 's/^running vm-a //p' /tmp/guests.out)
	[ -n "$ms" ] && tb_figure guest-vm-a-downtime "$ms" ms
	tb_check "report: backend $UPDATE_BACKEND" grep -q "\"backend\": \"$UPDATE_BACKEND\"" /tmp/report.json
	tb_check "inventory after == before ($(wc -l </luod-tb/inventory-before) fields, IOMMU groups aside)" \
		sh -c 'diff /luod-tb/inventory-before /tmp/inventory-after >/tmp/inv.diff'
	sed 's/^/    /' /tmp/inv.diff | head -n 20 >/dev/console
	tb_check_vfio_some $nvmes
	dev=$(tb_pf_netdev "$igb")
	"$IP" link show "$dev" >/tmp/iplink 2>&1
	tb_check "ip link: igb VF 1 MAC, VLAN 77, trust on" \
		grep -Eq "vf 1 .*link/ether 02:aa:bb:cc:dd:01.*vlan 77,.*trust on" /tmp/iplink
	tb_check "ip link: igb VF 4 VLAN 4000 qos 3" grep -Eq "vf 4 .*vlan 4000, qos 3" /tmp/iplink
	if [ -n "$INHIBITORS" ]; then
		tr -d ' \n' </tmp/report.json >/tmp/report.flat
		# held_ms is luod's TSC figure (its rate measured at the record),
		# the maximum delay a CLOCK_MONOTONIC timer: the figure may read
		# a little under the bound it waited for, hence 1 % below it.
		held=$(inhibitor_held hv2 false)
		tb_check "report: hv2 held its delay inhibitor 2 s (>= 1980 ms) and let go (${held:-no such entry} ms)" \
			inhibitor_in_range hv2 false 1980 3000
		held=$(inhibitor_held hv3 true)
		tb_check "report: hv3 never let go, the 3 s maximum applied (${held:-no such entry} ms)" \
			inhibitor_in_range hv3 true 2970 4000
		check_events
		# vm-c's downtime: from hv2's release to its GuestRunning, by luod
		# (TSC) and by the host (the two console marks); vm-d's from the
		# moment luod stopped waiting for hv3 (the 3 s maximum).
		TB_HOSTMARK=1 tb-hypervisor hv2 running vm-c >/tmp/hv2-running.out 2>&1
		ms=$(sed -n 's/^running vm-c //p' /tmp/hv2-running.out)
		tb_check "GuestRunning vm-c (hv2): downtime from hv2's release ($ms ms)" test -n "$ms"
		[ -n "$ms" ] && tb_figure guest-vm-c-downtime-luod "$ms" ms
		TB_HOSTMARK=1 tb-hypervisor hv3 running vm-d >/tmp/hv3-running.out 2>&1
		ms=$(sed -n 's/^running vm-d //p' /tmp/hv3-running.out)
		tb_check "GuestRunning vm-d (hv3): downtime from the maximum delay ($ms ms)" test -n "$ms"
		[ -n "$ms" ] && tb_figure guest-vm-d-downtime-luod "$ms" ms
		tb_check "hv2 registering again is sent none of its events twice" \
			sh -c "! grep -q '^event ' /tmp/hv2-running.out"
		check_guest_report
	fi
	if [ -z "$INHIBITORS" ]; then
		tb_check "report: without udevd, device events from the kernel source, held during the restore" \
			sh -c 'luoctl report --json | tr -d " \n" | grep -Eq "\"events\":\{\"source\":\"kernel\",[^}]*\"held\":[1-9]"'
	fi
	if [ -n "${UPDATE_EVENT_BUFFER:-}" ]; then
		tb-hypervisor - fetch 0 >/tmp/fetch0 2>&1
		oldest=$(grep -m1 '^fetched ' /tmp/fetch0 | awk '{ print $3 }')
		tb-hypervisor - fetch $((oldest - 1)) >/tmp/fetch1 2>&1
		tb_info </tmp/fetch0
		tb_check "a buffer of $UPDATE_EVENT_BUFFER: GetEvents(0) keeps the last $UPDATE_EVENT_BUFFER and says how many were lost" \
			sh -c 'grep -Eq "^lost [1-9]" /tmp/fetch0 && [ $(grep -c "^fetched " /tmp/fetch0) -eq '$UPDATE_EVENT_BUFFER' ]'
		tb_check "... and from the oldest kept seqnum on, nothing is lost" grep -qx 'lost 0' /tmp/fetch1
		tb_info </tmp/hv1-ev.out
		# hv1 registered after the drops: told how many of its PFs' events
		# were lost (the report's count per PF), then sent exactly what is
		# left of its PFs, in order; registering again: neither twice.
		luoctl report --json | tr -d ' \n' | sed 's/.*"dropped_by_pf":{\([^}]*\)}.*/\1/' | sed 's,\\/,/,g' | tr ',' '\n' >/tmp/dropped-by-pf
		for id in $(awk '{ print $4 }' /tmp/assignments-after | sort -u); do
			grep "^fetched $id " /tmp/fetch0
		done | awk '{ print $3 }' | sort -n >/tmp/hv1-want
		want=0
		for id in $(awk '{ print $4 }' /tmp/assignments-after | sort -u); do
			n=$(grep -F "\"$id\":" /tmp/dropped-by-pf | sed 's/.*://')
			want=$((want + ${n:-0}))
		done
		tb_info </tmp/dropped-by-pf
		tb_check "hv1, registering after the drops: EventsLost $want (its PFs' drops in the report)" \
			sh -c "[ $want -gt 0 ] && grep -qx 'eventslost $want' /tmp/hv1-ev.out"
		grep '^event ' /tmp/hv1-ev.out | awk '{ print $3 }' >/tmp/hv1-seq
		tb_check "... then exactly the $(wc -l </tmp/hv1-want) buffered events of its PFs, in order" \
			sh -c "[ -s /tmp/hv1-want ] && cmp /tmp/hv1-want /tmp/hv1-seq && grep -q '^eventslost .*' /tmp/hv1-ev.out &&
				[ \$(grep -n '^eventslost' /tmp/hv1-ev.out | cut -d: -f1) -lt \$(grep -n -m1 '^event ' /tmp/hv1-ev.out | cut -d: -f1) ]"
		tb_check "... registering again: neither EventsLost nor an event a second time" \
			sh -c "! grep -q '^event' /tmp/guests.out"
		tb_check "report: the events dropped from the buffer are counted" \
			sh -c 'luoctl report --json | tr -d " \n" | grep -Eq "\"dropped\":[1-9]"'
	fi
	tb_check "report: all 3 PFs ok" tb_report_pfs_ok 3
	tb_check "report: total-blackout phase measured" grep -q '"total-blackout"' /tmp/report.json
	tb_check "report: the new kernel's PCI enumeration measured (kernel log)" \
		grep -q '"kernel-pci-enumeration"' /tmp/report.json
	tb_check "report written to /var/lib/luod/report.json" test -s /var/lib/luod/report.json
	tb_check "preserved state dropped after a full restore" test ! -e /var/lib/luod/state.luod-state
	for phase in persist-and-kexec kernel-boot-to-luod-start kernel-pci-enumeration restore total-blackout; do
		ms=$(awk -v p="\"$phase\"" '$0 ~ p { getline; gsub(/[^0-9.]/, ""); print; exit }' /tmp/report.json)
		[ -n "$ms" ] && tb_figure "$phase" "$ms" ms
	done
	tb_finish
}

# UPDATE_COLD: a plain boot with the state of an update that was never
# restored on the disk.  luod must apply nothing, say why, keep the state.
stage3() {
	tb_check "a cold boot: no luod.update_id" sh -c '! grep -q luod.update_id= /proc/cmdline'
	tb_check "the state file survived the power cycle" cmp /var/lib/luod/state.copy /var/lib/luod/state.luod-state
	tb_check "luod starts" tb_start_luod $LUOD_ARGS
	tb_show_luod_log
	tb_check "luod logs why it refuses the state" \
		grep -q "Refusing the preserved state .*no luod.update_id" /tmp/luod.log
	luoctl status >/tmp/status 2>&1
	tb_info </tmp/status
	tb_check "luoctl status says failed, naming the cold boot" grep -q "no luod.update_id" /tmp/status
	for pf in $(tb_pfs); do
		tb_check "$pf: nothing applied (sriov_numvfs 0)" grep -qx 0 "/sys/bus/pci/devices/$pf/sriov_numvfs"
	done
	tb_check "the state is kept, byte for byte" cmp /var/lib/luod/state.copy /var/lib/luod/state.luod-state
	tb_check "luoctl discard drops it" sh -c 'luoctl discard && test ! -e /var/lib/luod/state.luod-state'
	tb_finish
}
