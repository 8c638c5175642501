# host-update with systemctl kexec (Update flag VIA_SYSTEMD).
HOST_VIA=--via-systemd
. /luod-tb/scenarios/host-update/scenario.sh
