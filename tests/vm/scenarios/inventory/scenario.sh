# Inventory scenario: tb-inventory drives the SR-IOV layer (luod/sriov.h):
# enables VFs, sets an igb VF's settings over rtnetlink, binds an nvme VF to
# vfio-pci; then its scan must report exactly what sysfs and iproute2's
# `ip link show` say.  Failing writes must name the object and the errno.
# A netdevsim device takes the VF settings igb cannot (802.1ad, rates, link
# state, rss_query_en).

IGB_MAC=02:1a:2b:3c:4d:01
NSIM_MAC=02:5e:00:00:00:02

sysattr() { cat "/sys/bus/pci/devices/$1/$2"; }
syslink() {  # last component of the link $2 of PCI device $1, empty without one
	if [ -e "/sys/bus/pci/devices/$1/$2" ]; then basename "$(readlink "/sys/bus/pci/devices/$1/$2")"; fi
}
sysoverride() {
	local o
	o=$(sysattr "$1" driver_override)
	[ "$o" = "(null)" ] || echo "$o"
}

# The PCIe Device Serial Number of $1 as an identity, walking the extended
# capability list of its config space in awk; empty without one.
cfg_dsn() {
	od -An -v -t x1 "/sys/bus/pci/devices/$1/config" | awk '
		function hx(s,   v, i) {
			v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		{ for (i = 1; i <= NF; i++) b[n++] = $i }
		END {
			pos = 256
			for (ttl = 480; ttl > 0 && pos >= 256 && pos + 12 <= n; ttl--) {
				if (hx(b[pos + 1] b[pos]) == 3) {
					printf "dsn:%s-%s-%s-%s-%s-%s-%s-%s\n", b[pos + 11], b[pos + 10], b[pos + 9],
						b[pos + 8], b[pos + 7], b[pos + 6], b[pos + 5], b[pos + 4]
					exit
				}
				nx = hx(b[pos + 3] b[pos + 2])
				nx = int(nx / 16); nx -= nx % 4
				if (nx == 0) exit
				pos = nx
			}
		}'
}
# The identity names the function: the DSN or the parent's path, then the
# PF's own DD.F (the end of its BDF); an all-zero or all-one DSN is none.
expected_identity() {
	local dsn parent ids
	dsn=$(cfg_dsn "$1")
	case $dsn in
	dsn:00-00-00-00-00-00-00-00 | dsn:ff-ff-ff-ff-ff-ff-ff-ff) dsn= ;;
	esac
	if [ -n "$dsn" ]; then
		echo "$dsn/${1##*:}"
		return
	fi
	parent=$(dirname "$(readlink -f "/sys/bus/pci/devices/$1")")
	ids=$(for a in vendor device subsystem_vendor subsystem_device; do sysattr "$1" $a; done |
		sed 's/^0x//' | tr '\n' ':')
	echo "path:${parent#/sys/devices/}/${1##*:}/${ids%:}"
}

# PF $1 as `tb-inventory flat` prints it, from sysfs.
sysfs_view() {
	local p=pf.$1 a dev i vf
	for a in vendor device subsystem_vendor subsystem_device; do echo "$p.$a=$(sysattr "$1" $a)"; done
	echo "$p.identity=$(expected_identity "$1")"
	echo "$p.driver=$(syslink "$1" driver)"
	for a in numvfs totalvfs drivers_autoprobe; do echo "$p.$a=$(sysattr "$1" sriov_$a)"; done
	dev=$(ls "/sys/bus/pci/devices/$1/net" 2>/dev/null | head -n 1)
	echo "$p.netdev=$dev"
	if [ -n "$dev" ]; then
		echo "$p.netdev_up=$(( $(cat "/sys/bus/pci/devices/$1/net/$dev/flags") & 1 ))"
	else
		echo "$p.netdev_up=0"
	fi
	i=0
	for vf in $(tb_vfs "$1"); do
		echo "$p.vf.$i.bdf=$vf"
		echo "$p.vf.$i.driver=$(syslink "$vf" driver)"
		echo "$p.vf.$i.driver_override=$(sysoverride "$vf")"
		echo "$p.vf.$i.iommu_group=$(syslink "$vf" iommu_group)"
		i=$((i + 1))
	done
	echo "$p.vf.count=$i"
}

# The VF settings of netdev $2 as `tb-inventory flat` prints them for PF
# $1, from `ip link show` (iproute2).
iplink_view() {
	"$IP" link show "$2" | awk -v p="pf.$1" '
		function grab(re, skip) {
			if (match(line, re)) return substr(line, RSTART + skip, RLENGTH - skip)
			return ""
		}
		function num(re, skip,   v) { v = grab(re, skip); return v == "" ? 0 : v }
		function onoff(k) {
			if (line ~ (k " on")) return 1
			if (line ~ (k " off")) return 0
			return ""
		}
		$1 == "vf" {
			line = $0; q = p ".vf." $2
			print q ".mac=" grab("link/ether [0-9a-f:]+", 11)
			print q ".vlan=" num("vlan [0-9]+", 5)
			print q ".qos=" num("qos [0-9]+", 4)
			print q ".vlan_proto=" (line ~ /vlan protocol 802\.1ad/ ? "802.1ad" : "802.1Q")
			print q ".spoofchk=" onoff("spoof checking")
			print q ".trust=" onoff("trust")
			print q ".link_state=" grab("link-state [a-z]+", 11)
			print q ".min_tx_rate=" num("min_tx_rate [0-9]+", 12)
			print q ".max_tx_rate=" num("max_tx_rate [0-9]+", 12)
			print q ".rss_query_en=" onoff("query_rss")
		}'
}

# Every line of file $1 is a line of `tb-inventory flat` (/tmp/inv.flat).
agree() {
	local missing l
	missing=$(grep -v -x -F -f /tmp/inv.flat "$1")
	[ -z "$missing" ] && return 0
	echo "$missing" | while IFS= read -r l; do
		echo "want: $l"
		echo " got: $(awk -v k="${l%%=*}=" 'index($0, k) == 1' /tmp/inv.flat)"
	done
	return 1
}
same() { [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }; }
# Runs tb-inventory "$@" expecting a failure; its stderr in /tmp/fail.err.
fails() {
	if tb-inventory "$@" >/tmp/fail.err 2>&1; then
		echo "tb-inventory $* succeeded"
		return 1
	fi
	sed 's/^/    /' /tmp/fail.err >/dev/console
}

stage1() {
	pfs=$(tb_pfs)
	expected=$(tb_hw_pfs | wc -l)
	tb_check "$expected SR-IOV PFs in sysfs ($(echo $pfs))" test "$(echo $pfs | wc -w)" -eq "$expected"
	nvme_pf= igb_pf=
	for pf in $pfs; do
		case $(tb_pf_kind "$pf") in
		nvme) nvme_pf=$pf ;;
		igb) igb_pf=$pf ;;
		esac
	done
	[ -n "$nvme_pf" ] && [ -n "$igb_pf" ] || tb_abort "want an nvme and an igb PF, have: $pfs"
	igb_dev=$(ls "/sys/bus/pci/devices/$igb_pf/net" | head -n 1)

	# ---- writes through the library
	for pf in $pfs; do
		total=$(sysattr "$pf" sriov_totalvfs)
		tb_check "tb-inventory apply $pf $total" tb-inventory apply "$pf" "$total"
		tb_check "$pf: $total VFs appear" test "$(tb_count_vfs "$pf")" -eq "$total"
	done
	# From one non-zero count to another (the library writes 0 first).
	tb_check "tb-inventory apply $nvme_pf 2 (from 4)" tb-inventory apply "$nvme_pf" 2
	tb_check "$nvme_pf: sriov_numvfs reads 2, 2 virtfn links" \
		same "$(sysattr "$nvme_pf" sriov_numvfs) $(tb_count_vfs "$nvme_pf")" "2 2"
	tb_check "tb-inventory apply $nvme_pf 4 (from 2)" tb-inventory apply "$nvme_pf" 4
	tb_check "$nvme_pf: sriov_numvfs reads 4, 4 virtfn links" \
		same "$(sysattr "$nvme_pf" sriov_numvfs) $(tb_count_vfs "$nvme_pf")" "4 4"
	# Beyond sriov_totalvfs: refused before anything is written.
	tb_check "tb-inventory apply $nvme_pf 999 fails" fails apply "$nvme_pf" 999
	tb_check "... naming the PF, the limit and ERANGE" \
		grep -q "PF $nvme_pf: cannot enable 999 VFs, sriov_totalvfs is 4: Numerical result out of range" /tmp/fail.err
	tb_check "... exit line names ERANGE" grep -q "^tb-inventory: apply: .*(ERANGE)$" /tmp/fail.err
	tb_check "$nvme_pf: sriov_numvfs still 4" same "$(sysattr "$nvme_pf" sriov_numvfs)" 4

	tb_check "ip link set $igb_dev up" "$IP" link set "$igb_dev" up
	tb_check "tb-inventory set-vf $igb_pf 1 mac=$IGB_MAC vlan=7 qos=2 spoofchk=0 trust=1" \
		tb-inventory set-vf "$igb_pf" 1 mac=$IGB_MAC vlan=7 qos=2 spoofchk=0 trust=1
	# igb takes only 802.1Q: the kernel's refusal names netdev, VF, value, errno.
	tb_check "tb-inventory set-vf $igb_pf 2 vlan=5 proto=802.1ad fails on igb" \
		fails set-vf "$igb_pf" 2 vlan=5 proto=802.1ad
	tb_check "... naming $igb_dev, VF 2, the VLAN and EPROTONOSUPPORT" \
		grep -q "PF netdev $igb_dev VF 2: failed to set vlan to 5 qos 0 proto 802.1ad: Protocol not supported" /tmp/fail.err

	nvme_vf=$(tb_vfs "$nvme_pf" | sed -n 2p)
	tb_check "tb-inventory bind $nvme_vf vfio-pci" tb-inventory bind "$nvme_vf" vfio-pci
	tb_check "$nvme_vf has $(tb_vfio_dev "$nvme_vf")" test -c "$(tb_vfio_dev "$nvme_vf")"
	nvme_vf2=$(tb_vfs "$nvme_pf" | sed -n 3p)
	tb_check "tb-inventory bind $nvme_vf2 no-such-driver fails" fails bind "$nvme_vf2" no-such-driver
	tb_check "... naming the VF, the driver and ENXIO" \
		grep -q "VF $nvme_vf2: unbound after probing, expected driver no-such-driver: No such device or address" /tmp/fail.err

	# ---- the scan
	tb_check "tb-inventory flat" sh -c 'tb-inventory flat >/tmp/inv.flat'
	tb_check "tb-inventory (JSON)" sh -c 'tb-inventory >/tmp/inv.json'
	"$IP" link show "$igb_dev" 2>&1 | sed 's/^/    /' >/dev/console
	grep -e "^pf\.$igb_pf\.vf\.1\." -e "^pf\.$nvme_pf\.vf\.1\." -e "identity=" /tmp/inv.flat |
		sed 's/^/    /' >/dev/console

	for pf in $pfs; do
		sysfs_view "$pf" >"/tmp/want.$pf"
		tb_check "$pf ($(tb_pf_kind "$pf")): flat agrees with sysfs on $(wc -l <"/tmp/want.$pf") fields" \
			agree "/tmp/want.$pf"
	done
	iplink_view "$igb_pf" "$igb_dev" >/tmp/want.iplink
	tb_check "$igb_pf: flat agrees with ip link show $igb_dev on $(wc -l </tmp/want.iplink) VF settings" \
		agree /tmp/want.iplink
	cat >/tmp/want.set <<-EOF
		pfs=$(echo $pfs)
		pf.count=$expected
		pf.$igb_pf.netdev=$igb_dev
		pf.$igb_pf.netdev_up=1
		pf.$igb_pf.vf.1.settings=1
		pf.$igb_pf.vf.1.mac=$IGB_MAC
		pf.$igb_pf.vf.1.vlan=7
		pf.$igb_pf.vf.1.qos=2
		pf.$igb_pf.vf.1.spoofchk=0
		pf.$igb_pf.vf.1.trust=1
		pf.$nvme_pf.vf.1.driver=vfio-pci
		pf.$nvme_pf.vf.1.driver_override=vfio-pci
		pf.$nvme_pf.vf.1.settings=0
		pf.$nvme_pf.vf.2.driver=
		pf.$nvme_pf.vf.2.driver_override=no-such-driver
	EOF
	tb_check "flat shows the PFs and what was set (igb VF 1 settings, nvme VFs 1, 2)" agree /tmp/want.set

	vfs_total=$(for pf in $pfs; do tb_count_vfs "$pf"; done | awk '{ n += $1 } END { print n }')
	tb_check "JSON: $vfs_total VFs" same "$(grep -c '"index":' /tmp/inv.json)" "$vfs_total"
	tb_check "JSON: one VF with driver_override vfio-pci" \
		same "$(grep -c '"driver_override": "vfio-pci"' /tmp/inv.json)" 1
	tb_check "JSON: igb netdev $igb_dev" grep -q "\"netdev\": \"$igb_dev\"" /tmp/inv.json
	tb_check "JSON: igb VF 1 MAC" grep -q "\"mac\": \"$IGB_MAC\"" /tmp/inv.json

	# ---- every setting, on netdevsim VFs (settings only: not PCI)
	nsim=/sys/bus/netdevsim/devices/netdevsim10
	echo "10 1" >/sys/bus/netdevsim/new_device
	echo 2 >"$nsim/sriov_numvfs"
	nsim_dev=$(ls "$nsim/net" | head -n 1)
	tb_check "netdevsim10 with 2 VFs ($nsim_dev)" test -n "$nsim_dev"
	tb_check "tb-inventory set-vf $nsim_dev 1 (every setting)" \
		tb-inventory set-vf "$nsim_dev" 1 mac=$NSIM_MAC vlan=5 qos=3 proto=802.1ad spoofchk=1 trust=1 \
		link_state=disable min_tx_rate=10 max_tx_rate=100 rss_query_en=1
	"$IP" link show "$nsim_dev" 2>&1 | sed 's/^/    /' >/dev/console
	iplink_view nsim "$nsim_dev" >/tmp/nsim.view
	cat >/tmp/nsim.want <<-EOF
		pf.nsim.vf.1.mac=$NSIM_MAC
		pf.nsim.vf.1.vlan=5
		pf.nsim.vf.1.qos=3
		pf.nsim.vf.1.vlan_proto=802.1ad
		pf.nsim.vf.1.spoofchk=1
		pf.nsim.vf.1.trust=1
		pf.nsim.vf.1.link_state=disable
		pf.nsim.vf.1.min_tx_rate=10
		pf.nsim.vf.1.max_tx_rate=100
		pf.nsim.vf.1.rss_query_en=1
	EOF
	tb_check "ip link show $nsim_dev: VF 1 has every setting" \
		sh -c 'missing=$(grep -v -x -F -f /tmp/nsim.view /tmp/nsim.want); [ -z "$missing" ] || { echo "$missing"; exit 1; }'
	tb_check "ip link show $nsim_dev: VF 0 untouched" \
		grep -q "^pf.nsim.vf.0.mac=00:00:00:00:00:00$" /tmp/nsim.view
	tb_finish
}
