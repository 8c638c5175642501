# tests/vm/lib.sh — shell library for scenarios in the test bed guest
# (busybox sh).  Sourced by /init before the scenario.
#
# Report lines (read by tests/vm/run from the serial console):
#   LUOD-TB: CHECK ok|FAIL <what>       one assertion
#   LUOD-TB: FIGURE <name> <value> <unit>
#   LUOD-TB: HOSTMARK <name>            the host stamps its own clock
#   LUOD-TB: HOSTSAMPLE begin|end <name> <guest readings>
#                                       the host reads QEMU's threads' CPU
#                                       time (tb_hostsample)
#   LUOD-TB: INFO <text>                shown on the host's terminal too
#   LUOD-TB: RESULT PASS|FAIL <why>     the scenario's verdict (last stage)

TB_FAILED=0

tb_say() { echo "LUOD-TB: $*" >/dev/console; }
tb_log() { echo "luod-tb: $*" >/dev/console; }

tb_arg() {  # tb_arg NAME -> value of the last luod_tb.NAME= on the command line
	local v= found=1 w
	for w in $(cat /proc/cmdline); do
		case $w in "luod_tb.$1="*) v=${w#*=}; found=0 ;; esac
	done
	[ $found = 0 ] && echo "$v"
	return $found
}

# Sets TB_STAGE, TB_BREAK (luod_tb.stage=, luod_tb.break=), TB_UPTIME0 (s)
# and TB_TSC0 (the TSC) at the start of the stage.
tb_init() {
	local i
	TB_STAGE=$(tb_arg stage || echo 1)
	TB_BREAK=$(tb_arg break || true)
	TB_UPTIME0=$(cut -d' ' -f1 /proc/uptime)
	TB_TSC0=$(tb-clock tsc)
	tb_say "HOSTMARK init-stage$TB_STAGE"
	tb_log "stage $TB_STAGE, kernel $(uname -r), uptime $TB_UPTIME0 s${TB_BREAK:+, break=$TB_BREAK}"
	# hardware `disk SIZE`: the persistent disk holds /var/lib/luod.
	if grep -q '^disk ' /luod-tb/hardware; then
		for i in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
		mount -t ext4 /dev/vda /var/lib/luod || tb_abort "cannot mount the disk /dev/vda on /var/lib/luod"
	fi
}

# Cold boot: power off, and the runner starts QEMU again (same disk) with
# luod_tb.stage=$1 -- a plain boot, no kexec, nothing carried in RAM.
tb_powercycle() {
	tb_release_disk
	tb_say "POWERCYCLE $1"
	poweroff -f
}

# Unmounts the persistent disk (hardware `disk`), if mounted, and syncs:
# before a power cycle or a kexec, so that what is on it survives.
tb_release_disk() {
	if grep -q ' /var/lib/luod ' /proc/mounts; then
		umount /var/lib/luod || return 1
	fi
	sync
}

tb_check() {  # tb_check "what" command args...; a failure counts in TB_FAILED
	local what=$1; shift
	if "$@" >/tmp/tb-check.out 2>&1; then
		tb_say "CHECK ok $what"
	else
		tb_say "CHECK FAIL $what"
		sed 's/^/    /' /tmp/tb-check.out | head -n 20 >/dev/console
		TB_FAILED=$((TB_FAILED + 1))
	fi
}

# tb_check_value WHAT WANT HAVE: one CHECK that names the value found.
tb_check_value() { tb_check "$1 is '$3' (want '$2')" test "$3" = "$2"; }

tb_starts_with() { case $1 in "$2"*) return 0 ;; esac; return 1; }   # tb_starts_with TEXT PREFIX
tb_contains() { case $1 in *"$2"*) return 0 ;; esac; return 1; }      # tb_contains TEXT PART

tb_figure() { tb_say "FIGURE $1 $2 $3"; }
tb_info() { local l; while IFS= read -r l || [ -n "$l" ]; do tb_say "INFO $l"; done; }  # stdin to the host's terminal (a last line without newline too)

tb_finish() {  # last stage: verdict
	if [ "$TB_FAILED" -eq 0 ]; then
		tb_say "RESULT PASS"
	else
		tb_say "RESULT FAIL $TB_FAILED checks failed in stage $TB_STAGE"
	fi
}

tb_abort() { tb_say "CHECK FAIL $*"; tb_say "RESULT FAIL $*"; poweroff -f; }

tb_run_stage() {
	if ! type "stage$TB_STAGE" >/dev/null 2>&1; then
		tb_abort "scenario has no stage$TB_STAGE"
	fi
	"stage$TB_STAGE"
}

# --- time ------------------------------------------------------------------
# CLOCK_MONOTONIC in microseconds (busybox date has no %N; /proc/uptime has
# 10 ms steps); intervals within one kernel only.
tb_us() { tb-clock us; }
tb_elapsed_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }

# tb_clock_to FILE: CLOCK_MONOTONIC ns into FILE, from the "now at N nsecs"
# line of /proc/timer_list's header (ktime_get()), with builtins only, so
# a timed window forks nothing to read the clock (tb_us runs tb-clock, a
# fork and exec that costs ~10 ms of guest CPU under TCG).
tb_clock_to() {
	local l
	while read -r l; do
		case $l in
		"now at "*) l=${l#now at }; echo "${l% nsecs}" >"$1"; return 0 ;;
		esac
	done </proc/timer_list
	return 1
}

# tb_hostsample begin|end NAME: the host's view of a window of the guest's:
# the line carries the guest's CLOCK_MONOTONIC ns (/proc/timer_list) and
# each vCPU's busy and idle ms (/proc/stat cpuN: user nice system irq
# softirq steal, and idle iowait; 10 ms ticks), read with builtins; the
# host then reads every QEMU thread's host CPU and runqueue time, and with
# the hardware's `host-profile on` QEMU's JIT counters and lock profile
# (tests/vm/run: OUT/hostsamples, OUT/qsp-NAME.txt; tests/vm/hostsamples
# makes figures of them).  The guest sleeps 300 ms after the line, idle,
# so the host's reading, taken when the line arrives, falls in a window
# where no guest work runs: begin before the work, end after it.
tb_hostsample() {
	local l c u n s i w q sq st rest now= cpus=
	while read -r l; do
		case $l in "now at "*) l=${l#now at }; now=${l% nsecs}; break ;; esac
	done </proc/timer_list
	while read -r c u n s i w q sq st rest; do
		case $c in
		cpu[0-9]*) cpus="$cpus ${c#cpu} $(( (u + n + s + q + sq + st) * 10 )) $(( (i + w) * 10 ))" ;;
		cpu) ;;
		*) break ;;
		esac
	done </proc/stat
	tb_say "HOSTSAMPLE $1 $2 $now$cpus"
	sleep 0.3
}

# TSC rate in kHz, as the kernel calibrated it (dmesg).
tb_tsc_khz() {
	dmesg | sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' | tail -n 1 |
		awk 'NF { printf "%d\n", $1 * 1000; found=1 } END { if (!found) exit 1 }' ||
	dmesg | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz.*/\1/p' | tail -n 1 | awk '{ printf "%d\n", $1 * 1000 }'
}

# iproute2's ip by full path: busybox sh runs its own `ip` applet first.
IP=/usr/bin/ip

# --- PCI / SR-IOV ----------------------------------------------------------
tb_pfs() {  # BDFs of every SR-IOV PF, sorted
	local d
	for d in /sys/bus/pci/devices/*; do
		[ -e "$d/sriov_totalvfs" ] && basename "$d"
	done | sort
}
tb_pf_kind() {  # nvme | igb | other, from the PCI IDs
	case "$(cat /sys/bus/pci/devices/$1/vendor):$(cat /sys/bus/pci/devices/$1/device)" in
	0x1b36:0x0010) echo nvme ;;
	0x8086:0x10c9) echo igb ;;
	*) echo other ;;
	esac
}
tb_pfs_of_kind() {  # tb_pfs_of_kind nvme|igb: the BDFs of that kind's PFs, sorted
	local pf
	for pf in $(tb_pfs); do
		if [ "$(tb_pf_kind "$pf")" = "$1" ]; then echo "$pf"; fi
	done
}
tb_pf_netdev() { ls "/sys/bus/pci/devices/$1/net" 2>/dev/null | head -n 1; }  # first netdev of PF $1
tb_netdev_is_up() {  # IFF_UP (0x1) in the flags of netdev $1
	local flags
	flags=$(cat "/sys/class/net/$1/flags") || return 1
	[ $((flags & 1)) -eq 1 ]
}
tb_vfs() {  # VF BDFs of PF $1, in VF index order
	local i=0
	while [ -e "/sys/bus/pci/devices/$1/virtfn$i" ]; do
		basename "$(readlink "/sys/bus/pci/devices/$1/virtfn$i")"
		i=$((i + 1))
	done
}
# The number of virtfn links of PF $1: a glob, not a process per VF (under
# TCG tb_vfs takes ~50 ms a VF on a loaded host, which a timed loop counts).
tb_count_vfs() {
	set -- "/sys/bus/pci/devices/$1"/virtfn*
	if [ -e "$1" ]; then echo $#; else echo 0; fi
}

# The number of VF devices in the system, every PF's.
tb_count_all_vfs() {
	set -- /sys/bus/pci/devices/*/physfn
	if [ -e "$1" ]; then echo $#; else echo 0; fi
}

# tb_pf_clean PF: returns 0 if PF $1 has no VF left (sriov_numvfs 0, no VF
# device in the system, no virtfn link); otherwise says what is left and
# returns 1.
tb_pf_clean() {
	local n l
	n=$(cat "/sys/bus/pci/devices/$1/sriov_numvfs")
	[ "$n" = 0 ] || { echo "sriov_numvfs is $n"; return 1; }
	n=$(tb_count_all_vfs)
	[ "$n" = 0 ] || { echo "$n VF devices left: $(ls -d /sys/bus/pci/devices/*/physfn)"; return 1; }
	for l in "/sys/bus/pci/devices/$1"/virtfn*; do
		[ -e "$l" ] || [ -L "$l" ] || continue
		echo "link $l left"; return 1
	done
}

# Enables $2 VFs on PF $1: times the sriov_numvfs write (the kernel adds the
# VFs before the write returns), then waits (bounded, 120 s) until every
# virtfn link exists.  Prints the write's time in ms; non-zero on failure.
tb_enable_vfs() {
	local t0 t1 n
	t0=$(tb_us)
	echo "$2" >"/sys/bus/pci/devices/$1/sriov_numvfs" || return 1
	t1=$(tb_us)
	n=0
	while [ "$(tb_count_vfs "$1")" -lt "$2" ]; do
		n=$((n + 1)); [ $n -gt 1200 ] && return 1
		sleep 0.1
	done
	tb_elapsed_ms "$t0" "$t1"
}

# Writes $1 to the sriov_numvfs of every PF in $pfs: from one process per
# PF at once ($2 parallel) or PF after PF ($2 serial); non-zero if a write
# failed.
tb_write_numvfs_all() {
	local _rc=0 _pids= _pf _p
	if [ "$2" = parallel ]; then
		for _pf in $pfs; do echo "$1" >"/sys/bus/pci/devices/$_pf/sriov_numvfs" & _pids="$_pids $!"; done
		for _p in $_pids; do wait "$_p" || _rc=1; done
	else
		for _pf in $pfs; do echo "$1" >"/sys/bus/pci/devices/$_pf/sriov_numvfs" || _rc=1; done
	fi
	return $_rc
}

# Starts tb-sysfs-watch with arguments "$@" (summary to /tmp/watch.out,
# errors to /tmp/watch.err), sets TB_WATCH_PID, and returns once it watches
# (--ready /tmp/watch-ready); aborts the scenario after 10 s.
tb_sysfs_watch_start() {
	rm -f /tmp/watch-ready
	local _n=0
	tb-sysfs-watch --ready /tmp/watch-ready "$@" >/tmp/watch.out 2>/tmp/watch.err &
	TB_WATCH_PID=$!
	until [ -e /tmp/watch-ready ]; do
		_n=$((_n + 1))
		[ $_n -gt 100 ] && tb_abort "tb-sysfs-watch did not start: $(cat /tmp/watch.err)"
		sleep 0.1
	done
}

# The value of KEY $1 in tb-sysfs-watch's summary (/tmp/watch.out).
tb_watch_value() { sed -n "s/^$1=//p" /tmp/watch.out; }

# Stops the watcher tb_sysfs_watch_start started, checks it printed its
# summary, shows it with the first half-built observations (/tmp/half.log)
# and adds read partial (/tmp/ev.log), and records summary keys "$@" as
# figures watch_KEY (*_us in us, the rest counts).
tb_sysfs_watch_stop() {
	local _k _u
	kill -TERM "$TB_WATCH_PID"
	wait "$TB_WATCH_PID"
	tb_check "tb-sysfs-watch ran" test -s /tmp/watch.out
	sed 's/^/watch: /' /tmp/watch.out /tmp/watch.err | tb_info
	head -5 /tmp/half.log | sed 's/^/half-built: /' | tb_info
	grep ' partial:' /tmp/ev.log | head -5 | sed 's/^/add read partial: /' | tb_info
	for _k in "$@"; do
		case $_k in *_us) _u=us ;; *) _u=count ;; esac
		tb_figure "watch_$_k" "$(tb_watch_value "$_k")" "$_u"
	done
}

# Sets sriov_drivers_autoprobe of every PF to $1 (0: VFs appear unbound).
tb_set_autoprobe() {
	local pf
	for pf in $(tb_pfs); do echo "$1" >"/sys/bus/pci/devices/$pf/sriov_drivers_autoprobe"; done
}

# Binds VF $1 to vfio-pci through driver_override + drivers_probe.
tb_bind_vfio() {
	local d=/sys/bus/pci/devices/$1
	echo vfio-pci >"$d/driver_override" || return 1
	if [ -e "$d/driver" ]; then
		echo "$1" >"$d/driver/unbind" || return 1
	fi
	echo "$1" >/sys/bus/pci/drivers_probe || return 1
	[ "$(basename "$(readlink "$d/driver")")" = vfio-pci ]
}
tb_vfio_dev() {  # /dev/vfio/<group> of device $1
	echo "/dev/vfio/$(basename "$(readlink "/sys/bus/pci/devices/$1/iommu_group")")"
}
tb_driver_of() { basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)" 2>/dev/null; }
# VFs 0, 2 and 3 of PF $1: the ones the update scenarios put on vfio-pci.
tb_vfio_vfs() { tb_vfs "$1" | sed -n '1p;3p;4p'; }
tb_bind_vfio_some() {  # tb_bind_vfio_some PF...: tb_vfio_vfs of each on vfio-pci, one CHECK each
	local pf vf
	for pf in "$@"; do
		for vf in $(tb_vfio_vfs "$pf"); do
			tb_check "$vf bound to vfio-pci" tb_bind_vfio "$vf"
		done
	done
}
tb_check_vfio_some() {  # tb_check_vfio_some PF...: tb_vfio_vfs of each on vfio-pci with their group
	local pf vf dev
	for pf in "$@"; do
		for vf in $(tb_vfio_vfs "$pf"); do
			dev=$(tb_vfio_dev "$vf")
			tb_check "$vf on vfio-pci with $dev" \
				sh -c "[ \"\$(basename \$(readlink /sys/bus/pci/devices/$vf/driver))\" = vfio-pci ] && test -c $dev"
		done
	done
}
tb_enable_all_vfs() {  # tb_enable_all_vfs PF...: sriov_totalvfs VFs on each, one CHECK each
	local pf n
	for pf in "$@"; do
		n=$(cat "/sys/bus/pci/devices/$pf/sriov_totalvfs")
		tb_check "$pf: $n VFs enabled" tb_enable_vfs "$pf" "$n"
	done
}

# Expected PFs from the hardware file: "kind vfs" lines.
tb_hw_pfs() {
	local kw name arg i
	while read -r kw name arg; do
		case $kw in
		nvme) echo "nvme ${arg#vfs=}" ;;
		igb) echo "igb 7" ;;
		igb-card) for i in $(seq "${arg#ports=}"); do echo "igb 7"; done ;;
		esac
	done </luod-tb/hardware
}

# Disables the VFs of PF $1 (echo 0 > sriov_numvfs); prints the time in ms.
tb_disable_vfs() {
	local t0
	t0=$(tb_us)
	echo 0 >"/sys/bus/pci/devices/$1/sriov_numvfs" || return 1
	[ "$(tb_count_vfs "$1")" -eq 0 ] || return 1
	tb_elapsed_ms "$t0" "$(tb_us)"
}

# --- lower bounds of benchmark figures ---------------------------------------
# A figure below what the kernel must spend is a measuring bug: it fails.
# Every enable sleeps msleep(100) after setting VF Enable (sriov_enable(),
# drivers/pci/iov.c) inside the sriov_numvfs write, so no enable of a PF
# takes less than TB_ENABLE_MIN_MS.
TB_ENABLE_MIN_MS=100

tb_check_ge() {  # tb_check_ge WHAT VALUE BOUND [WHY]: VALUE ms >= BOUND ms
	tb_check "$1: $2 ms >= $3 ms${4:+ ($4)}" awk -v v="$2" -v b="$3" 'BEGIN {
		if (v != "" && v + 0 >= b + 0) exit 0
		printf "%s ms is below the lower bound %s ms\n", v == "" ? "(no figure)" : v, b; exit 1 }'
}

# tb_check_serial WHAT TOTAL PART...: TOTAL ms for work done one part after
# another, each PART the ms one part took, measured by itself within that
# time (e.g. one PF's enable).  Each part enabled a PF, so each is >=
# TB_ENABLE_MIN_MS and TOTAL >= (number of parts) x TB_ENABLE_MIN_MS; the
# parts are disjoint pieces of TOTAL, so TOTAL >= their sum (1 ms for the
# rounding of the figures).
tb_check_serial() {
	local what=$1 total=$2
	shift 2
	tb_check "$what: $total ms >= the sum of its $# parts ($*) and >= $# x $TB_ENABLE_MIN_MS ms" \
		awk -v t="$total" -v min="$TB_ENABLE_MIN_MS" -v parts="$*" 'BEGIN {
			k = split(parts, p, " "); bad = (t == "" || k == 0)
			for (i = 1; i <= k; i++) {
				s += p[i]
				if (p[i] + 0 < min) { printf "part %d: %s ms < %s ms\n", i, p[i], min; bad = 1 }
			}
			if (t + 0 < k * min) { printf "total %s ms < %d x %s ms\n", t, k, min; bad = 1 }
			if (t + 0 < s - 1) { printf "total %s ms < %.1f ms, the sum of its parts\n", t, s; bad = 1 }
			exit bad }'
}

# --- luod in the guest -------------------------------------------------------
# Starts the system bus (dbus-daemon with Debian's system.conf and luod's
# policy) and luod with options "$@" (its pid in TB_LUOD_PID); waits
# (bounded) until luoctl reaches it.
tb_start_luod() {
	tb_start_bus || return 1
	tb_spawn_luod /tmp/luod.log "$@"
	tb_wait_luod
}
tb_start_bus() {  # the system bus, once per boot
	[ -S /run/dbus/system_bus_socket ] && return 0
	mkdir -p /run/dbus /var/lib/luod
	dbus-daemon --system --fork --nopidfile
}
# tb_spawn_luod LOG [OPTIONS]: luod in the background, its output to LOG;
# sets TB_LUOD_PID and TB_LUOD_LOG.  luod restores before it serves the bus.
tb_spawn_luod() {
	TB_LUOD_LOG=$1
	shift
	luod "$@" >"$TB_LUOD_LOG" 2>&1 &
	TB_LUOD_PID=$!
}
# Waits (bounded, 60 s) until luoctl reaches the luod tb_spawn_luod
# started; non-zero, its log shown, if it died or never answered.  luod
# restores before it serves the bus, and a luoctl started every 0.1 s
# meanwhile (a dynamically linked process and a bus round trip each) took
# the 2 vCPUs from the restore being timed.  So luoctl is tried only once
# luod's log says it is ready (a grep), and once a second regardless (a
# luod whose log goes elsewhere).
tb_wait_luod() {
	local n=0
	until { grep -q " ready on " "$TB_LUOD_LOG" 2>/dev/null || [ $((n % 10)) -eq 9 ]; } &&
		luoctl status >/dev/null 2>&1; do
		n=$((n + 1))
		if [ $n -gt 600 ] || ! kill -0 "$TB_LUOD_PID" 2>/dev/null; then
			sed 's/^/    luod: /' "$TB_LUOD_LOG" >/dev/console
			return 1
		fi
		sleep 0.1
	done
}
tb_luod_state() { luoctl status 2>/dev/null | sed -n 's/^state: *//p'; }      # State
tb_luod_error() { luoctl status 2>/dev/null | sed -n 's/^error: *//p'; }      # LastError
tb_luod_settle() {  # waits (bounded, 120 s) while luod's State is restoring
	local n=0
	while [ "$(tb_luod_state)" = restoring ] && [ $n -lt 1200 ]; do n=$((n + 1)); sleep 0.1; done
}
tb_cmdline_update_id() { sed -n 's/.*luod\.update_id=\([^ ]*\).*/\1/p' /proc/cmdline; }
tb_boot_id() { cat /proc/sys/kernel/random/boot_id; }
# tb_names_boot TEXT BOOT_ID: whether TEXT has the boot id, with or without
# its dashes.
tb_names_boot() { tb_contains "$1" "$2" || tb_contains "$1" "$(echo "$2" | tr -d -)"; }
# tb_state_consumed_by BOOT_ID: whether luod's durable copy of the state
# (/var/lib/luod/state.luod-state) records that boot (its id with or
# without dashes) as the one that consumed it.
tb_state_consumed_by() {
	local f=/var/lib/luod/state.luod-state
	test -s $f && grep -q '"consumed"' $f && tb_names_boot "$(cat $f)" "$1"
}

# systemd-udevd as on a host (no rules: it broadcasts each event on the
# "udev" netlink source after processing, which luod listens to), and
# systemd-journald (luod's structured entries; the luod catalog compiled).
tb_start_udevd() {
	mkdir -p /run/udev /etc/udev/rules.d
	local n=0
	systemd-udevd --daemon || return 1
	until [ -S /run/udev/control ]; do n=$((n + 1)); [ $n -gt 100 ] && return 1; sleep 0.1; done
}
tb_start_journald() {
	mkdir -p /run/systemd/journal /var/lib/systemd/catalog /etc/systemd
	# journald wants the cgroup2 hierarchy and a machine ID; it need not
	# copy the kernel log here.
	grep -q ' /sys/fs/cgroup ' /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup || return 1
	[ -s /etc/machine-id ] || tr -d '-' </proc/sys/kernel/random/uuid >/etc/machine-id
	printf '[Journal]\nStorage=volatile\nReadKMsg=no\n' >/etc/systemd/journald.conf
	local n=0
	systemd-journald >/tmp/journald.log 2>&1 &
	until [ -S /run/systemd/journal/socket ]; do n=$((n + 1)); [ $n -gt 100 ] && return 1; sleep 0.1; done
	journalctl --update-catalog >/dev/null 2>&1
}
tb_show_luod_log() { sed 's/^/    luod: /' "${1:-/tmp/luod.log}" >/dev/console; }

# --- an update ---------------------------------------------------------------
# The inventory (tb-inventory flat) without what a kexec may change (IOMMU
# group numbers), sorted.
tb_inventory() { tb-inventory flat | grep -v '\.iommu_group=' | sort; }
tb_pf_identity() { tb-inventory flat | sed -n "s/^pf\.$1\.identity=//p"; }
# Saves the inventory for the next kernel: /luod-tb/inventory-before there.
tb_save_inventory() {
	mkdir -p /tmp/carry/luod-tb
	tb_inventory >/tmp/carry/luod-tb/inventory-before
	tb_check "inventory taken ($(wc -l </tmp/carry/luod-tb/inventory-before) fields)" \
		test -s /tmp/carry/luod-tb/inventory-before
}
# /tmp/initrd2 for a kexec: this initramfs (/luod-tb/initrd.gz), zeros to
# a 4-byte boundary, and a cpio archive of directory $1 (default
# /tmp/carry): its files appear in the next kernel's root.
tb_carry_initrd() {
	local dir=${1:-/tmp/carry} pad
	mkdir -p "$dir"
	cp /luod-tb/initrd.gz /tmp/initrd2 || return 1
	pad=$(( (4 - $(stat -c %s /tmp/initrd2) % 4) % 4 ))
	if [ "$pad" -gt 0 ]; then head -c "$pad" /dev/zero >>/tmp/initrd2; fi
	(cd "$dir" && find . -mindepth 1 | cpio --quiet -o -H newc) >>/tmp/initrd2
}
# For a kexec from the next kernel as well: /luod-tb/initrd.gz goes along
# in the carried archive (the initramfs payload does not hold itself).
tb_carry_self() { mkdir -p /tmp/carry/luod-tb && cp /luod-tb/initrd.gz /tmp/carry/luod-tb/; }
# luoctl update into the same kernel with /tmp/initrd2, the next kernel
# running stage $1; HOSTMARK luoctl-update before, luod-persist when
# luoctl prints luod's persist phase.  Returns only if there was no kexec:
# then it shows luoctl's and luod's output and aborts.
tb_update_kexec() {
	local l
	tb_say "HOSTMARK luoctl-update"
	luoctl update --kernel /luod-tb/bzImage --initrd /tmp/initrd2 \
		--append "luod_tb.stage=$1" --yes 2>&1 | while IFS= read -r l; do
		echo "$l" >>/tmp/update.out
		case $l in *"] persist"*) tb_say "HOSTMARK luod-persist" ;; esac
	done
	cat /tmp/update.out >/dev/console
	tb_show_luod_log
	tb_abort "luoctl update returned without a kexec"
}

# tb_report_pfs_ok N: true when luod's report (/tmp/report.json, from
# `luoctl report --json`) has N PFs with result ok; otherwise it prints
# each PF's bdf, result and error (the step and errno luod gave), the
# output a failed tb_check shows.
tb_report_pfs_ok() {
	local ok
	ok=$(sed '/"guests"/,$d' /tmp/report.json | grep -c '"result": "ok"')
	[ "$ok" -eq "$1" ] && return 0
	# Not a report (luoctl's error, from its stderr): its first lines.
	sed '/"guests"/,$d' /tmp/report.json | grep -E '"(bdf|result|error)":' || head -n 5 /tmp/report.json
	return 1
}

# tb_check_restored PF...: each PF's fields now equal those recorded before
# the update (/luod-tb/inventory-before), one CHECK per PF; on a
# difference the differing fields are shown.  A VF MAC recorded all-zero is
# no administrative MAC (the VF's driver picks one, igb a random one at each
# VF reset): it is not compared, as luod does not compare it.
tb_check_restored() {
	local pf unset
	tb_inventory >/tmp/inventory-after
	for pf in "$@"; do
		unset=$(sed -n "s/^\(pf\.$pf\.vf\.[0-9]*\.mac\)=00:00:00:00:00:00$/\1=/p" /luod-tb/inventory-before)
		grep "^pf\.$pf\." /luod-tb/inventory-before | grep -vF "${unset:-/nothing/}" >"/tmp/want.$pf"
		grep "^pf\.$pf\." /tmp/inventory-after | grep -vF "${unset:-/nothing/}" >"/tmp/have.$pf"
		tb_check "$pf restored exactly ($(wc -l <"/tmp/want.$pf") fields)" \
			sh -c "test -s /tmp/want.$pf && diff /tmp/want.$pf /tmp/have.$pf"
	done
}

# --- the systemd host (hardware `host debian`) ---------------------------------
# In the Debian guest luod runs as the package installed it, under systemd;
# the scenario's files are on the root disk in /luod-tb and survive kexec.

# Waits (bounded, 900 s) until systemd has finished starting the system;
# prints its state (running, or degraded with the failed units listed).
tb_host_wait_booted() {
	local st
	st=$(timeout 900 systemctl is-system-running --wait 2>/dev/null)
	echo "$st"
	[ "$st" = running ] && return 0
	systemctl --failed --no-legend --plain
	[ "$st" = degraded ]
}
# Waits (bounded, $1 s, default 900) until luod.service is active: READY=1,
# which luod sends after its restore.  Non-zero if it failed or timed out.
tb_host_luod_active() {
	local n=0 limit=$((${1:-900} * 5)) st
	while :; do
		st=$(systemctl is-active luod.service 2>/dev/null)
		case $st in
		active) return 0 ;;
		failed) return 1 ;;
		esac
		n=$((n + 1))
		[ $n -gt $limit ] && return 1
		sleep 0.2
	done
}
# The host's view of luod for the console: systemctl status and its log.
tb_host_show_luod() {
	systemctl status --no-pager -l luod.service 2>&1 | sed 's/^/    /' >/dev/console
	journalctl -b -u luod.service --no-pager -o cat 2>&1 | tail -n 40 | sed 's/^/    luod: /' >/dev/console
}
# Saves the inventory (tb_save_inventory) to /luod-tb/inventory-before on
# the root disk, where the next kernel's stage reads it.
tb_host_save_inventory() {
	tb_save_inventory
	cp /tmp/carry/luod-tb/inventory-before /luod-tb/inventory-before
	sync
}
# tb_host_update STAGE KERNEL [luoctl update options...]: luoctl update to
# KERNEL, the next kernel running stage STAGE, after a sync of the root
# disk.  With luod's own kexec -e it returns only if there was no kexec;
# with --via-systemd luoctl returns once systemd accepted the job, and the
# stage waits for the shutdown.  Either way a return aborts the scenario.
tb_host_update() {
	local stage=$1 kernel=$2 l
	shift 2
	sync
	tb_say "HOSTMARK luoctl-update"
	luoctl update --kernel "$kernel" --append "luod_tb.stage=$stage" --yes "$@" 2>&1 | while IFS= read -r l; do
		echo "$l" >>/tmp/update.out
		case $l in *"] persist"*) tb_say "HOSTMARK luod-persist" ;; esac
	done
	cat /tmp/update.out >/dev/console
	case " $* " in *" --via-systemd "*)
		# luod handed the kexec to systemd, which waits for the delay
		# inhibitor TB_SHUTDOWN_INHIBITOR (if any): meanwhile the update
		# is loaded and another one is refused by name.
		if [ -n "${TB_SHUTDOWN_INHIBITOR:-}" ]; then
			l=0
			luoctl update --kernel "$kernel" --dry-run >/tmp/update-loaded.out 2>&1 || l=$?
			tb_check "a second Update while the first waits for systemd's kexec: UpdateLoaded (luoctl exit 4, was $l)" \
				sh -c "[ $l -eq 4 ] && grep -q 'is already loaded' /tmp/update-loaded.out"
			kill "$TB_SHUTDOWN_INHIBITOR"
		fi
		sleep 600 ;;
	esac
	tb_host_show_luod
	tb_abort "luoctl update returned without a kexec"
}

# Fault-injection scenarios (failslab, fail-nth): what counts as a kernel
# report in their logs, and tb_kmsg_split to read the log around them.
TB_KMSG_REPORT='BUG:|Oops|general protection|KASAN|UBSAN|refcount_t|list_add corruption|list_del corruption|NULL pointer|WARNING:|possible circular|possible recursive|inconsistent lock state|suspicious RCU|sysfs: cannot create duplicate|Call Trace|blocked for more than'
# tb_kmsg_split [ALLOWED]: the kernel log since the last call (dmesg -c,
# whole in /tmp/kmsg.round) without the injections' own reports (from
# "FAULT_INJECTION: forcing a failure." to the end of its stack dump) and
# without the WARN blocks that match the extended regex ALLOWED (none when
# empty) in /tmp/kmsg.rest; each injection's stack on one line in
# /tmp/kmsg.inj, the allowed WARNs' lines in /tmp/kmsg.allowed (both
# appended to; remove them before a sweep).
tb_kmsg_split() {
	dmesg -c >/tmp/kmsg.round
	: >/tmp/kmsg.rest
	awk -v allow="${1:-}" '
		/FAULT_INJECTION: forcing a failure/ { inj = 1; line = ""; next }
		inj && /<\/TASK>/ { print line >>"/tmp/kmsg.inj"; inj = 0; next }
		inj { line = line " " $NF; next }
		/------------\[ cut here \]------------/ { cut = 1; n = 0; ok = 0 }
		cut { buf[n++] = $0; if (allow != "" && $0 ~ allow) ok = 1
			if ($0 ~ /---\[ end trace/) {
				for (i = 0; i < n; i++)
					if (ok) print buf[i] >>"/tmp/kmsg.allowed"
					else print buf[i] >"/tmp/kmsg.rest"
				cut = 0
			}
			next }
		{ print >"/tmp/kmsg.rest" }
		END { if (cut) for (i = 0; i < n; i++) print buf[i] >"/tmp/kmsg.rest" }
	' /tmp/kmsg.round
}
# tb_fault_write_after PF N ERR LABEL: after a fault-injection attempt's
# write of N to PF's sriov_numvfs (ERR 0: the write succeeded, else its
# errno or 1): a successful write left N VFs, which are removed again; then
# the PF must be clean (tb_pf_clean).  Returns 1 after a CHECK FAIL that
# names LABEL.
tb_fault_write_after() {
	local _pf=$1 _n=$2 _err=$3 _label=$4
	if [ "$_err" = 0 ]; then
		if [ "$(tb_count_vfs "$_pf")" != "$_n" ]; then
			tb_check "$_label: the write succeeded and $_n VFs exist (have $(tb_count_vfs "$_pf"))" false
			return 1
		fi
		echo 0 >"/sys/bus/pci/devices/$_pf/sriov_numvfs" ||
			{ tb_check "$_label: writing 0 to sriov_numvfs" false; return 1; }
	fi
	if ! tb_pf_clean "$_pf" >/tmp/clean.out; then
		tb_check "$_label: PF clean afterwards: $(cat /tmp/clean.out)" false
		return 1
	fi
}

# tb_fault_sweep_end PF N [ALLOWED]: after a fault-injection sweep, the PF
# still works: N VFs enabled without injection, the first bound to
# vfio-pci, all removed, the PF clean, and no kernel report in the log
# since the last tb_kmsg_split but the WARNs matching ALLOWED.
tb_fault_sweep_end() {
	local _v
	tb_check "after the sweep: $2 VFs enabled without injection" tb_enable_vfs "$1" "$2"
	_v=$(tb_vfs "$1" | head -n 1)
	tb_check "after the sweep: VF $_v bound to vfio-pci" tb_bind_vfio "$_v"
	echo 0 >"/sys/bus/pci/devices/$1/sriov_numvfs"
	tb_check "after the sweep: the PF clean again" tb_pf_clean "$1"
	tb_kmsg_split "${3:-}"
	tb_check "after the sweep: no kernel report" sh -c "! grep -Eq '$TB_KMSG_REPORT' /tmp/kmsg.rest"
}

# tb_fail_attempt N FILE VALUE [ALLOWED] [CPU]: one attempt of a
# fault-injection sweep: VALUE written to FILE with the Nth fault-injection
# point failing (tb-fail-nth, pinned to CPU if given), then the kernel log
# read (tb_kmsg_split ALLOWED).  Leaves
# "<errno of the write, 0 if it succeeded> <injected: 1|0>" in
# /tmp/fail.out and returns 0; returns 1 after a CHECK FAIL when tb-fail-nth
# was killed (an oops, most likely) or the log holds a kernel report (the
# log then goes to the console).
tb_fail_attempt() {
	local out
	if ! out=$(${5:+taskset -c "$5"} tb-fail-nth "$1" "$2" "$3"); then
		tb_check "attempt $1: tb-fail-nth ran${5:+ (pinned to CPU $5)} (not killed)" false
		dmesg | tail -n 120 >/dev/console
		return 1
	fi
	echo "$out" >/tmp/fail.out
	tb_kmsg_split "${4:-}"
	if grep -Eq "$TB_KMSG_REPORT" /tmp/kmsg.rest; then
		tb_check "attempt $1 (write errno ${out% *}): no kernel report" false
		echo "luod-tb: the attempt's kernel log (the injection's stack first):" >/dev/console
		head -n 200 /tmp/kmsg.round >/dev/console
		return 1
	fi
}
