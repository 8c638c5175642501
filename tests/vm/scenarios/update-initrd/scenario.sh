# The update scenario without LUO: luod appends the state to the initrd.
UPDATE_BACKEND=initrd
. /luod-tb/scenarios/update/scenario.sh
