#!/usr/bin/env bash
# dbus suite: luod and luoctl on a real, private dbus-daemon; the interface
# is also driven with busctl and gdbus (not ours) and checked against
# proto/org.luod1.Manager.xml.
#   test-luod-bus.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$1 src=$2 version=$3
tmp=$(mktemp -d)
chmod 755 "$tmp"        # the unprivileged caller below must reach the socket
state=$tmp/state
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# exits STATUS CMD...: CMD exits with STATUS (luoctl(8) EXIT STATUS); its
# output (stdout and stderr) is left in OUT.
exits() {
	local want=$1 rc=0
	shift
	OUT=$("$@" 2>&1) || rc=$?
	[[ $rc -eq $want ]] || fail "exit status $rc, not $want, from $*: $OUT"
}

# shellcheck source=tests/dbus/lib.sh
. "$src/tests/dbus/lib.sh"
read -r bus_pid addr < <(dbus_start_bus "$tmp") || true
[[ -n ${addr:-} ]] || fail "dbus-daemon did not start"
pids+=("$bus_pid")

luoctl=("$build/luod/luoctl" --bus-address="$addr")
# luoctl without luod: exit 7 (not running), error names the service.
exits 7 "${luoctl[@]}" status
grep -q 'org.luod1 is not running' <<<"$OUT" || fail "error does not name org.luod1: $OUT"
# Usage errors: 2, before luod is asked anything.
exits 2 "${luoctl[@]}"
exits 2 "${luoctl[@]}" frobnicate
exits 2 "${luoctl[@]}" --timeout=0 status
exits 2 "${luoctl[@]}" status --dry-run

start_luod() {
	"$build/luod/luod" --bus-address="$addr" --state-dir="$state" --runtime-dir="$tmp/run" "$@" 2>"$tmp/luod.log" &
	luod_pid=$!
	pids+=("$luod_pid")
	dbus_wait_name "$addr" org.luod1 || fail "luod did not take org.luod1: $(cat "$tmp/luod.log")"
}
stop_luod() {
	kill -TERM "$luod_pid"
	wait "$luod_pid" || fail "luod exited $? on SIGTERM"
}
prop() { busctl --address="$addr" get-property org.luod1 /org/luod1 org.luod1.Manager "$1"; }
mkdir -m 0700 "$state"
start_luod

out=$("$build/luod/luoctl" --bus-address="$addr" status)
grep -qx "version: $version" <<<"$out" || fail "luoctl status version: $out"
grep -qx "state:   idle" <<<"$out" || fail "luoctl status state: $out"

[[ $(busctl --address="$addr" get-property org.luod1 /org/luod1 org.luod1.Manager Version) == "s \"$version\"" ]] ||
	fail "busctl Version"
gdbus call --address "$addr" --dest org.luod1 --object-path /org/luod1 \
	--method org.freedesktop.DBus.Properties.Get org.luod1.Manager State | grep -q "<'idle'>" ||
	fail "gdbus State"

# The live interface has exactly the members proto/ documents.
members() { grep -oE '<(property|method|signal) name="[^"]+"' | sed 's/.*name="//; s/"$//' | sort; }
want=$(sed -n '/<interface name="org.luod1.Manager">/,/<\/interface>/p' "$src/proto/org.luod1.Manager.xml" | members)
have=$(busctl --address="$addr" introspect --xml-interface org.luod1 /org/luod1 |
	sed -n '/<interface name="org.luod1.Manager">/,/<\/interface>/p' | members)
[[ -n $want && $want == "$have" ]] || fail "interface differs from proto: want [$want] have [$have]"
# ... and member by member, argument types and directions too, parsed by a
# real XML parser (the file must be well-formed: no "--" inside comments).
busctl --address="$addr" introspect --xml-interface org.luod1 /org/luod1 >"$tmp/introspect.xml"
out=$(python3 - "$src/proto/org.luod1.Manager.xml" "$tmp/introspect.xml" <<'PY'
import sys, xml.dom.minidom as x
def sig(path):
    doc = x.parse(path)
    for i in doc.getElementsByTagName("interface"):
        if i.getAttribute("name") != "org.luod1.Manager":
            continue
        out = {}
        for kind in ("method", "signal", "property"):
            for m in i.getElementsByTagName(kind):
                if kind == "property":
                    out[(kind, m.getAttribute("name"))] = (m.getAttribute("type"), m.getAttribute("access"))
                else:
                    out[(kind, m.getAttribute("name"))] = tuple(
                        (a.getAttribute("type"), a.getAttribute("direction") or ("out" if kind == "signal" else "in"))
                        for a in m.getElementsByTagName("arg"))
        return out
a, b = sig(sys.argv[1]), sig(sys.argv[2])
bad = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
for k in bad:
    print(k, "proto:", a.get(k), "luod:", b.get(k))
sys.exit(1 if bad else 0)
PY
) || fail "proto/ and luod disagree on argument types: $out"

# Setting a read-only property is refused.
if busctl --address="$addr" set-property org.luod1 /org/luod1 org.luod1.Manager State s busy 2>/dev/null; then
	fail "State was writable"
fi

# Methods: errors name the object and the errno.
out=$("$build/luod/luoctl" --bus-address="$addr" report 2>&1) && fail "report without a report succeeded"
grep -q "No update report in $state/report.json" <<<"$out" || fail "report error: $out"
mkfifo "$state/report.json"
out=$(timeout 10 "$build/luod/luoctl" --bus-address="$addr" report 2>&1) && fail "a FIFO report was read"
grep -q "The update report $state/report.json is not a regular file" <<<"$out" || fail "FIFO report: $out"
rm "$state/report.json"
echo '{"phases":5,"pfs":"x"}' >"$state/report.json"
"$build/luod/luoctl" --bus-address="$addr" report >/dev/null 2>&1 || fail "luoctl report failed on odd types"
echo '{"truncated":' >"$state/report.json"
out=$("$build/luod/luoctl" --bus-address="$addr" report 2>&1) && fail "a corrupt report was shown"
grep -q "The update report $state/report.json is unreadable or not JSON" <<<"$out" || fail "corrupt report: $out"
# What GetReport sends is JSON that the bus carries: a report.json that is
# not UTF-8, has a NaN, or is huge is refused by name (StateCorrupt), the
# file and the reason named, and luod stays on the bus.
bad_report() {  # bad_report WHAT REASON: report.json as written is refused
	local out
	out=$(busctl --address="$addr" call org.luod1 /org/luod1 org.luod1.Manager GetReport 2>&1) &&
		fail "GetReport served a report.json $1: ${out:0:200}"
	out=$(gdbus call --address "$addr" --dest org.luod1 --object-path /org/luod1 \
		--method org.luod1.Manager.GetReport 2>&1) || true
	grep -q "org.luod1.Error.StateCorrupt: The update report $state/report.json is unreadable or not JSON: $2" \
		<<<"$out" || fail "GetReport of a report.json $1: ${out:0:300}"
	dbus_wait_name "$addr" org.luod1 || fail "luod left the bus after GetReport of a report.json $1"
}
printf '{ "update_id": "\xff\xfe" }\n' >"$state/report.json"
bad_report "not in UTF-8" "not JSON: invalid utf-8"
printf '{ "update_id": "u", "phases": [ { "name": "restore", "ms": NaN } ] }\n' >"$state/report.json"
bad_report "with NaN" "a number is not finite"
python3 -c 'import sys; sys.stdout.write("{\"update_id\":\"u\",\"pad\":\"" + "a" * (200 << 20) + "\"}")' \
	>"$state/report.json"
bad_report "of 200 MiB" "larger than"
rm "$state/report.json"
call() { busctl --address="$addr" call org.luod1 /org/luod1 org.luod1.Manager "$@"; }
out=$(call Update ssst relative/bzImage "" "" 0 2>&1) && fail "relative kernel accepted"
grep -q "absolute path" <<<"$out" || fail "relative kernel: $out"
out=$(call Update ssst /nonexistent/bzImage "" "" 0 2>&1) && fail "missing kernel accepted"
grep -q "/nonexistent/bzImage: No such file or directory" <<<"$out" || fail "missing kernel: $out"
out=$(call Update ssst /etc/hostname "" "" 255 2>&1) && fail "unknown flags accepted"
grep -q "Unknown flags 0xfc" <<<"$out" || fail "unknown flags: $out"
# A dry run stops after preflight: a plan, no state written, still idle.
out=$(call Update ssst /etc/hostname "" "console=ttyS0" 1) || fail "dry run: $out"
grep -q 'luod.update_id=' <<<"$out" || fail "dry run plan lacks the update id: $out"
grep -q 'backend' <<<"$out" || fail "dry run plan lacks the backend: $out"
# The plan names the loader: kexec_file_load(2), or kexec-tools where this
# kernel lacks the syscall.
loader=$(grep -oE 'loader[\\"]*: [\\"]*(kexec_file_load|kexec-tools)' <<<"$out" | grep -oE 'kexec_file_load|kexec-tools') || true
[[ -n $loader ]] || fail "dry run plan names no loader: $out"
# Without /dev/liveupdate (a kernel without LUO) the plan says why the
# backend is not luo.
if [[ ! -e /dev/liveupdate ]]; then
	grep -q 'backend_note.*luo not available: no .*dev.*liveupdate' <<<"$out" ||
		fail "dry run without LUO: no backend note: $out"
fi
[[ ! -e $state/state.luod-state ]] || fail "dry run wrote a state"
[[ $(prop State) == 's "idle"' ]] || fail "dry run changed State: $(prop State)"
# VIA_SYSTEMD (2) never uses LUO: systemd stops luod, whose session fd then
# closes and unpreserves the state; the plan says so.
out=$(call Update ssst /etc/hostname "" "console=ttyS0" 3) || fail "dry run via systemd: $out"
grep -q 'luo not used with VIA_SYSTEMD' <<<"$out" || fail "dry run via systemd: no backend note: $out"
# luoctl shows each step of the call as luod signals it (property Phase).
out=$("$build/luod/luoctl" --bus-address="$addr" update --kernel /etc/hostname --dry-run 2>&1) ||
	fail "luoctl update --dry-run: $out"
grep -Eq '^\[ *[0-9]+ ms\] preflight$' <<<"$out" || fail "no live progress (preflight): $out"
grep -Eq '^\[ *[0-9]+ ms\] snapshot$' <<<"$out" || fail "no live progress (snapshot): $out"
grep -q '"drivers": "not checked: release of .*hostname unknown' <<<"$out" || fail "plan: drivers: $out"
# No such kernel: the preflight's class, 5.
exits 5 "${luoctl[@]}" update --kernel /nonexistent/bzImage --dry-run
grep -q "kernel image /nonexistent/bzImage: No such file or directory" <<<"$OUT" || fail "luoctl missing kernel: $OUT"
[[ $(prop Phase) == 's ""' ]] || fail "Phase after the call: $(prop Phase)"
out=$(call Update ssst /etc "" "" 1 2>&1) && fail "a directory as kernel accepted"
grep -q "Kernel image /etc is not a regular file" <<<"$out" || fail "directory kernel: $out"
# A load kexec refuses: State failed, LastError says why, nothing persisted.
out=$(call Update ssst /etc/hostname "" "" 0 2>&1) && fail "kexec loaded /etc/hostname?"
grep -q "$loader refused /etc/hostname" <<<"$out" || fail "kexec refusal: $out"
[[ $(prop State) == 's "failed"' ]] || fail "after a refused load: State $(prop State)"
prop LastError | grep -q "$loader refused /etc/hostname" || fail "LastError: $(prop LastError)"
[[ ! -e $state/state.luod-state ]] || fail "a refused load left a state"
# The same through luoctl: the update began (State preparing), then
# failed: 6, not a preflight refusal.
exits 6 "${luoctl[@]}" update --kernel /etc/hostname --yes
grep -q "update failed: $loader refused /etc/hostname" <<<"$OUT" || fail "luoctl refused load: $OUT"
# A command line longer than the next kernel takes (2048 bytes with the
# NUL, luod.update_id= included) is the caller's argument: InvalidArgs, 2.
long=$(printf 'a%.0s' {1..2100})
exits 2 "${luoctl[@]}" update --kernel /etc/hostname --dry-run --append "$long"
grep -q "would not fit the next kernel's 2048 bytes" <<<"$OUT" || fail "luoctl, too long a command line: $OUT"
# A luod that does not answer: 8 after --timeout, naming the wait.
kill -STOP "$luod_pid"
exits 8 "${luoctl[@]}" --timeout=0.5 status
# A timeout below 1 us is 1 us, not the default of 25 s.
exits 8 timeout 10 "${luoctl[@]}" --timeout=0.0000001 status
kill -CONT "$luod_pid"
grep -q "did not answer in time" <<<"$OUT" || fail "luoctl timeout: $OUT"
out=$("$build/luod/luoctl" --bus-address="$addr" vfs --json) || fail "luoctl vfs --json"
grep -q '"pfs"' <<<"$out" || fail "inventory has no pfs: $out"

# Unprivileged callers: inventory yes, update and discard no.
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# uid 65534 as a member of luod's consumer group (luod --consumer-group).
group=4242
member=(setpriv --reuid=65534 --regid=65534 --groups="$group")
"${nobody[@]}" busctl --address="$addr" call org.luod1 /org/luod1 org.luod1.Manager GetInventory >/dev/null ||
	fail "GetInventory denied to an unprivileged caller"
out=$("${nobody[@]}" busctl --address="$addr" call org.luod1 /org/luod1 org.luod1.Manager Update ssst /etc/hostname "" "" 1 2>&1) &&
	fail "Update allowed to an unprivileged caller"
grep -q "Access denied" <<<"$out" || fail "unprivileged Update: $out"
out=$("${nobody[@]}" busctl --address="$addr" call org.luod1 /org/luod1 org.luod1.Manager Discard 2>&1) &&
	fail "Discard allowed to an unprivileged caller"
exits 3 "${nobody[@]}" "${luoctl[@]}" update --kernel /etc/hostname --dry-run
exits 3 "${nobody[@]}" "${luoctl[@]}" discard
stop_luod

# A corrupt state is refused, kept, and said so.
printf 'garbage\n' >"$state/state.luod-state"
start_luod
[[ $(prop State) == 's "failed"' ]] || fail "corrupt state: State $(prop State)"
prop LastError | grep -q "Refusing the preserved state from file" || fail "corrupt state: $(prop LastError)"
[[ $(cat "$state/state.luod-state") == garbage ]] || fail "corrupt state was not kept"
# A new Update must not overwrite the kept state.
out=$(call Update ssst /etc/hostname "" "" 0 2>&1) && fail "Update accepted over a kept state"
grep -q "The preserved state of update .* is kept" <<<"$out" || fail "kept state vs Update: $out"
[[ $(cat "$state/state.luod-state") == garbage ]] || fail "Update touched the kept state"
# luoctl: refused until decided (4); status says so and how to decide.
exits 4 "${luoctl[@]}" update --kernel /etc/hostname --yes
grep -q "update refused: The preserved state of update .* is kept" <<<"$OUT" || fail "luoctl update over a kept state: $OUT"
exits 0 "${luoctl[@]}" status
grep -q "^kept:    the preserved state.* is kept and was not applied" <<<"$OUT" || fail "status: no kept state: $OUT"
grep -q "luoctl retry .*apply it in this boot" <<<"$OUT" || fail "status: no retry hint: $OUT"
grep -q "luoctl discard .*drop it" <<<"$OUT" || fail "status: no discard hint: $OUT"
[[ $(prop StateKept) == "b true" ]] || fail "StateKept: $(prop StateKept)"
stop_luod

# An empty state file (a torn write) is refused and kept, not ignored.
: >"$state/state.luod-state"
start_luod
[[ $(prop State) == 's "failed"' ]] || fail "empty state: State $(prop State)"
prop LastError | grep -q "Cannot read the preserved state" || fail "empty state: $(prop LastError)"
[[ -e $state/state.luod-state ]] || fail "empty state was not kept"
stop_luod

# An unknown major version is refused, never guessed at, and kept.
sed '1s/"major":1,/"major":2,/' "$src/proto/state-example.luod-state" >"$state/state.luod-state"
start_luod
prop LastError | grep -q "Refusing the preserved state from file: .*major.*Protocol not supported" ||
	fail "unknown version: $(prop LastError)"
head -1 "$state/state.luod-state" | grep -q '"major":2,' || fail "unknown version: state not kept"
stop_luod

# A valid state without luod.update_id on this boot's command line (a cold
# boot) is refused and kept, until luoctl discard.
cp "$src/proto/state-example.luod-state" "$state/state.luod-state"
start_luod
prop LastError | grep -q "3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8.*no luod.update_id" ||
	fail "cold boot: $(prop LastError)"
cmp -s "$src/proto/state-example.luod-state" "$state/state.luod-state" || fail "cold boot: state not kept"
"$build/luod/luoctl" --bus-address="$addr" discard >/dev/null || fail "discard failed"
[[ ! -e $state/state.luod-state ]] || fail "discard left the state"
[[ $(prop State) == 's "idle"' ]] || fail "discard: State $(prop State)"
stop_luod

# One boot per state.  consume FILE BOOT ATTEMPT: the state file as luod
# leaves it once a boot applied it (format minor 3 "consumed").
consume() {
	python3 - "$@" <<'PY'
import hashlib, json, sys
path, boot, attempt = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, 'rb').read()
nl = data.index(b'\n')
body = json.loads(data[nl + 1:])
body['consumed'] = {'boot_id': boot, 'attempt': attempt}
b = (json.dumps(body, indent=1) + '\n').encode()
h = {'format': 'luod-state', 'major': 1, 'minor': 3, 'length': len(b), 'sha256': hashlib.sha256(b).hexdigest()}
open(path, 'wb').write(json.dumps(h, separators=(',', ':')).encode() + b'\n' + b)
PY
}
consumed_of() {  # consumed_of FILE: "BOOT ATTEMPT"
	python3 -c 'import json,sys; d=open(sys.argv[1]).read(); c=json.loads(d[d.index("\n")+1:]).get("consumed",{}); print(c.get("boot_id","-"), c.get("attempt",0))' "$1"
}
boot=$(cat /proc/sys/kernel/random/boot_id)
other=0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5
# A state another boot applied is never applied again by itself (a kexec
# with --reuse-cmdline carries its luod.update_id): refused, kept as it was.
cp "$src/proto/state-example.luod-state" "$state/state.luod-state"
consume "$state/state.luod-state" "$other" 1
cp "$state/state.luod-state" "$tmp/consumed-copy"
start_luod
prop LastError | grep -q "3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8 from file: it was consumed by boot $other (attempt 1), this is boot $boot; kept, see luoctl retry" ||
	fail "consumed by another boot: $(prop LastError)"
[[ $(prop State) == 's "failed"' ]] || fail "consumed by another boot: State $(prop State)"
cmp -s "$tmp/consumed-copy" "$state/state.luod-state" || fail "consumed by another boot: state changed"
exits 0 "${luoctl[@]}" status
grep -q "^kept:    the preserved state of update 3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8 is kept" <<<"$OUT" ||
	fail "status of a state consumed by another boot: $OUT"
grep -q "Restoring update" "$tmp/luod.log" && fail "consumed by another boot: luod restored it: $(cat "$tmp/luod.log")"
# luoctl retry applies it in this boot: consumed by this boot, attempt 2,
# written before any PF is touched; here its PFs are absent, so it fails
# naming them and the state stays kept.
out=$("$build/luod/luoctl" --bus-address="$addr" retry 2>&1) && fail "retry without the PFs succeeded: $out"
grep -q "Retry failed: Restore of update 3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8: 2 of 2 PFs failed; state kept" <<<"$out" ||
	fail "retry: $out"
[[ $(consumed_of "$state/state.luod-state") == "$boot 2" ]] || fail "retry: consumed $(consumed_of "$state/state.luod-state")"
"$build/luod/luoctl" --bus-address="$addr" report >"$tmp/report.txt" || fail "report after retry"
grep -q "attempt 2: luoctl retry" "$tmp/report.txt" || fail "report after retry: $(cat "$tmp/report.txt")"
grep -q "not found by its identity" "$tmp/report.txt" || fail "report after retry: $(cat "$tmp/report.txt")"
# Each retry is one more attempt, also through busctl.
out=$(busctl --address="$addr" call org.luod1 /org/luod1 org.luod1.Manager Retry 2>&1) && fail "busctl Retry: $out"
grep -q "2 of 2 PFs failed" <<<"$out" || fail "busctl Retry: $out"
[[ $(consumed_of "$state/state.luod-state") == "$boot 3" ]] || fail "busctl retry: consumed $(consumed_of "$state/state.luod-state")"
stop_luod
# A luod restarted in the boot that applied the state resumes it (attempt 4).
start_luod
grep -q "being restored by an earlier luod in this boot (attempt 3): resuming" "$tmp/luod.log" ||
	fail "resume: $(cat "$tmp/luod.log")"
[[ $(consumed_of "$state/state.luod-state") == "$boot 4" ]] || fail "resume: consumed $(consumed_of "$state/state.luod-state")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["resumed"] is True and r["attempt"] == 4 and r["retry"] is False else 1)' \
	"$state/report.json" || fail "resume: report $(cat "$state/report.json")"
"$build/luod/luoctl" --bus-address="$addr" discard >/dev/null || fail "discard after resume"
[[ ! -e $state/state.luod-state ]] || fail "discard after resume left the state"
[[ $(prop StateKept) == "b false" ]] || fail "StateKept after discard: $(prop StateKept)"
exits 0 "${luoctl[@]}" status
grep -q "^kept:" <<<"$OUT" && fail "status after discard still says kept: $OUT"
exits 1 "${luoctl[@]}" retry
grep -q "No preserved state is kept" <<<"$OUT" || fail "retry with nothing kept: $OUT"
stop_luod

# Consumers: registration, names, disconnects, assignments and their errors.
hv=$build/tests/consumer/tb-hypervisor
start_luod --consumer-group="$group"
"$hv" --bus-address="$addr" hv1 hold 3 >"$tmp/hv1.out" 2>&1 &
hv1=$!
for _ in $(seq 100); do grep -q "registered hv1" "$tmp/hv1.out" 2>/dev/null && break; sleep 0.05; done
out=$("$hv" --bus-address="$addr" hv1 2>&1) && fail "a second live hv1 was accepted"
grep -q "Consumer name hv1 is taken by :" <<<"$out" || fail "duplicate consumer: $out"
out=$("$hv" --bus-address="$addr" 'bad name' 2>&1) && fail "a bad consumer name was accepted"
grep -q "Consumer name 'bad name' must be" <<<"$out" || fail "bad consumer name: $out"
# (gdbus, as busctl prints every AccessDenied as "Access denied")
out=$(gdbus call --address "$addr" --dest org.luod1 --object-path /org/luod1 \
	--method org.luod1.Manager.AssignVF vm-a dsn:00-11 0 2>&1) && fail "AssignVF by a non-consumer accepted"
grep -q "is not a registered consumer" <<<"$out" || fail "non-consumer AssignVF: $out"
out=$("$hv" --bus-address="$addr" hv2 assign vm-a dsn:no-such-pf 0 2>&1) && fail "unknown PF accepted"
grep -q "No SR-IOV PF with identity 'dsn:no-such-pf'" <<<"$out" || fail "unknown PF: $out"
wait "$hv1" || fail "hv1 failed: $(cat "$tmp/hv1.out")"
# hv1 is gone: its name is free again.
"$hv" --bus-address="$addr" hv1 list >/dev/null 2>&1 || fail "hv1 not dropped on disconnect: $(cat "$tmp/luod.log")"
grep -q "Consumer hv1 (:.*) disconnected; dropped" "$tmp/luod.log" || fail "no log line for the dropped consumer"
"${nobody[@]}" "$hv" --bus-address="$addr" hv-user list >/dev/null 2>&1 ||
	fail "an unprivileged consumer was refused"
# A name belongs to the uid that registered it first: nobody may not take
# hv1 (root's), root may not take hv-user (nobody's); each may reuse its own.
out=$("${nobody[@]}" "$hv" --bus-address="$addr" hv1 list 2>&1) && fail "nobody took root's consumer name hv1"
grep -q "Consumer name hv1 belongs to uid 0 (it registered it first, or its VF assignments were made by it); uid 65534 may not take it" <<<"$out" ||
	fail "name squatting: $out"
out=$("$hv" --bus-address="$addr" hv-user list 2>&1) && fail "root took nobody's consumer name hv-user"
grep -q "Consumer name hv-user belongs to uid 65534" <<<"$out" || fail "name squatting (root): $out"
"${nobody[@]}" "$hv" --bus-address="$addr" hv-user list >/dev/null 2>&1 || fail "nobody cannot reuse its own name"
# Inhibitors are bounded per uid (64; names cost nothing): the 65th is
# refused with ENOSPC, under the same name or another of the same uid.
args=()
for _ in $(seq 65); do args+=(inhibit block many keep); done
out=$("$hv" --bus-address="$addr" hv-many "${args[@]}" 2>&1) && fail "65 inhibitors accepted"
grep -q "Consumer hv-many: uid 0 holds 64 inhibitors of at most 64, all consumers 64 of at most 512" <<<"$out" ||
	fail "inhibitor cap: $out"
# (uid 65534 in luod's consumer group: block inhibitors are for root and
# that group, below.)
"${member[@]}" "$hv" --bus-address="$addr" hv-many-n "${args[@]:0:256}" hold 3 >/dev/null 2>&1 &
many=$!
for _ in $(seq 100); do grep -q "hv-many-n holds a block inhibitor" "$tmp/luod.log" &&
	[[ $(grep -c "hv-many-n holds a block inhibitor" "$tmp/luod.log") -eq 64 ]] && break; sleep 0.05; done
out=$("${member[@]}" "$hv" --bus-address="$addr" hv-many-m inhibit block other keep 2>&1) &&
	fail "a second name of the same uid got a 65th inhibitor"
grep -q "Consumer hv-many-m: uid 65534 holds 64 inhibitors of at most 64" <<<"$out" || fail "per-uid cap: $out"
"$hv" --bus-address="$addr" hv-root inhibit block root-may keep >/dev/null 2>&1 || fail "root refused while nobody is capped"
wait "$many"
# A reason with control characters (a forged log line) is refused.
out=$("$hv" --bus-address="$addr" hv-ctl inhibit block $'line1\nFAKE: allowed' keep 2>&1) &&
	fail "a reason with a newline was accepted"
grep -q "Inhibitor reason must be 1..1024 bytes, no control characters" <<<"$out" || fail "reason check: $out"
[[ $(call GetAssignments) == "a(sssu) 0" ]] || fail "GetAssignments: $(call GetAssignments)"
[[ $(call GetGuests) == "a(sssd) 0" ]] || fail "GetGuests without a live update: $(call GetGuests)"
[[ $(prop Guests) == "a(sssd) 0" ]] || fail "property Guests without a live update: $(prop Guests)"
out=$("$hv" --bus-address="$addr" hv1 running vm-a 2>&1) && fail "GuestRunning without a live update accepted"
grep -q "Consumer hv1 has no guest vm-a in the last live update" <<<"$out" || fail "GuestRunning: $out"
stop_luod

# Policy: block inhibitors (every Update refused) and AssignVF (carried
# across the kexec) are for root and luod's consumer group only
# (--consumer-group; the package creates group luod): uid 65534 is refused
# both with NotPermitted and may still take a delay inhibitor; a member of
# the group may take both (AssignVF then fails on the unknown PF).
start_luod --consumer-group="$group"
out=$("${nobody[@]}" "$hv" --bus-address="$addr" hv-nb inhibit block "no updates today" keep 2>&1) &&
	fail "uid 65534 took a block inhibitor"
grep -qF "Consumer hv-nb (uid 65534) may not take a block inhibitor: only root and the members of luod's consumer group (group $group) may [org.luod1.Error.NotPermitted]" <<<"$out" ||
	fail "unprivileged block inhibitor: $out"
out=$("${nobody[@]}" "$hv" --bus-address="$addr" hv-nb assign vm-a dsn:no-such-pf 0 2>&1) &&
	fail "uid 65534 assigned a VF"
grep -qF "Consumer hv-nb (uid 65534) may not assign VFs: only root and the members of luod's consumer group (group $group) may [org.luod1.Error.NotPermitted]" <<<"$out" ||
	fail "unprivileged AssignVF: $out"
"${nobody[@]}" "$hv" --bus-address="$addr" hv-nb inhibit delay "pausing" keep >"$tmp/hv-nb.out" 2>&1 &
nb=$!
for _ in $(seq 100); do grep -q "held" "$tmp/hv-nb.out" 2>/dev/null && break; sleep 0.05; done
grep -q "inhibit delay held" "$tmp/hv-nb.out" || fail "uid 65534 refused a delay inhibitor: $(cat "$tmp/hv-nb.out")"
kill "$nb"
wait "$nb" 2>/dev/null || true
out=$("${member[@]}" "$hv" --bus-address="$addr" hv-gm inhibit block "migrating" keep 2>&1) ||
	fail "a member of group $group refused a block inhibitor: $out"
out=$("${member[@]}" "$hv" --bus-address="$addr" hv-gm assign vm-a dsn:no-such-pf 0 2>&1) && fail "unknown PF accepted"
grep -qF "No SR-IOV PF with identity 'dsn:no-such-pf' (luoctl vfs) [org.luod1.Error.NoSuchPF]" <<<"$out" ||
	fail "AssignVF by a member of group $group: $out"
# Names are bound to their uid while luod runs, so a uid owns at most 64:
# the 65th is refused (TooMany), the ones it owns stay usable; root's are
# counted apart.  (uid 65534 owns hv-nb and hv-gm already.)
for i in $(seq 3 64); do
	"${nobody[@]}" "$hv" --bus-address="$addr" "hv-n$i" list >/dev/null 2>&1 || fail "name hv-n$i of uid 65534 refused"
done
out=$("${nobody[@]}" "$hv" --bus-address="$addr" hv-n65 list 2>&1) && fail "uid 65534 got a 65th name"
grep -qF "Consumer name hv-n65: uid 65534 owns 64 names of at most 64, all uids 64 of at most 4096; reuse one of them [org.luod1.Error.TooMany]" <<<"$out" ||
	fail "name bound: $out"
"${nobody[@]}" "$hv" --bus-address="$addr" hv-n3 list >/dev/null 2>&1 || fail "uid 65534 cannot reuse its own name"
"$hv" --bus-address="$addr" hv-r list >/dev/null 2>&1 || fail "root refused a name while uid 65534 is at its bound"
# GetInventory is answered from what luod keeps (the same fresh update_id
# twice, no 20 ms TSC calibration and scan per call) until a device event
# or 2 s: a "change" uevent of a PCI device makes the next call scan.
inv_id() { call GetInventory | grep -oE 'update_id[^,]*' | grep -oE '[0-9a-f-]{36}'; }
i1=$(inv_id)
[[ -n $i1 && $(inv_id) == "$i1" ]] || fail "GetInventory was not kept: $i1, then $(inv_id)"
dev=$(ls /sys/bus/pci/devices | head -1)
if [[ -n $dev ]] && echo change >"/sys/bus/pci/devices/$dev/uevent" 2>/dev/null; then
	for _ in $(seq 20); do [[ $(inv_id) != "$i1" ]] && break; sleep 0.05; done
	[[ $(inv_id) != "$i1" ]] || fail "GetInventory still the same after a uevent of $dev"
fi
stop_luod
# VF assignments are bounded per uid (1024): a uid holding that many (here
# loaded from assignments.json) is refused the next (TooMany), before any
# scan.
python3 - "$state/assignments.json" <<'PY'
import json, sys
json.dump([{"consumer": "hv-q", "guest": "vm-q", "pf_identity": "dsn:00-11-22-33-44-55-66-77", "vf_index": i,
            "consumer_uid": 65534} for i in range(1024)], open(sys.argv[1], "w"))
PY
start_luod --consumer-group="$group"
out=$("${member[@]}" "$hv" --bus-address="$addr" hv-q assign vm-q2 dsn:no-such-pf 0 2>&1) && fail "a 1025th assignment accepted"
grep -qF "Consumer hv-q: uid 65534 holds 1024 VF assignments of at most 1024 [org.luod1.Error.TooMany]" <<<"$out" ||
	fail "assignment bound: $out"
stop_luod
rm "$state/assignments.json"

# Inhibitors.  Block: Update refused with the holder's reason, nothing changes.
start_luod --max-delay=2 --backends=initrd
"$hv" --bus-address="$addr" hvB inhibit block "migrating vm-x" 3 >"$tmp/hvB.out" 2>&1 &
hvB=$!
for _ in $(seq 100); do grep -q "inhibit block held" "$tmp/hvB.out" 2>/dev/null && break; sleep 0.05; done
out=$(call Update ssst /etc/hostname /etc/hostname "" 1 2>&1) && fail "Update accepted under a block inhibitor"
grep -q "Update blocked by consumer hvB: migrating vm-x" <<<"$out" || fail "block inhibitor: $out"
exits 4 "${luoctl[@]}" update --kernel /etc/hostname --initrd /etc/hostname --dry-run
grep -q "update refused: Update blocked by consumer hvB" <<<"$OUT" || fail "luoctl under a block inhibitor: $OUT"
[[ $(prop State) == 's "idle"' ]] || fail "block inhibitor changed State: $(prop State)"
wait "$hvB"
out=$(call Update ssst /etc/hostname /etc/hostname "" 1 2>&1) || fail "Update still blocked after the holder closed its fd: $out"
# Bytes written into an inhibitor fd are not a release: only closing it is.
"$hv" --bus-address="$addr" hvP inhibit block "poked" keep poke hold 3 >"$tmp/hvP.out" 2>&1 &
hvP=$!
for _ in $(seq 100); do grep -q "poked" "$tmp/hvP.out" 2>/dev/null && break; sleep 0.05; done
out=$(call Update ssst /etc/hostname /etc/hostname "" 1 2>&1) && fail "Update ran while hvP (poked) held a block inhibitor"
grep -q "Update blocked by consumer hvP: poked" <<<"$out" || fail "poked block inhibitor: $out"
wait "$hvP"
# Delay: PrepareForUpdate goes out; one holder releases after 1 s, one never
# does and the maximum (2 s) applies; then the update goes on (and fails at
# the load of /etc/hostname, as always here).
"$hv" --bus-address="$addr" hvC inhibit delay "pausing vm-c" 1 >"$tmp/hvC.out" 2>&1 &
hvC=$!
"$hv" --bus-address="$addr" hvD inhibit delay "stuck" 60 >"$tmp/hvD.out" 2>&1 &
hvD=$!
for _ in $(seq 100); do grep -q "held" "$tmp/hvC.out" 2>/dev/null && grep -q "held" "$tmp/hvD.out" 2>/dev/null && break; sleep 0.05; done
t0=$SECONDS
out=$(call Update ssst /etc/hostname /etc/hostname "" 0 2>&1) && fail "kexec loaded /etc/hostname?"
((SECONDS - t0 >= 2)) || fail "Update did not wait for the delay inhibitors ($((SECONDS - t0)) s)"
grep -q "^prepare " "$tmp/hvC.out" || fail "hvC got no PrepareForUpdate: $(cat "$tmp/hvC.out")"
grep -q "Delay inhibitor of hvC (pausing vm-c) released after" "$tmp/luod.log" || fail "hvC release not logged"
grep -q "Delay inhibitor of hvD (stuck) still held after the maximum 2.0 s" "$tmp/luod.log" || fail "hvD timeout not logged"
# The consumers paused for this update_id: State failed names it.
id=$(sed -n 's/^prepare //p' "$tmp/hvC.out")
[[ $(prop State) == 's "failed"' && $(prop UpdateId) == "s \"$id\"" ]] ||
	fail "after a failed update: State $(prop State), UpdateId $(prop UpdateId), PrepareForUpdate $id"
kill "$hvD" 2>/dev/null || true
wait "$hvC" || fail "hvC: $(cat "$tmp/hvC.out")"
stop_luod
# A consumer that crashes while luod waits for its delay inhibitor does not
# stall luod: its fd closes with it, long before the 20 s maximum.
start_luod --max-delay=20 --backends=initrd
"$hv" --bus-address="$addr" hvE inhibit delay "about to crash" 600 >"$tmp/hvE.out" 2>&1 &
hvE=$!
for _ in $(seq 100); do grep -q "held" "$tmp/hvE.out" 2>/dev/null && break; sleep 0.05; done
t0=$SECONDS
(call Update ssst /etc/hostname /etc/hostname "" 0 >/dev/null 2>&1 || true) &
upd=$!
for _ in $(seq 100); do grep -q "^prepare " "$tmp/hvE.out" 2>/dev/null && break; sleep 0.05; done
kill -9 "$hvE"
wait "$upd"
((SECONDS - t0 < 10)) || fail "luod stalled $((SECONDS - t0)) s on a crashed consumer"
grep -q "Delay inhibitor of hvE (about to crash) released after" "$tmp/luod.log" || fail "crashed hvE not seen as released"
[[ $(prop State) == 's "failed"' ]] || fail "after the crashed consumer: State $(prop State)"
stop_luod
# The kernel and initrd are read from what the preflight opened, and
# refused if they changed after it: written to in place, or renamed over
# (the preflighted inode loses its link), by name; no path is looked up
# again.  The initrd backend loads after the wait for a delay inhibitor,
# which opens the window.  swap_during_update KERNEL INITRD CMD: runs CMD
# while luod waits; the Update error is left in OUT.
swap_during_update() {
	local hvS _
	"$hv" --bus-address="$addr" hvS inhibit delay "pausing" 600 >"$tmp/hvS.out" 2>&1 &
	hvS=$!
	for _ in $(seq 100); do grep -q "held" "$tmp/hvS.out" 2>/dev/null && break; sleep 0.05; done
	call Update ssst "$1" "$2" "" 0 >"$tmp/swap.out" 2>&1 &
	for _ in $(seq 100); do grep -q "^prepare " "$tmp/hvS.out" 2>/dev/null && break; sleep 0.05; done
	grep -q "^prepare " "$tmp/hvS.out" || fail "hvS got no PrepareForUpdate: $(cat "$tmp/hvS.out")"
	eval "$3"
	kill "$hvS" 2>/dev/null || true
	wait "$hvS" 2>/dev/null || true
	wait %call 2>/dev/null || true
	for _ in $(seq 200); do [[ $(prop State) == 's "failed"' ]] && break; sleep 0.05; done
	OUT=$(cat "$tmp/swap.out")
}
start_luod --max-delay=20 --backends=initrd
cp /etc/hostname "$tmp/k1"
cp /etc/hostname "$tmp/i1"
swap_during_update "$tmp/k1" "$tmp/i1" 'echo more >>"$tmp/k1"'
grep -q "refused $tmp/k1: the kernel image changed (written to, renamed over or removed) after the preflight opened it; not loaded" <<<"$OUT" ||
	fail "kernel written to during the update: $OUT"
cp /etc/hostname "$tmp/k2"
cp /etc/hostname "$tmp/i2"
swap_during_update "$tmp/k2" "$tmp/i2" 'echo more >>"$tmp/i2"'
grep -q "Initrd $tmp/i2 changed (written to, renamed over or removed) after the preflight opened it; not used" <<<"$OUT" ||
	fail "initrd written to during the update: $OUT"
cp /etc/hostname "$tmp/k3"
cp /etc/hostname "$tmp/i3"
cp /etc/os-release "$tmp/other"
swap_during_update "$tmp/k3" "$tmp/i3" 'mv "$tmp/other" "$tmp/k3"'
grep -q "refused $tmp/k3: the kernel image changed .* after the preflight opened it; not loaded" <<<"$OUT" ||
	fail "kernel renamed over during the update: $OUT"
stop_luod
# luoctl abandon during the wait for a delay inhibitor: the update's
# luoctl exits 6 (Abandoned); with nothing left to abandon, 1 (NoUpdate).
start_luod --max-delay=20 --backends=initrd
"$hv" --bus-address="$addr" hvA inhibit delay "pausing" 600 >"$tmp/hvA.out" 2>&1 &
hvA=$!
for _ in $(seq 100); do grep -q "held" "$tmp/hvA.out" 2>/dev/null && break; sleep 0.05; done
rc=0
"${luoctl[@]}" update --kernel /etc/hostname --initrd /etc/hostname --yes >"$tmp/upd.out" 2>&1 &
upd=$!
for _ in $(seq 100); do grep -q "^prepare " "$tmp/hvA.out" 2>/dev/null && break; sleep 0.05; done
exits 0 "${luoctl[@]}" abandon
grep -q "^Abandoned update $(sed -n 's/^prepare //p' "$tmp/hvA.out")" <<<"$OUT" || fail "luoctl abandon: $OUT"
wait "$upd" || rc=$?
kill "$hvA" 2>/dev/null || true
[[ $rc -eq 6 ]] || fail "luoctl update exited $rc when abandoned: $(cat "$tmp/upd.out")"
grep -q "update failed: .*abandoned" "$tmp/upd.out" || fail "luoctl update, abandoned: $(cat "$tmp/upd.out")"
exits 1 "${luoctl[@]}" abandon
grep -q "No update is in progress or loaded" <<<"$OUT" || fail "luoctl abandon with no update: $OUT"
# luod vanishes in the middle of an update (killed while consumers
# prepare): luoctl update says so and exits 7, never 0.
"$hv" --bus-address="$addr" hvK inhibit delay "pausing" 600 >"$tmp/hvK.out" 2>&1 &
hvK=$!
for _ in $(seq 100); do grep -q "held" "$tmp/hvK.out" 2>/dev/null && break; sleep 0.05; done
rc=0
"${luoctl[@]}" update --kernel /etc/hostname --initrd /etc/hostname --yes >"$tmp/upd.out" 2>&1 &
upd=$!
for _ in $(seq 100); do grep -q "^prepare " "$tmp/hvK.out" 2>/dev/null && break; sleep 0.05; done
grep -q "^prepare " "$tmp/hvK.out" || fail "hvK got no PrepareForUpdate: $(cat "$tmp/hvK.out")"
kill -9 "$luod_pid"
wait "$luod_pid" 2>/dev/null || true
wait "$upd" || rc=$?
kill "$hvK" 2>/dev/null || true
[[ $rc -eq 7 ]] || fail "luoctl update exited $rc when luod vanished: $(cat "$tmp/upd.out")"
grep -q "luod went away during the call" "$tmp/upd.out" || fail "luoctl update, luod vanished: $(cat "$tmp/upd.out")"
# Assignments saved by an earlier luod are loaded; a corrupt file is named and kept.
cat >"$state/assignments.json" <<'JSON'
[ { "consumer": "hv1", "guest": "vm-a", "pf_identity": "dsn:00-11-22-33-44-55-66-77", "vf_index": 3 } ]
JSON
start_luod
[[ $(call GetAssignments) == 'a(sssu) 1 "hv1" "vm-a" "dsn:00-11-22-33-44-55-66-77" 3' ]] ||
	fail "assignments not loaded: $(call GetAssignments)"
stop_luod
echo '[ {"consumer": ' >"$state/assignments.json"
start_luod
grep -qF "Refusing $state/assignments.json: assignments: not JSON: incomplete at byte 16: Bad message; no VF assignment loaded, the file is kept as $state/assignments.json.broken" \
	"$tmp/luod.log" || fail "corrupt assignments.json not named: $(cat "$tmp/luod.log")"
[[ ! -e $state/assignments.json && $(cat "$state/assignments.json.broken") == '[ {"consumer": ' ]] ||
	fail "corrupt assignments.json not kept aside"
stop_luod
# One bad entry among good ones: nothing is loaded (not the entries before
# it), the file is kept aside whole, and the next save (UnassignVF) writes
# over none of it.  An earlier .broken file is not replaced.
pf=dsn:00-11-22-33-44-55-66-77
cat >"$state/assignments.json" <<JSON
[ { "consumer": "hv1", "guest": "vm-a", "pf_identity": "$pf", "vf_index": 0 },
  { "consumer": "hv1", "guest": "vm-b", "pf_identity": "$pf", "vf_index": 1 },
  { "consumer": "hv1", "guest": "vm-c", "pf_identity": "$pf", "vf_index": "5" },
  { "consumer": "hv1", "guest": "vm-d", "pf_identity": "$pf", "vf_index": 3 } ]
JSON
cp "$state/assignments.json" "$tmp/partial.json"
start_luod
out=$("$hv" --bus-address="$addr" hv1 unassign vm-a "$pf" 0 2>&1) && fail "UnassignVF of a VF from a refused file succeeded"
grep -qF "Guest vm-a holds no VF 0 of PF $pf" <<<"$out" || fail "UnassignVF after a refused file: $out"
[[ $(call GetAssignments) == "a(sssu) 0" ]] || fail "a partial assignments.json was loaded: $(call GetAssignments)"
stop_luod
for g in vm-c vm-d; do
	cat "$state"/assignments.json* | grep -qF "\"$g\"" || fail "$g lost from $state: $(cat "$state"/assignments.json*)"
done
cmp -s "$tmp/partial.json" "$state/assignments.json.broken.2" || fail "the partial file was not kept whole as .broken.2"
[[ $(cat "$state/assignments.json.broken") == '[ {"consumer": ' ]] || fail "the first .broken file was replaced"
grep -qF "Refusing $state/assignments.json: assignments[2] (guest \"vm-c\"): vf_index: expected int, got string: Bad message; no VF assignment loaded, the file is kept as $state/assignments.json.broken.2" \
	"$tmp/luod.log" || fail "the refused entry is not named: $(cat "$tmp/luod.log")"
rm -f "$state"/assignments.json*

# --backends: a bad list is refused at start; with only LUO and the initrd
# allowed, an update without /dev/liveupdate and without an initrd is
# refused before anything is touched, saying why.
out=$("$build/luod/luod" --backends=luo,tape 2>&1) && fail "luod accepted --backends=luo,tape"
grep -q "Invalid --backends 'luo,tape'" <<<"$out" || fail "bad --backends: $out"
if [[ ! -e /dev/liveupdate ]]; then
	start_luod --backends=luo,initrd
	out=$(call Update ssst /etc/hostname "" "" 0 2>&1) && fail "update without a usable backend accepted"
	grep -q "No preservation backend usable: luo not available: no /dev/liveupdate .*, no initrd given" <<<"$out" ||
		fail "no backend: $out"
	exits 5 "${luoctl[@]}" update --kernel /etc/hostname --yes
	grep -q "update refused: No preservation backend usable" <<<"$OUT" || fail "luoctl, no backend: $OUT"
	[[ $(prop State) == 's "idle"' ]] || fail "no backend: State $(prop State)"
	stop_luod
fi
# Device events: GetEvents answers anyone (no SR-IOV PF on this machine, so
# no event is attributed: none buffered, none lost); without a monitor
# (--no-events) it fails with ENODEV saying why; a bad --event-buffer is
# refused at start.
start_luod
grep -q "Watching pci, vfio and net device events (\(udev\|kernel\) source)" "$tmp/luod.log" ||
	fail "luod does not say it watches device events: $(cat "$tmp/luod.log")"
[[ $(call GetEvents t 0) == 'ta(stsssa{ss}) 0 0' ]] || fail "GetEvents on a machine without PFs: $(call GetEvents t 0)"
out=$(gdbus call --address "$addr" --dest org.luod1 --object-path /org/luod1 --method org.luod1.Manager.GetEvents 0 2>&1) ||
	fail "gdbus GetEvents: $out"
[[ $out == "(uint64 0, @a(stsssa{ss}) [])" ]] || fail "gdbus GetEvents: $out"
# A cursor beyond every seqnum of this boot (one kept from before a kexec).
out=$(call GetEvents t 18446744073709551615 2>&1) && fail "GetEvents accepted a cursor from the future: $out"
grep -q "Seqnum 18446744073709551615 is beyond the newest event of this boot" <<<"$out" || fail "future cursor: $out"
# ... but any seqnum this kernel gave is a cursor of this boot, seen by
# this luod or not (a luod restarted on the same boot).
now=$(cat /sys/kernel/uevent_seqnum)
out=$(call GetEvents t "$now" 2>&1) || fail "GetEvents refused seqnum $now of this boot: $out"
# Consumers need no privilege to catch up (the policy lets them call it).
out=$("${nobody[@]}" "$hv" --bus-address="$addr" - fetch 0 2>&1) || fail "GetEvents as uid 65534: $out"
[[ $out == "lost 0" ]] || fail "GetEvents as uid 65534: $out"
stop_luod
# The owner of a consumer name survives a luod restart (and a kexec: the
# state carries it): recorded with the name's VF assignments.
cat >"$state/assignments.json" <<'EOF2'
[ { "consumer": "hv-owned", "guest": "vm-o", "pf_identity": "dsn:00-11-22-33-44-55-66-77", "vf_index": 3,
    "consumer_uid": 0 } ]
EOF2
start_luod
out=$("${nobody[@]}" "$hv" --bus-address="$addr" hv-owned list 2>&1) && fail "nobody took hv-owned after a restart"
grep -q "Consumer name hv-owned belongs to uid 0" <<<"$out" || fail "owner across a restart: $out"
out=$("$hv" --bus-address="$addr" hv-owned list 2>&1) || fail "root refused its own hv-owned: $out"
grep -q "^assignment hv-owned vm-o dsn:00-11-22-33-44-55-66-77 3" <<<"$out" || fail "hv-owned's assignment: $out"
stop_luod
grep -q '"consumer_uid": 0' "$state/assignments.json" || fail "consumer_uid not kept: $(cat "$state/assignments.json")"
rm "$state/assignments.json"
start_luod --no-events
out=$(gdbus call --address "$addr" --dest org.luod1 --object-path /org/luod1 --method org.luod1.Manager.GetEvents 0 2>&1) &&
	fail "GetEvents without a monitor succeeded: $out"
grep -q "luod watches no device events" <<<"$out" || fail "GetEvents without a monitor: $out"
stop_luod
out=$("$build/luod/luod" --event-buffer=8 2>&1) && fail "luod accepted --event-buffer=8"
grep -q "Invalid --event-buffer '8' (events, 16..65536)" <<<"$out" || fail "bad --event-buffer: $out"

# The bus goes away: luod exits non-zero (Restart=on-failure), saying why.
dbus-daemon --config-file="$tmp/bus.conf" --nofork --nopidfile --address="unix:path=$tmp/bus2" &
bus2=$!
pids+=("$bus2")
for _ in $(seq 100); do [[ -S $tmp/bus2 ]] && break; sleep 0.05; done
"$build/luod/luod" --bus-address="unix:path=$tmp/bus2" --state-dir="$state" --runtime-dir="$tmp/run" 2>"$tmp/luod2.log" &
luod2=$!
for _ in $(seq 200); do grep -q "ready on" "$tmp/luod2.log" && break; sleep 0.05; done
kill "$bus2"
rc=0
wait "$luod2" || rc=$?
[[ $rc -eq 1 ]] || fail "luod exited $rc when its bus went away: $(cat "$tmp/luod2.log")"
grep -q "Disconnected from the bus; exiting so that luod is restarted" "$tmp/luod2.log" || fail "no log line on disconnect"

echo "ok: luod/luoctl on a private dbus-daemon; busctl and gdbus agree with proto/; errors, privileges, refusals; GetEvents"
