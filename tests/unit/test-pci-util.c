/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "pci-util.h"
#include "tap.h"

static void test_parse_valid(void) {
        PciBdf b;

        CHECK(pci_bdf_parse("0000:00:1f.3", &b) == 0);
        CHECK(b.domain == 0 && b.bus == 0 && b.device == 0x1f && b.function == 3);

        CHECK(pci_bdf_parse("abcd:fe:03.7", &b) == 0);
        CHECK(b.domain == 0xabcd && b.bus == 0xfe && b.device == 3 && b.function == 7);

        /* VMD domains are wider than 4 digits. */
        CHECK(pci_bdf_parse("10000:e1:00.0", &b) == 0);
        CHECK(b.domain == 0x10000 && b.bus == 0xe1);

        /* Short form: domain 0. */
        CHECK(pci_bdf_parse("02:00.1", &b) == 0);
        CHECK(b.domain == 0 && b.bus == 2 && b.device == 0 && b.function == 1);
}

static void test_parse_invalid(void) {
        static const char *bad[] = {
                "", "0000:00:20.0" /* device > 0x1f */, "0000:00:1f.8" /* function > 7 */,
                "0000:00:1f", "0000:00:1f.3 ", "0000:00:1f.3\n", "000:00:1f.3",
                "0000:000:1f.3", "0000:0:1f.3", "0000-00:1f.3", "g000:00:1f.3",
                "0000:00:1f.33", "123456789:00:00.0", "00:1f", ":00:1f.3",
        };
        PciBdf b = { .domain = 0x1234 };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = pci_bdf_parse(bad[i], &b);
                if (r != -EINVAL)
                        fprintf(stderr, "accepted '%s' (r=%d)\n", bad[i], r);
                CHECK(r == -EINVAL);
        }
        /* Untouched on error. */
        CHECK(b.domain == 0x1234);
        CHECK(pci_bdf_parse(NULL, &b) == -EINVAL);
}

static void test_format_roundtrip(void) {
        char buf[PCI_BDF_STRING_MAX];
        PciBdf b = { .domain = 0, .bus = 0x3a, .device = 0x1d, .function = 6 }, c;

        CHECK(strcmp(pci_bdf_format(&b, buf), "0000:3a:1d.6") == 0);
        CHECK(pci_bdf_parse(buf, &c) == 0);
        CHECK(pci_bdf_compare(&b, &c) == 0);

        b.domain = 0x10000;
        CHECK(strcmp(pci_bdf_format(&b, buf), "10000:3a:1d.6") == 0);

        /* The widest BDF the parser takes formats whole and parses back. */
        b = (PciBdf) { .domain = 0xffffffff, .bus = 0xff, .device = 0x1f, .function = 7 };
        CHECK(strcmp(pci_bdf_format(&b, buf), "ffffffff:ff:1f.7") == 0);
        CHECK(pci_bdf_parse(buf, &c) == 0);
        CHECK(pci_bdf_compare(&b, &c) == 0);
}

static void test_compare(void) {
        PciBdf a, b;

        CHECK(pci_bdf_parse("0000:01:00.7", &a) == 0);
        CHECK(pci_bdf_parse("0000:01:01.0", &b) == 0);
        CHECK(pci_bdf_compare(&a, &b) < 0);
        CHECK(pci_bdf_compare(&b, &a) > 0);
        CHECK(pci_bdf_parse("0001:00:00.0", &b) == 0);
        CHECK(pci_bdf_compare(&a, &b) < 0);
}

int main(void) {
        test_parse_valid();
        test_parse_invalid();
        test_format_roundtrip();
        test_compare();
        return tap_failures ? 1 : 0;
}
