# Each round (ROUNDS, default 40): both pci-testdev devices, unbound, get
# driver_override vfio-pci and are bound from two writers at once
# (/sys/bus/pci/drivers/vfio-pci/bind); then both are unbound from two
# writers at once.  The first bind of the IOMMU group creates its VFIO
# group; the other finds it, possibly before its chardev is registered
# (vfio_group_find_or_create() then waits for the registration), and the
# last unbind deletes it while the next round's creator may look it up.
#
# Checked each round: both binds succeed, both are on vfio-pci, the
# group has one chardev (/dev/vfio/G) and one class device
# (/sys/class/vfio/G); after the unbinds neither is left; no kernel report
# (WARN, BUG, lockdep, list or refcount corruption, hung task) at the end.
# Whether a round took the waiting path is timing (2 TCG vCPUs); the test
# checks the outcome, whatever the interleaving.
D=/sys/bus/pci/devices
DRV=/sys/bus/pci/drivers/vfio-pci
ROUNDS=$(tb_arg rounds || echo 40)

testdevs() {  # BDFs of QEMU's pci-testdev devices (1b36:0005), sorted
	local d
	for d in $D/*; do
		[ "$(cat $d/vendor):$(cat $d/device)" = 0x1b36:0x0005 ] && basename $d
	done | sort
}
# both bind|unbind A B: A and B written to vfio-pci's bind or unbind file
# from two writers at once; 0 if both writes succeeded, their exit status
# and errors in /tmp/bind.err
both() {
	local ra rb sa=0 sb=0
	sh -c "echo $2 >$DRV/$1" 2>/tmp/bind.a & ra=$!
	sh -c "echo $3 >$DRV/$1" 2>/tmp/bind.b & rb=$!
	wait $ra || sa=$?
	wait $rb || sb=$?
	echo "$1 $2: status $sa $(cat /tmp/bind.a); $1 $3: status $sb $(cat /tmp/bind.b)" >/tmp/bind.err
	[ $sa = 0 ] && [ $sb = 0 ]
}

stage1() {
	local pfs a b p g ga gb r bad=0
	pfs=$(testdevs)
	a=$(echo $pfs | cut -d' ' -f1)
	b=$(echo $pfs | cut -d' ' -f2)
	tb_check "two pci-testdev devices ($(echo $pfs))" test "$(echo $pfs | wc -w)" -eq 2
	ga=$(basename "$(readlink $D/$a/iommu_group)")
	gb=$(basename "$(readlink $D/$b/iommu_group)")
	tb_check "$a and $b share an IOMMU group ($ga, $gb)" test "$ga" = "$gb"
	g=$ga
	for p in $a $b; do
		[ -e $D/$p/driver ] && echo $p >$D/$p/driver/unbind
		echo vfio-pci >$D/$p/driver_override
	done
	tb_check "both unbound before the first round" test ! -e $D/$a/driver -a ! -e $D/$b/driver
	dmesg -c >/dev/null
	r=1
	while [ $r -le "$ROUNDS" ]; do
		tb_log "round $r"
		if ! both bind $a $b; then
			tb_check "round $r: both binds succeeded ($(cat /tmp/bind.err))" false; bad=1; break
		fi
		if [ "$(tb_driver_of $a)" != vfio-pci ] || [ "$(tb_driver_of $b)" != vfio-pci ]; then
			tb_check "round $r: both on vfio-pci (have $(tb_driver_of $a), $(tb_driver_of $b))" false; bad=1; break
		fi
		if [ ! -c /dev/vfio/$g ] || [ "$(ls /sys/class/vfio | grep -cx "$g")" != 1 ]; then
			tb_check "round $r: one VFIO group $g (/dev/vfio: $(ls /dev/vfio | tr '\n' ' '); /sys/class/vfio: $(ls /sys/class/vfio | tr '\n' ' '))" false
			bad=1; break
		fi
		if ! both unbind $a $b; then
			tb_check "round $r: both unbinds succeeded ($(cat /tmp/bind.err))" false; bad=1; break
		fi
		if [ -e $D/$a/driver ] || [ -e $D/$b/driver ] || [ -e /dev/vfio/$g ] || [ -e /sys/class/vfio/$g ]; then
			tb_check "round $r: after the unbinds no driver and no group $g left" false; bad=1; break
		fi
		r=$((r + 1))
	done
	[ $bad = 0 ] && tb_say "CHECK ok $ROUNDS rounds: both devices bound at once to one VFIO group $g, and unbound"
	tb_figure rounds $((r - 1)) count
	dmesg >/tmp/kmsg.all
	tb_check "no kernel report" sh -c "! grep -Eq '$TB_KMSG_REPORT' /tmp/kmsg.all"
	grep -E "$TB_KMSG_REPORT" /tmp/kmsg.all | head -n 40 | tb_info
	tb_finish
}
