# The update scenario with the state file on a disk (luod --backends=file).
UPDATE_BACKEND=file
# And a small event buffer (luod --event-buffer=16): the restore's events
# overflow it; GetEvents must say so.
UPDATE_EVENT_BUFFER=48
. /luod-tb/scenarios/update/scenario.sh
