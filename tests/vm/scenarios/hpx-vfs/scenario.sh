# _HPX reaches every VF: the SSDT (hpx-vf.asl) gives the host bridge an
# _HPX whose one Type 3 record, for SR-IOV VFs only, sets Interrupt Line
# (config offset 0x3c) to 0x5a.  Two PFs enable 16 VFs each, from two
# writers at once, then 16 again after a disable (a second enable of the
# same PF).  Checked:
#  - the firmware has the method (/sys/firmware/acpi/tables/SSDT*, and the
#    host bridge's ACPI node);
#  - every VF of both PFs reads 0x5a at 0x3c, in both enables;
#  - neither PF does (the record's function type is VF only).
# Fails on a kernel that does not program _HPX/_HPP into VFs (the first
# version of kernel/patches/7-vf-acpi/0001, reviewed out for that reason),
# and on one whose per-PF evaluation programs the wrong package.
D=/sys/bus/pci/devices

config_byte() {  # config_byte BDF OFFSET: one config space byte, 2 hex digits
	od -An -tx1 -j "$2" -N 1 "$D/$1/config" | tr -d ' \n'
}

check_vfs() {  # check_vfs ROUND PF...: every VF's Interrupt Line is 0x5a
	local round=$1 pf vf bad n
	shift
	for pf in "$@"; do
		bad= n=0
		for vf in $(tb_vfs "$pf"); do
			n=$((n + 1))
			[ "$(config_byte "$vf" 60)" = 5a ] || bad="$bad $vf=$(config_byte "$vf" 60)"
		done
		tb_check_value "enable $round: VFs of $pf" 16 "$n"
		tb_check "enable $round: _HPX programmed into every VF of $pf (Interrupt Line 0x5a; not:${bad:- none})" test -z "$bad"
		tb_check "enable $round: PF $pf not programmed (Interrupt Line $(config_byte "$pf" 60))" \
			test "$(config_byte "$pf" 60)" != 5a
	done
}

stage1() {
	local pfs round
	pfs=$(tb_pfs)
	tb_check_value "SR-IOV PFs" 2 "$(echo $pfs | wc -w)"
	tb_check "an SSDT with the _HPX loaded" sh -c 'grep -l HPXVF /sys/firmware/acpi/tables/SSDT* >/dev/null'
	tb_set_autoprobe 0
	for round in 1 2; do
		tb_check "enable $round: 16 VFs on each PF from two writers at once" tb_write_numvfs_all 16 parallel
		check_vfs "$round" $pfs
		tb_check "disable $round" tb_write_numvfs_all 0 parallel
	done
	tb_finish
}
