# host-debian-kernel with systemctl kexec.
HOST_KERNEL=debian HOST_VIA=--via-systemd
. /luod-tb/scenarios/host-update/scenario.sh
