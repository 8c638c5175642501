# tcg-profile-selftest: two windows for the TCG plugin's snapshots
# (tb_hostsample): "pause", around tb-switch pause $N (N PAUSE
# instructions in a loop, in user space), and "idle", a 1 s sleep.
# host-check reads the snapshots: the pause window must count at least N
# and at most 1 % more PAUSEs at user addresses, at least N block
# executions and 2 N instructions there (a PAUSE ends its block), the idle
# window (almost) no user PAUSE; and tcg-profile-report must accept both
# windows against the kernel's System.map.
N=200000

stage1() {
	local out
	tb_hostsample begin pause
	out=$(tb-switch pause $N)
	tb_hostsample end pause
	tb_check "tb-switch pause $N ran" test -n "$out"
	echo "tb-switch pause: $out (count, wall us, us a PAUSE)" | tb_info
	tb_figure pause-count "$N" n

	tb_hostsample begin idle
	sleep 1
	tb_hostsample end idle
	tb_finish
}
