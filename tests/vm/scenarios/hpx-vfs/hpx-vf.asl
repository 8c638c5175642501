/*
 * An _HPX on the host bridge (\_SB.PCI0) with one Type 3 record (ACPI 6.3,
 * 6.2.9.4) for SR-IOV virtual functions only: in every PCIe endpoint VF,
 * set the Interrupt Line register (config space offset 0x3c: in QEMU a
 * read-write byte that nothing else writes in a VF without INTx; real
 * VFs may hardwire it) to 0x5a.  Linux searches for _HPX from a device's
 * bus up to the root bridge (pci_acpi_program_hp_params()); with
 * kernel/patches/7-vf-acpi/0001 once per SR-IOV enable for all its VFs.
 */
DefinitionBlock ("", "SSDT", 2, "LUOD", "HPXVF", 1)
{
    External (\_SB.PCI0, DeviceObj)

    Scope (\_SB.PCI0)
    {
        Name (_HPX, Package () {
            Package () {
                3,              /* record type 3 */
                1,              /* revision 1 */
                1,              /* one register descriptor */
                0x0001,         /* device type: PCIe endpoint */
                0x0004,         /* function type: SR-IOV VF */
                0,              /* configuration space location: header */
                0, 0, 0, 0, 0,  /* capability ID, version, vendor, DVSEC ID, revision */
                0, 0, 0,        /* match offset, AND mask, value: every function */
                0x3c,           /* register offset */
                0xffffff00,     /* AND mask: clear Interrupt Line */
                0x5a            /* OR mask: Interrupt Line 0x5a */
            }
        })
    }
}
