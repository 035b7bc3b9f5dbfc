/* SPDX-License-Identifier: MIT */
/*
 * -H for id-ctrl and id-ns: nvme-cli prints, after some fields, one line
 * per bit group ("  [hi:lo] : value<TAB>meaning") and a blank line. Each
 * decoded field is a table of bit groups: a one-bit group names its
 * feature and says "Supported"/"Not Supported" (or the two texts given).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "print_priv.h"

struct bits {
	uint8_t hi, lo;
	const char *name;	/* "<name> Supported" / "<name> Not Supported" */
	const char *set, *clear; /* or these two whole texts */
};

struct decoder {
	const char *field;
	uint16_t off;
	uint8_t size;
	const struct bits *b;
	size_t nr;
};

static const struct bits cmic[] = {
	{ 3, 3, NULL, "ANA supported", "ANA not supported" },
	{ 2, 2, NULL, "SR-IOV", "PCI" },
	{ 1, 1, NULL, "Multi Controller", "Single Controller" },
	{ 0, 0, NULL, "Multi Port", "Single Port" },
};
static const struct bits oacs[] = {
	{ 10, 10, "Lockdown Command and Feature" }, { 9, 9, "Get LBA Status Capability" },
	{ 8, 8, "Doorbell Buffer Config" }, { 7, 7, "Virtualization Management" },
	{ 6, 6, "NVMe-MI Send and Receive" }, { 5, 5, "Directives" },
	{ 4, 4, "Device Self-test" }, { 3, 3, "NS Management and Attachment" },
	{ 2, 2, "FW Commit and Download" }, { 1, 1, "Format NVM" },
	{ 0, 0, "Security Send and Receive" },
};
static const struct bits oncs[] = {
	{ 8, 8, "Copy" }, { 7, 7, "Verify" }, { 6, 6, "Timestamp" }, { 5, 5, "Reservations" },
	{ 4, 4, "Save and Select" }, { 3, 3, "Write Zeroes" },
	{ 2, 2, "Data Set Management" }, { 1, 1, "Write Uncorrectable" },
	{ 0, 0, "Compare" },
};
static const struct bits fuses[] = { { 0, 0, "Fused Compare and Write" } };

static const struct bits nsfeat[] = {
	{ 4, 4, NULL, "NPWG, NPWA, NPDG, NPDA, and NOWS are Supported",
	  "NPWG, NPWA, NPDG, NPDA, and NOWS are Not Supported" },
	{ 3, 3, NULL, "NGUID and EUI64 fields if non-zero, Never Reused",
	  "NGUID and EUI64 fields if non-zero, Reused" },
	{ 2, 2, "Deallocated or Unwritten Logical Block error" },
	{ 1, 1, NULL, "Namespace uses NAWUN, NAWUPF, and NACWU",
	  "Namespace uses AWUN, AWUPF, and ACWU" },
	{ 0, 0, "Thin Provisioning" },
};
static const struct bits flbas[] = {
	{ 6, 5, NULL, "Most significant 2 bits of Current LBA Format Selected", NULL },
	{ 4, 4, NULL, "Metadata Transferred at End of Data LBA",
	  "Metadata Transferred in Separate Contiguous Buffer" },
	{ 3, 0, NULL, "Least significant 4 bits of Current LBA Format Selected", NULL },
};
static const struct bits mc[] = {
	{ 1, 1, "Metadata Pointer" }, { 0, 0, "Metadata as Part of Extended Data LBA" },
};
static const struct bits dpc[] = {
	{ 4, 4, "Protection Information Transferred as Last 8 Bytes of Metadata" },
	{ 3, 3, "Protection Information Transferred as First 8 Bytes of Metadata" },
	{ 2, 2, "Protection Information Type 3" }, { 1, 1, "Protection Information Type 2" },
	{ 0, 0, "Protection Information Type 1" },
};

#define DC(s, n) { #n, offsetof(struct s, n), sizeof(((struct s *)0)->n), n, ARRAY_LEN(n) }

static const struct decoder ctrl_dec[] = {
	DC(nvme_id_ctrl, cmic), DC(nvme_id_ctrl, oacs), DC(nvme_id_ctrl, oncs),
	DC(nvme_id_ctrl, fuses),
};
static const struct decoder ns_dec[] = {
	DC(nvme_id_ns, nsfeat), DC(nvme_id_ns, flbas), DC(nvme_id_ns, mc), DC(nvme_id_ns, dpc),
};

static void decode(const struct decoder *t, size_t n, const char *field, const void *base)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = (const uint8_t *)base + t[i].off;
		uint32_t v;

		if (strcmp(t[i].field, field))
			continue;
		v = t[i].size == 1 ? p[0] : t[i].size == 2 ? pl16(p) : pl32(p);
		for (size_t j = 0; j < t[i].nr; j++) {
			const struct bits *b = &t[i].b[j];
			uint32_t x = (v >> b->lo) & ((2u << (b->hi - b->lo)) - 1);

			printf("  [%u:%u] : %#x\t", b->hi, b->lo, x);
			if (b->name)
				printf("%s %s\n", b->name, x ? "Supported" : "Not Supported");
			else
				printf("%s\n", x || !b->clear ? b->set : b->clear);
		}
		printf("\n");
	}
}

void print_id_ctrl_human(const char *field, const struct nvme_id_ctrl *id)
{
	decode(ctrl_dec, ARRAY_LEN(ctrl_dec), field, id);
}

void print_id_ns_human(const char *field, const struct nvme_id_ns *ns)
{
	decode(ns_dec, ARRAY_LEN(ns_dec), field, ns);
}
