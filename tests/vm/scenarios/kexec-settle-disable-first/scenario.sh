# kexec-settle with SR-IOV disabled on every PF, all PFs at once, right
# before kexec -e (HOSTMARK disable-start): bench/kexec-settle compares
# disable-start -> init with the plain order's kexec-e -> init.
KEXEC_SETTLE_DISABLE_FIRST=1
. /luod-tb/scenarios/kexec-settle/scenario.sh
