#!/usr/bin/env bash
# dbus suite: luod and luoctl on a real, private dbus-daemon; the interface
# is also driven with busctl and gdbus (not ours) and checked against
# proto/org.luod1.Manager.xml.
#   test-luod-bus.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$1 src=$2 version=$3
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$tmp/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$tmp/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file="$tmp/bus.conf" --nofork --nopidfile &
pids+=($!)
addr=unix:path=$tmp/bus
for _ in $(seq 100); do [[ -S $tmp/bus ]] && break; sleep 0.05; done
[[ -S $tmp/bus ]] || fail "dbus-daemon did not start"

# luoctl without luod: exit 1, error names the service.
if out=$("$build/luod/luoctl" --bus-address="$addr" status 2>&1); then
	fail "luoctl status succeeded without luod: $out"
fi
grep -q 'org.luod1' <<<"$out" || fail "error does not name org.luod1: $out"

"$build/luod/luod" --bus-address="$addr" 2>"$tmp/luod.log" &
luod_pid=$!
pids+=("$luod_pid")
for _ in $(seq 100); do
	busctl --address="$addr" status org.luod1 >/dev/null 2>&1 && break
	sleep 0.05
done
busctl --address="$addr" status org.luod1 >/dev/null 2>&1 || fail "luod did not take org.luod1: $(cat "$tmp/luod.log")"

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

# Setting a read-only property is refused.
if busctl --address="$addr" set-property org.luod1 /org/luod1 org.luod1.Manager State s busy 2>/dev/null; then
	fail "State was writable"
fi

kill -TERM "$luod_pid"
wait "$luod_pid" || fail "luod exited $? on SIGTERM"
echo "ok: luod/luoctl on a private dbus-daemon, busctl and gdbus agree with proto/"
