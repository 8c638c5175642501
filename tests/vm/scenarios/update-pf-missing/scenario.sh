# The update scenario, but nvme1 is removed from the PCI bus in the new
# kernel before luod starts: luod must name it (not found by its identity,
# ENODEV), restore the other two PFs and keep the state.
UPDATE_BREAK_PF=nvme1
UPDATE_BREAK_HOW=remove
. /luod-tb/scenarios/update/scenario.sh
