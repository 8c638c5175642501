# _HPX reaches every VF: the SSDT (hpx-vf.asl) gives the host bridge an
# _HPX whose one Type 3 record, for SR-IOV VFs only, sets Interrupt Line
# (config offset 0x3c) to 0x5a.  Two PFs enable 16 VFs each, from two
# writers started at once (their overlap is likely, not checked: the
# values are checked whatever the interleaving), then 16 again after a
# disable (QEMU resets a disabled VF, so the second enable starts from
# 0x00).  Checked:
#  - the table is installed and loaded (/sys/firmware/acpi/tables, the
#    kernel's "ACPI: SSDT ... LUOD HPXVF" line) and no ACPI error;
#  - every VF of both PFs reads 0x5a at 0x3c, in both enables;
#  - neither PF does (the record's function type is VF only);
#  - no kernel report (WARNING, BUG, ...) at the end.
# Fails on a kernel that does not program _HPX/_HPP into VFs (the first
# version of kernel/patches/7-vf-acpi/0001, reviewed out for that reason)
# and on one whose kept package is not programmed.  Both PFs find the same
# _HPX, so programming one PF's package into the other's VFs would pass.
D=/sys/bus/pci/devices

config_byte() {  # config_byte BDF OFFSET: one config space byte, 2 hex digits
	od -An -tx1 -j "$2" -N 1 "$D/$1/config" | tr -d ' \n'
}

check_vfs() {  # check_vfs ROUND PF...: every VF's Interrupt Line is 0x5a
	local round=$1 pf vf bad n v
	shift
	for pf in "$@"; do
		bad= n=0
		for vf in $(tb_vfs "$pf"); do
			n=$((n + 1))
			[ "$(config_byte "$vf" 60)" = 5a ] || bad="$bad $vf=$(config_byte "$vf" 60)"
		done
		tb_check_value "enable $round: VFs of $pf" 16 "$n"
		tb_check "enable $round: _HPX programmed into every VF of $pf (Interrupt Line 0x5a; not:${bad:- none})" test -z "$bad"
		v=$(config_byte "$pf" 60)
		tb_check "enable $round: PF $pf not programmed (Interrupt Line '$v')" \
			sh -c "echo '$v' | grep -Eqx '[0-9a-f]{2}' && [ '$v' != 5a ]"
	done
}

stage1() {
	local pfs round
	pfs=$(tb_pfs)
	tb_check_value "SR-IOV PFs" 2 "$(echo $pfs | wc -w)"
	tb_check "the SSDT with the _HPX installed" sh -c 'grep -l HPXVF /sys/firmware/acpi/tables/SSDT* >/dev/null'
	tb_check "... and loaded (ACPI: SSDT ... LUOD HPXVF)" sh -c 'dmesg | grep -q "ACPI: SSDT .*LUOD *HPXVF"'
	tb_check "no ACPI error" sh -c '! dmesg | grep -Eq "ACPI (BIOS )?Error"'
	tb_set_autoprobe 0
	for round in 1 2; do
		tb_check "enable $round: 16 VFs on each PF from two writers at once" tb_write_numvfs_all 16 parallel
		check_vfs "$round" $pfs
		tb_check "disable $round" tb_write_numvfs_all 0 parallel
	done
	dmesg >/tmp/kmsg.all
	tb_check "no kernel report" sh -c "! grep -Eq '$TB_KMSG_REPORT' /tmp/kmsg.all"
	grep -E "$TB_KMSG_REPORT" /tmp/kmsg.all | head -n 40 | tb_info
	tb_finish
}
