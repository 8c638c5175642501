# Enables 8, 32 and 127 VFs on one PF (disabling in between) and reports
# each enable time (guest wall clock, ms) and the host's view (HOSTMARKs).
. /luod-tb/bench-vf-enable.sh
