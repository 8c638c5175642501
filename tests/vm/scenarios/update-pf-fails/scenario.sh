# The update scenario, but nvme1's driver is unbound in the new kernel
# before luod starts: its restore must fail (driver wait, ETIMEDOUT) with a
# clear error, the other two PFs must come back, the state must be kept.
UPDATE_BREAK_PF=nvme1
. /luod-tb/scenarios/update/scenario.sh
