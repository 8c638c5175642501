# The update scenario with the state file on a disk (luod --backends=file).
UPDATE_BACKEND=file
. /luod-tb/scenarios/update/scenario.sh
