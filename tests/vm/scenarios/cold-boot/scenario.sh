# Cold boot with a state present: luod applies nothing, logs why, keeps the
# state byte for byte until luoctl discard (stage3 in update/scenario.sh).
UPDATE_BACKEND=file
UPDATE_COLD=1
. /luod-tb/scenarios/update/scenario.sh
