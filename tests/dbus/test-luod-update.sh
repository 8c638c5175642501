#!/usr/bin/env bash
# dbus suite: the asynchronous Update on a real, private dbus-daemon.
#  - luod answers calls (GetGuests within 100 ms) while it waits for a delay
#    inhibitor during an Update;
#  - AssignVF, a second Update, Discard are refused while it runs;
#  - Abandon and SIGTERM end it before kexec: consumers get UpdateAbandoned,
#    the Update call org.luod1.Error.Abandoned, nothing stays persisted;
#  - each named org.luod1.Error.* is returned where proto/errors.md says;
#  - a <runtime_dir>/loaded left behind, malformed or hostile, is abandoned.
#   test-luod-update.sh BUILD_DIR SOURCE_DIR
# LUOD=path runs another luod binary (to show these tests failing on it);
# ONLY=wait|sigterm|errors|loaded runs one part.
set -euo pipefail
build=$1 src=$2
luod_bin=${LUOD:-$build/luod/luod}
hv=$build/tests/consumer/tb-hypervisor
tmp=$(mktemp -d)
chmod 755 "$tmp"        # the unprivileged caller below must reach the socket
state=$tmp/state
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [[ -e $tmp/luod.log ]] && sed 's/^/  luod: /' "$tmp/luod.log" >&2; exit 1; }

# shellcheck source=tests/dbus/lib.sh
. "$src/tests/dbus/lib.sh"
read -r bus_pid addr < <(dbus_start_bus "$tmp") || true
[[ -n ${addr:-} ]] || fail "dbus-daemon did not start"
pids+=("$bus_pid")

start_luod() {
	"$luod_bin" --bus-address="$addr" --state-dir="$state" --runtime-dir="$tmp/run" "$@" 2>"$tmp/luod.log" &
	luod_pid=$!
	pids+=("$luod_pid")
	dbus_wait_name "$addr" org.luod1 || fail "luod did not take org.luod1"
}
stop_luod() {
	kill -TERM "$luod_pid"
	wait "$luod_pid" || fail "luod exited $? on SIGTERM"
}
prop() { busctl --address="$addr" get-property org.luod1 /org/luod1 org.luod1.Manager "$1"; }
call() { busctl --address="$addr" call org.luod1 /org/luod1 org.luod1.Manager "$@"; }
# gcall METHOD ARGS...: through gdbus, which prints the error's name.
gcall() {
	local method=$1
	shift
	gdbus call --address "$addr" --dest org.luod1 --object-path /org/luod1 --method "org.luod1.Manager.$method" "$@"
}
# expect_error NAME WHAT COMMAND...: COMMAND fails with org.luod1.Error.NAME.
expect_error() {
	local name=$1 what=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		fail "$what succeeded: $out"
	fi
	grep -q "org\.luod1\.Error\.$name\b" <<<"$out" || fail "$what: no org.luod1.Error.$name: $out"
}
wait_for() {  # wait_for FILE REGEX
	local _
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	fail "no '$2' in $1: $(cat "$1" 2>/dev/null)"
}
mkdir -m 0700 "$state"
part() { [[ ${ONLY:-all} == all || ${ONLY:-all} == "$1" ]]; }

# --- luod serves D-Bus while it waits for a delay inhibitor ---------------
if part wait; then
start_luod --max-delay=20 --backends=initrd
"$hv" --bus-address="$addr" hvA inhibit delay "pausing vm-a" keep abandoned 30 >"$tmp/hvA.out" 2>&1 &
hvA=$!
wait_for "$tmp/hvA.out" "inhibit delay held"
(rc=0; gcall Update /etc/hostname /etc/hostname "" 0 >"$tmp/upd.out" 2>&1 || rc=$?; echo "$rc" >"$tmp/upd.rc") &
upd=$!
wait_for "$tmp/hvA.out" "^prepare "
id=$(sed -n 's/^prepare //p' "$tmp/hvA.out")
# A hypervisor calls luod from its PrepareForUpdate handler: answered at once.
busctl --address="$addr" --timeout=100ms call org.luod1 /org/luod1 org.luod1.Manager GetGuests >/dev/null ||
	fail "GetGuests not answered within 100 ms during the inhibitor wait"
[[ $(prop Phase) == 's "prepare"' ]] || fail "Phase during the wait: $(prop Phase)"
[[ $(prop State) == 's "preparing"' && $(prop UpdateId) == "s \"$id\"" ]] ||
	fail "during the wait: State $(prop State) UpdateId $(prop UpdateId)"
# The record was taken at preflight: assignments may not change now; nor
# may a second Update or Discard run.
out=$("$hv" --bus-address="$addr" hvX assign vm-x dsn:00-11 0 2>&1) && fail "AssignVF during an update: $out"
grep -q "Update $id is in progress: its record of the VF assignments was taken at its preflight" <<<"$out" &&
	grep -q "org.luod1.Error.UpdateInProgress" <<<"$out" || fail "AssignVF during an update: $out"
out=$("$hv" --bus-address="$addr" hvX unassign vm-x dsn:00-11 0 2>&1) && fail "UnassignVF during an update: $out"
grep -q "org.luod1.Error.UpdateInProgress" <<<"$out" || fail "UnassignVF during an update: $out"
expect_error UpdateInProgress "a second Update" gcall Update /etc/hostname /etc/hostname "" 1
expect_error UpdateInProgress "Discard during an update" gcall Discard
# --- Abandon: the consumer is told, the Update call ends, nothing is left
out=$("$build/luod/luoctl" --bus-address="$addr" abandon 2>&1) || fail "luoctl abandon: $out"
grep -q "$id" <<<"$out" || fail "luoctl abandon does not name $id: $out"
wait "$upd"
[[ $(cat "$tmp/upd.rc") != 0 ]] || fail "Update succeeded after Abandon: $(cat "$tmp/upd.out")"
grep -q "org.luod1.Error.Abandoned" "$tmp/upd.out" || fail "Update after Abandon: $(cat "$tmp/upd.out")"
wait "$hvA" || fail "hvA got no UpdateAbandoned: $(cat "$tmp/hvA.out")"
grep -q "^abandoned $id Update $id abandoned: luoctl abandon" "$tmp/hvA.out" || fail "UpdateAbandoned: $(cat "$tmp/hvA.out")"
[[ $(prop State) == 's "failed"' ]] || fail "after Abandon: State $(prop State)"
prop LastError | grep -q "Update $id abandoned" || fail "after Abandon: LastError $(prop LastError)"
[[ ! -e $tmp/run/initrd-$id && ! -e $state/state.luod-state ]] || fail "Abandon left a state: $(ls "$tmp/run" "$state")"
grep -q "Update $id: kexec" "$tmp/luod.log" && fail "luod went on to kexec after Abandon"
expect_error NoUpdate "Abandon with no update" gcall Abandon
# Named errors of a consumer that paused: it resumes on UpdateAbandoned also
# when the update fails after PrepareForUpdate (the kexec load of a file
# that is no kernel).
"$hv" --bus-address="$addr" hvB inhibit delay "pausing vm-b" 0 abandoned 30 >"$tmp/hvB.out" 2>&1 &
hvB=$!
wait_for "$tmp/hvB.out" "inhibit delay held"
out=$(call Update ssst /etc/hostname /etc/hostname "" 0 2>&1) && fail "kexec loaded /etc/hostname?"
grep -Eq "(kexec_file_load|kexec-tools) refused /etc/hostname" <<<"$out" || fail "failed load: $out"
wait "$hvB" || fail "hvB got no UpdateAbandoned after a failed load: $(cat "$tmp/hvB.out")"
grep -Eq "^abandoned .* (kexec_file_load|kexec-tools) refused /etc/hostname" "$tmp/hvB.out" || fail "hvB: $(cat "$tmp/hvB.out")"
stop_luod
start_luod --max-delay=1 --backends=initrd
# The maximum delay counts from PrepareForUpdate, not from the start of the
# loop turn that ran the preflight: never shorter than --max-delay.
"$hv" --bus-address="$addr" hvT inhibit delay "stuck" 30 >"$tmp/hvT.out" 2>&1 &
hvT=$!
wait_for "$tmp/hvT.out" "inhibit delay held"
call Update ssst /etc/hostname /etc/hostname "" 0 >/dev/null 2>&1 && fail "kexec loaded /etc/hostname?"
waited=$(sed -n 's/.*Delay inhibitor of hvT (stuck) still held after the maximum 1.0 s (\([0-9.]*\) ms since PrepareForUpdate).*/\1/p' "$tmp/luod.log")
[[ -n $waited ]] || fail "hvT's timeout not logged"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 1000.0 else 1)' "$waited" ||
	fail "the maximum delay of 1 s ended after $waited ms"
kill "$hvT" 2>/dev/null || true
stop_luod
fi

# --- SIGTERM (systemctl stop luod) during the wait -------------------------
if part sigterm; then
start_luod --max-delay=20 --backends=initrd
"$hv" --bus-address="$addr" hvC inhibit delay "pausing vm-c" keep abandoned 30 >"$tmp/hvC.out" 2>&1 &
hvC=$!
wait_for "$tmp/hvC.out" "inhibit delay held"
(gcall Update /etc/hostname /etc/hostname "" 0 >"$tmp/upd.out" 2>&1 || true) &
upd=$!
wait_for "$tmp/hvC.out" "^prepare "
id=$(sed -n 's/^prepare //p' "$tmp/hvC.out")
t0=$SECONDS
stop_luod
((SECONDS - t0 < 5)) || fail "luod took $((SECONDS - t0)) s to stop during the wait"
wait "$upd"
wait "$hvC" || fail "hvC got no UpdateAbandoned on SIGTERM: $(cat "$tmp/hvC.out")"
grep -q "^abandoned $id Update $id abandoned: luod stopped (SIGTERM)" "$tmp/hvC.out" || fail "hvC: $(cat "$tmp/hvC.out")"
grep -q "org.luod1.Error.Abandoned" "$tmp/upd.out" || fail "Update on SIGTERM: $(cat "$tmp/upd.out")"
grep -q "Update $id: kexec" "$tmp/luod.log" && fail "luod went on to kexec after SIGTERM"
[[ ! -e $tmp/run/initrd-$id && ! -e $state/state.luod-state ]] || fail "SIGTERM left a state: $(ls "$tmp/run" "$state")"
fi

# --- each named error where it belongs ---------------------------------------
if part errors; then
start_luod --backends=luo,initrd --max-delay=2
expect_error NoReport "GetReport without a report" gcall GetReport
echo '{"truncated":' >"$state/report.json"
expect_error StateCorrupt "GetReport of a corrupt report" gcall GetReport
rm "$state/report.json"
expect_error NothingKept "Retry with nothing kept" gcall Retry
if [[ ! -e /dev/liveupdate ]]; then
	expect_error NoBackend "Update without a backend" gcall Update /etc/hostname "" "" 1
fi
expect_error NotConsumer "AssignVF by a non-consumer" gcall AssignVF vm-a dsn:00-11 0
expect_error NotConsumer "Inhibit by a non-consumer" gcall Inhibit block why
expect_error CursorFromOtherBoot "GetEvents beyond this boot" gcall GetEvents 18446744073709551615
"$hv" --bus-address="$addr" hv1 inhibit block "migrating" keep hold 20 >"$tmp/hv1.out" 2>&1 &
hv1=$!
wait_for "$tmp/hv1.out" "inhibit block held"
expect_error NameTaken "RegisterConsumer of a taken name" gcall RegisterConsumer hv1
expect_error UpdateBlocked "Update under a block inhibitor" gcall Update /etc/hostname /etc/hostname "" 1
kill "$hv1"
wait_for "$tmp/luod.log" "Consumer hv1 (.*) disconnected"
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
expect_error NotPermitted "nobody taking root's name" "${nobody[@]}" gdbus call --address "$addr" --dest org.luod1 \
	--object-path /org/luod1 --method org.luod1.Manager.RegisterConsumer hv1
out=$("$hv" --bus-address="$addr" hv2 assign vm-a dsn:no-such-pf 0 2>&1) && fail "unknown PF accepted"
grep -q "org.luod1.Error.NoSuchPF" <<<"$out" || fail "unknown PF: $out"
out=$("$hv" --bus-address="$addr" hv2 unassign vm-a dsn:no-such-pf 0 2>&1) && fail "unassign of nothing accepted"
grep -q "org.luod1.Error.NoSuchVF" <<<"$out" || fail "unassign of nothing: $out"
out=$("$hv" --bus-address="$addr" hv2 running vm-a 2>&1) && fail "GuestRunning without an update accepted"
grep -q "org.luod1.Error.NoSuchGuest" <<<"$out" || fail "GuestRunning: $out"
args=()
for _ in $(seq 65); do args+=(inhibit block many keep); done
out=$("$hv" --bus-address="$addr" hv-many "${args[@]}" 2>&1) && fail "65 inhibitors accepted"
grep -q "org.luod1.Error.TooManyInhibitors" <<<"$out" || fail "inhibitor cap: $out"
stop_luod
printf 'garbage\n' >"$state/state.luod-state"
start_luod
expect_error StateKept "Update over a kept state" gcall Update /etc/hostname "" "" 0
stop_luod
rm "$state/state.luod-state"
start_luod --no-events
expect_error NoEvents "GetEvents without a monitor" gcall GetEvents 0
stop_luod
fi

# --- <runtime_dir>/loaded left by a killed luod, as a hostile or broken file --
# luod starts, unloads, says so (State failed) and keeps every property
# readable; only a well-formed marker's own initrd copy is removed, and
# nothing outside the runtime dir.
if part loaded; then
run=$tmp/run
mkdir -p -m 0700 "$run"
id=01234567-89ab-cdef-0123-456789abcdef
boot=$(cat /proc/sys/kernel/random/boot_id)
: >"$run/initrd-$id"
printf '%s initrd %s\n' "$id" "$boot" >"$run/loaded"
start_luod
[[ $(prop State) == 's "failed"' && $(prop UpdateId) == "s \"$id\"" ]] ||
	fail "well-formed marker: State $(prop State) UpdateId $(prop UpdateId)"
[[ ! -e $run/initrd-$id && ! -e $run/loaded ]] || fail "well-formed marker: left $(ls "$run")"
stop_luod
# Of another boot (a runtime dir that outlived the kexec): that update
# happened; the marker goes, nothing is abandoned or removed.
: >"$run/initrd-$id"
printf '%s initrd %s\n' "$id" 76543210-89ab-cdef-0123-456789abcdef >"$run/loaded"
start_luod
[[ $(prop State) == 's "idle"' ]] || fail "another boot's marker: State $(prop State), not idle"
[[ -e $run/initrd-$id && ! -e $run/loaded ]] || fail "another boot's marker: left $(ls "$run")"
stop_luod
rm -f "$run/initrd-$id"
# Not UTF-8: the id is not taken as UpdateId (every property stays readable).
printf '\xff\xfe%s initrd %s\n' "${id:2}" "$boot" >"$run/loaded"
start_luod
out=$("$build/luod/luoctl" --bus-address="$addr" status 2>&1) || true
grep -q "cannot read" <<<"$out" && fail "luoctl status after a binary marker: $out"
prop UpdateId >/dev/null 2>&1 || fail "UpdateId unreadable after a binary marker"
prop LastError >/dev/null 2>&1 || fail "LastError unreadable after a binary marker"
[[ $(prop State) == 's "failed"' ]] || fail "binary marker: State $(prop State)"
stop_luod
# An id with path characters removes nothing outside the runtime dir.
mkdir "$run/initrd-a"
: >"$tmp/victim"
printf 'a/../../victim initrd %s\n' "$boot" >"$run/loaded"
start_luod
[[ -e $tmp/victim ]] || fail "a marker's id a/../../victim removed $tmp/victim"
stop_luod
rm -rf "$run/initrd-a" "$run/loaded"
# A FIFO does not stop luod from starting (nor does a directory).
mkfifo "$run/loaded"
start_luod
[[ $(prop State) == 's "failed"' ]] || fail "FIFO marker: State $(prop State)"
stop_luod
rm -f "$run/loaded"
fi

echo "ok: luod serves D-Bus during an update; Abandon and SIGTERM end it; named errors"
