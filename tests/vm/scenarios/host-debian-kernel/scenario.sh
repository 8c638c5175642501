# host-update on Debian's kernel: modules, the initrd backend.
HOST_KERNEL=debian
. /luod-tb/scenarios/host-update/scenario.sh
