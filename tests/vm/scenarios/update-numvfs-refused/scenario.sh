# The update scenario, but nvme1 is rebound to vfio-pci in the new kernel
# before luod starts: luod's sriov_numvfs write is refused (ENOENT); luod
# must name the PF and the errno, restore the other two PFs, keep the state.
UPDATE_BREAK_PF=nvme1
UPDATE_BREAK_HOW=vfio
. /luod-tb/scenarios/update/scenario.sh
