# shellcheck shell=bash
# tests/dbus/lib.sh — what the dbus tests share: a private dbus-daemon.

# Starts a session-type dbus-daemon that allows everything, listening on
# DIR/bus (its config in DIR/bus.conf), and prints "PID ADDRESS" once the
# socket is there; returns non-zero (nothing printed) if it did not come up
# within 5 s.  The daemon's output goes to DIR/dbus.log.
dbus_start_bus() {
	local dir=$1 pid i
	cat >"$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
	dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile >"$dir/dbus.log" 2>&1 &
	pid=$!
	for i in $(seq 100); do [[ -S $dir/bus ]] && break; sleep 0.05; done
	[[ -S $dir/bus ]] || { kill "$pid" 2>/dev/null; return 1; }
	echo "$pid unix:path=$dir/bus"
}

# Waits up to 10 s until NAME has an owner on the bus at ADDRESS; non-zero
# if it has none then.
dbus_wait_name() {
	local addr=$1 name=$2 i
	for i in $(seq 200); do
		[[ $(busctl --address="$addr" call org.freedesktop.DBus /org/freedesktop/DBus \
			org.freedesktop.DBus NameHasOwner s "$name" 2>/dev/null) == "b true" ]] && return 0
		sleep 0.05
	done
	return 1
}
