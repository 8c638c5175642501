# kexec-settle with the settle handed over at kexec -e (KHO): stage 1
# sets pci_iov.kexec_settle_handover; bench/kexec-settle compares kexec -e
# -> init with the plain scenario's on the same kernel.
KEXEC_SETTLE_HANDOVER=1
. /luod-tb/scenarios/kexec-settle/scenario.sh
