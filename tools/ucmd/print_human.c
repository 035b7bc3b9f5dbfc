/* SPDX-License-Identifier: MIT */
/*
 * -H for id-ctrl and id-ns: after a decoded field nvme-cli 2.3 prints one
 * line per bit group, "<label> : <value>\t<meaning>", then a blank line.
 * Each decoded field is a table of such lines; a line's kind says how its
 * value (bits under mask, shifted right) becomes the meaning. The labels
 * keep nvme-cli's uneven indentation, which scripts may match.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "print_priv.h"

enum hkind {
	H_YN,		/* fmt with one %s: a when the value is non-zero, else b */
	H_RSVD,		/* "Reserved", only when non-zero */
	H_TEXT,		/* fmt as is, after the value */
	H_POW2,		/* fmt with one %d: 1 << value */
	H_ARR,		/* fmt with one %s: arr[value & (n - 1)] */
	H_TEMP,		/* "<C>°C (<K> Kelvin)\t" fmt */
	H_ZB,		/* "<v> (0's based)\t" fmt */
	H_U128,		/* "[127:0] : <decimal>\n\t" fmt: the whole 16-byte field */
	H_PCT,		/* fmt with %#x and %d: the value twice */
};

#define IF_SGLSP	(1u << 0)	/* only when SGLs are supported or the bit is set */
#define IF_FPIS		(1u << 1)	/* only when FPI is supported or the value is set */

struct hline {
	const char *label;
	uint32_t mask;
	uint8_t shift, kind, cond, n;
	const char *fmt, *a, *b;
	const char *const *arr;
};

struct hfield {
	const char *name;
	uint16_t off;
	uint8_t size;
	bool no_blank;		/* nvme-cli ends cntrltype's decoding without one */
	const struct hline *l;
	size_t nr;
};

#define SUP(label, bit, what) { label, 1u << (bit), bit, H_YN, 0, 0, what " %sSupported", "", "Not ", NULL }
#define YN(label, bit, fmt, a, b) { label, 1u << (bit), bit, H_YN, 0, 0, fmt, a, b, NULL }
#define RSVD(label, mask, shift) { label, mask, shift, H_RSVD, 0, 0, NULL, NULL, NULL, NULL }
#define TEXT(label, mask, shift, fmt) { label, mask, shift, H_TEXT, 0, 0, fmt, NULL, NULL, NULL }
#define ARR(label, mask, shift, fmt, arr) \
	{ label, mask, shift, H_ARR, 0, ARRAY_LEN(arr), fmt, NULL, NULL, arr }

static const struct hline cmic[] = {
	RSVD("  [7:4] : ", 0xf0, 4),
	YN("  [3:3] : ", 3, "ANA %ssupported", "", "not "),
	YN("  [2:2] : ", 2, "%s", "SR-IOV", "PCI"),
	YN("  [1:1] : ", 1, "%s Controller", "Multi", "Single"),
	YN("  [0:0] : ", 0, "%s Port", "Multi", "Single"),
};
static const struct hline oaes[] = {
	YN("  [31:31] : ", 31, "Discovery Log Change Notice %sSupported", "", "Not "),
	RSVD("  [30:28] : ", 0x70000000, 28),
	SUP("  [27:27] : ", 27, "Zone Descriptor Changed Notices"),
	RSVD("  [26:16] : ", 0x07ff0000, 16),
	SUP("  [15:15] : ", 15, "Normal NSS Shutdown Event"),
	SUP("  [14:14] : ", 14, "Endurance Group Event Aggregate Log Page Change Notice"),
	SUP("  [13:13] : ", 13, "LBA Status Information Notices"),
	SUP("  [12:12] : ", 12, "Predictable Latency Event Aggregate Log Change Notices"),
	SUP("  [11:11] : ", 11, "Asymmetric Namespace Access Change Notices"),
	RSVD("  [10:10] : ", 0x400, 10),
	SUP("  [9:9] : ", 9, "Firmware Activation Notices"),
	SUP("  [8:8] : ", 8, "Namespace Attribute Changed Event"),
	RSVD("  [7:0] : ", 0xff, 0),
};
static const struct hline ctratt[] = {
	RSVD(" [31:20] : ", 0xfff00000, 20),
	SUP("  [19:19] : ", 19, "Flexible Data Placement"),
	RSVD("  [18:16] : ", 0x70000, 16),
	SUP("  [15:15] : ", 15, "Extended LBA Formats"),
	SUP("  [14:14] : ", 14, "Delete NVM Set"),
	SUP("  [13:13] : ", 13, "Delete Endurance Group"),
	SUP("  [12:12] : ", 12, "Variable Capacity Management"),
	SUP("  [11:11] : ", 11, "Fixed Capacity Management"),
	SUP("  [10:10] : ", 10, "Multi Domain Subsystem"),
	SUP("  [9:9] : ", 9, "UUID List"),
	SUP("  [8:8] : ", 8, "SQ Associations"),
	SUP("  [7:7] : ", 7, "Namespace Granularity"),
	SUP("  [6:6] : ", 6, "Traffic Based Keep Alive"),
	SUP("  [5:5] : ", 5, "Predictable Latency Mode"),
	SUP("  [4:4] : ", 4, "Endurance Groups"),
	SUP("  [3:3] : ", 3, "Read Recovery Levels"),
	SUP("  [2:2] : ", 2, "NVM Sets"),
	SUP("  [1:1] : ", 1, "Non-Operational Power State Permissive"),
	SUP("  [0:0] : ", 0, "128-bit Host Identifier"),
};
static const char *const ctrl_types[] = { "Controller type not reported", "I/O Controller",
	"Discovery Controller", "Administrative Controller" };
/* nvme-cli prints the whole byte as [1:0]'s value, and the reserved bits always */
static const struct hline cntrltype[] = {
	TEXT("  [7:2] : ", 0xfc, 2, "Reserved"),
	ARR("  [1:0] : ", 0xff, 0, "%s", ctrl_types),
};
static const struct hline nvmsr[] = {
	RSVD(" [7:2] : ", 0xfc, 2),
	YN("  [1:1] : ", 1, "NVM subsystem %spart of an Enclosure", "", "Not "),
	YN("  [0:0] : ", 0, "NVM subsystem %spart of an Storage Device", "", "Not "),
};
static const struct hline vwci[] = {
	YN("  [7:7] : ", 7, "VPD Write Cycles Remaining field is %svalid.", "", "Not "),
	TEXT("  [6:0] : ", 0xfe, 0, "VPD Write Cycles Remaining "),
};
static const struct hline mec[] = {
	RSVD(" [7:2] : ", 0xfc, 2),
	YN("  [1:1] : ", 1, "NVM subsystem %scontains a Management Endpoint on a PCIe port", "", "Not "),
	YN("  [0:0] : ", 0, "NVM subsystem %scontains a Management Endpoint on an SMBus/I2C port", "", "Not "),
};
static const struct hline oacs[] = {
	RSVD(" [15:11] : ", 0xf800, 11),
	SUP("  [10:10] : ", 10, "Lockdown Command and Feature"),
	SUP("  [9:9] : ", 9, "Get LBA Status Capability"),
	SUP("  [8:8] : ", 8, "Doorbell Buffer Config"),
	SUP("  [7:7] : ", 7, "Virtualization Management"),
	SUP("  [6:6] : ", 6, "NVMe-MI Send and Receive"),
	SUP("  [5:5] : ", 5, "Directives"),
	SUP("  [4:4] : ", 4, "Device Self-test"),
	SUP("  [3:3] : ", 3, "NS Management and Attachment"),
	SUP("  [2:2] : ", 2, "FW Commit and Download"),
	SUP("  [1:1] : ", 1, "Format NVM"),
	SUP("  [0:0] : ", 0, "Security Send and Receive"),
};
static const struct hline frmw[] = {
	RSVD("  [7:6] : ", 0xc0, 6),
	SUP("  [5:5] : ", 5, "Multiple FW or Boot Update Detection"),
	SUP("  [4:4] : ", 4, "Firmware Activate Without Reset"),
	TEXT("  [3:1] : ", 0xe, 1, "Number of Firmware Slots"),
	YN("  [0:0] : ", 0, "Firmware Slot 1 Read%s", "-Only", "/Write"),
};
static const struct hline lpa[] = {
	RSVD("  [7:7] : ", 0x80, 7),
	SUP("  [6:6] : ", 6, "Telemetry Log Data Area 4"),
	SUP("  [5:5] : ", 5, "LID 0x0, Scope of each command in LID 0x5, 0x12, 0x13"),
	SUP("  [4:4] : ", 4, "Persistent Event log"),
	SUP("  [3:3] : ", 3, "Telemetry host/controller initiated log page"),
	SUP("  [2:2] : ", 2, "Extended data for Get Log Page"),
	SUP("  [1:1] : ", 1, "Command Effects Log Page"),
	SUP("  [0:0] : ", 0, "SMART/Health Log Page per NS"),
};
static const struct hline elpe[] = {
	{ "  [7:0] : ", 0xff, 0, H_ZB, 0, 0, "Error Log Page Entries (ELPE)", NULL, NULL, NULL },
};
static const struct hline npss[] = {
	{ "  [7:0] : ", 0xff, 0, H_ZB, 0, 0, "Number of Power States Support (NPSS)", NULL, NULL, NULL },
};
static const struct hline avscc[] = {
	RSVD("  [7:1] : ", 0xfe, 1),
	YN("  [0:0] : ", 0, "Admin Vendor Specific Commands uses %s Format", "NVMe", "Vendor Specific"),
};
static const struct hline apsta[] = {
	RSVD("  [7:1] : ", 0xfe, 1),
	SUP("  [0:0] : ", 0, "Autonomous Power State Transitions"),
};
#define TEMP(what) { " [15:0] : ", 0xffff, 0, H_TEMP, 0, 0, what, NULL, NULL, NULL }
static const struct hline wctemp[] = { TEMP("Warning Composite Temperature Threshold (WCTEMP)") };
static const struct hline cctemp[] = { TEMP("Critical Composite Temperature Threshold (CCTEMP)") };
static const struct hline mntmt[] = { TEMP("Minimum Thermal Management Temperature (MNTMT)") };
static const struct hline mxtmt[] = { TEMP("Maximum Thermal Management Temperature (MXTMT)") };
static const struct hline tnvmcap[] = {
	{ "", 0, 0, H_U128, 0, 0, "Total NVM Capacity (TNVMCAP)", NULL, NULL, NULL },
};
static const struct hline unvmcap[] = {
	{ "", 0, 0, H_U128, 0, 0, "Unallocated NVM Capacity (UNVMCAP)", NULL, NULL, NULL },
};
static const struct hline rpmbs[] = {
	TEXT(" [31:24]: ", 0xff000000, 24, "Access Size"),
	TEXT(" [23:16]: ", 0xff0000, 16, "Total Size"),
	RSVD(" [15:6] : ", 0xffc0, 6),
	TEXT("  [5:3] : ", 0x38, 3, "Authentication Method"),
	TEXT("  [2:0] : ", 0x7, 0, "Number of RPMB Units"),
};
static const struct hline hctma[] = {
	RSVD(" [15:1] : ", 0xfffe, 1),
	SUP("  [0:0] : ", 0, "Host Controlled Thermal Management"),
};
static const char *const media_mod[] = {
	"Additional media modification after sanitize operation completes successfully is not defined",
	"Media is not additionally modified after sanitize operation completes successfully",
	"Media is additionally modified after sanitize operation completes successfully",
	"Reserved",
};
static const struct hline sanicap[] = {
	ARR("  [31:30] : ", 0xc0000000, 30, "%s", media_mod),
	/* nvme-cli's wording: the bit set reads "Not Supported" */
	YN("  [29:29] : ", 29, "No-Deallocate After Sanitize bit in Sanitize command %sSupported", "Not ", ""),
	RSVD("  [28:3] : ", 0x1ffffff8, 3),
	SUP("    [2:2] : ", 2, "Overwrite Sanitize Operation"),
	SUP("    [1:1] : ", 1, "Block Erase Sanitize Operation"),
	SUP("    [0:0] : ", 0, "Crypto Erase Sanitize Operation"),
};
static const struct hline anacap[] = {
	SUP("  [7:7] : ", 7, "Non-zero group ID"),
	YN("  [6:6] : ", 6, "Group ID does %schange", "not ", ""),
	RSVD(" [5:5] : ", 0x20, 5),
	SUP("  [4:4] : ", 4, "ANA Change state"),
	SUP("  [3:3] : ", 3, "ANA Persistent Loss state"),
	SUP("  [2:2] : ", 2, "ANA Inaccessible state"),
	SUP("  [1:1] : ", 1, "ANA Non-optimized state"),
	SUP("  [0:0] : ", 0, "ANA Optimized state"),
};
static const struct hline sqes[] = {
	{ "  [7:4] : ", 0xf0, 4, H_POW2, 0, 0, "Max SQ Entry Size (%d)", NULL, NULL, NULL },
	{ "  [3:0] : ", 0xf, 0, H_POW2, 0, 0, "Min SQ Entry Size (%d)", NULL, NULL, NULL },
};
static const struct hline cqes[] = {
	{ "  [7:4] : ", 0xf0, 4, H_POW2, 0, 0, "Max CQ Entry Size (%d)", NULL, NULL, NULL },
	{ "  [3:0] : ", 0xf, 0, H_POW2, 0, 0, "Min CQ Entry Size (%d)", NULL, NULL, NULL },
};
static const struct hline oncs[] = {
	RSVD(" [15:9] : ", 0xfe00, 9),
	SUP("  [8:8] : ", 8, "Copy"), SUP("  [7:7] : ", 7, "Verify"),
	SUP("  [6:6] : ", 6, "Timestamp"), SUP("  [5:5] : ", 5, "Reservations"),
	SUP("  [4:4] : ", 4, "Save and Select"), SUP("  [3:3] : ", 3, "Write Zeroes"),
	SUP("  [2:2] : ", 2, "Data Set Management"), SUP("  [1:1] : ", 1, "Write Uncorrectable"),
	SUP("  [0:0] : ", 0, "Compare"),
};
static const struct hline fuses[] = {
	RSVD(" [15:1] : ", 0xfe, 1),
	SUP("  [0:0] : ", 0, "Fused Compare and Write"),
};
static const struct hline fna[] = {
	RSVD("  [7:4] : ", 0xf0, 4),
	YN("  [3:3] : ", 3, "Format NVM Broadcast NSID (FFFFFFFFh) %sSupported", "Not ", ""),
	YN("  [2:2] : ", 2, "Crypto Erase %sSupported as part of Secure Erase", "", "Not "),
	YN("  [1:1] : ", 1, "Crypto Erase Applies to %s Namespace(s)", "All", "Single"),
	YN("  [0:0] : ", 0, "Format Applies to %s Namespace(s)", "All", "Single"),
};
static const char *const flush_nsid[] = {
	"Support for the NSID field set to FFFFFFFFh is not indicated", "Reserved",
	"The Flush command does not support NSID set to FFFFFFFFh",
	"The Flush command supports NSID set to FFFFFFFFh",
};
static const struct hline vwc[] = {
	RSVD("  [7:3] : ", 0xf8, 3),
	ARR("  [2:1] : ", 0x6, 1, "%s", flush_nsid),
	YN("  [0:0] : ", 0, "Volatile Write Cache %sPresent", "", "Not "),
};
static const struct hline icsvscc[] = {
	RSVD("  [7:1] : ", 0xfe, 1),
	YN("  [0:0] : ", 0, "NVM Vendor Specific Commands uses %s Format", "NVMe", "Vendor Specific"),
};
static const struct hline nwpc[] = {
	RSVD("  [7:3] : ", 0xf8, 3),
	SUP("  [2:2] : ", 2, "Permanent Write Protect"),
	SUP("  [1:1] : ", 1, "Write Protect Until Power Supply"),
	SUP("  [0:0] : ", 0, "No Write Protect and Write Protect Namespace"),
};
static const struct hline ocfs[] = {
	RSVD("  [15:2] : ", 0xfffc, 2),
	SUP("  [1:1] : ", 1, "Controller Copy Format 1h"),
	SUP("  [0:0] : ", 0, "Controller Copy Format 0h"),
};
#define SGL(label, bit, what) \
	{ label, 1u << (bit), bit, H_YN, IF_SGLSP, 0, what " %sSupported", "", "Not ", NULL }
static const char *const sgl_support[] = {
	"Scatter-Gather Lists Not Supported",
	"Scatter-Gather Lists Supported. No Dword alignment required.",
	"Scatter-Gather Lists Supported. Dword alignment required.",
	"Reserved",
};
static const struct hline sgls[] = {
	RSVD(" [31:22]: ", 0xffc00000, 22),
	SGL(" [21:21]: ", 21, "Transport SGL Data Block Descriptor"),
	SGL(" [20:20]: ", 20, "Address Offsets"),
	SGL(" [19:19]: ", 19, "Metadata Pointer Containing SGL Descriptor is"),
	SGL(" [18:18]: ", 18, "SGL Length Larger than Buffer"),
	SGL(" [17:17]: ", 17, "Byte-Aligned Contig. MD Buffer"),
	SGL(" [16:16]: ", 16, "SGL Bit-Bucket"),
	TEXT(" [15:8] : ", 0xff00, 8, "SGL Descriptor Threshold"),
	RSVD(" [7:3] : ", 0xf8, 3),
	SGL("  [2:2] : ", 2, "Keyed SGL Data Block descriptor"),
	ARR("  [1:0] : ", 0x3, 0, "%s", sgl_support),	/* 0: " [1:0]  : ", below */
};
static const struct hline fcatt[] = {
	RSVD("  [7:1] : ", 0xfe, 1),
	YN("  [0:0] : ", 0, "%s Controller Model", "Static", "Dynamic"),
};
static const struct hline ofcs[] = {
	RSVD("  [15:1] : ", 0xfffe, 1),
	YN("  [0:0] : ", 0, "Disconnect command %s Supported", "", "Not"),
};

/* Identify Namespace */
static const struct hline nsfeat[] = {
	RSVD("  [7:5] : ", 0xe0, 5),
	SUP("  [4:4] : ", 4, "NPWG, NPWA, NPDG, NPDA, and NOWS are"),
	YN("  [3:3] : ", 3, "NGUID and EUI64 fields if non-zero, %sReused", "Never ", ""),
	SUP("  [2:2] : ", 2, "Deallocated or Unwritten Logical Block error"),
	YN("  [1:1] : ", 1, "Namespace uses %s", "NAWUN, NAWUPF, and NACWU", "AWUN, AWUPF, and ACWU"),
	SUP("  [0:0] : ", 0, "Thin Provisioning"),
};
static const struct hline flbas[] = {
	RSVD("  [7:7] : ", 0x80, 7),
	TEXT("  [6:5] : ", 0x60, 5, "Most significant 2 bits of Current LBA Format Selected"),
	YN("  [4:4] : ", 4, "Metadata Transferred %s", "at End of Data LBA",
	   "in Separate Contiguous Buffer"),
	TEXT("  [3:0] : ", 0xf, 0, "Least significant 4 bits of Current LBA Format Selected"),
};
static const struct hline mc[] = {
	RSVD("  [7:2] : ", 0xfc, 2),
	SUP("  [1:1] : ", 1, "Metadata Pointer"),
	SUP("  [0:0] : ", 0, "Metadata as Part of Extended Data LBA"),
};
static const struct hline dpc[] = {
	RSVD("  [7:5] : ", 0xe0, 5),
	SUP("  [4:4] : ", 4, "Protection Information Transferred as Last 8 Bytes of Metadata"),
	SUP("  [3:3] : ", 3, "Protection Information Transferred as First 8 Bytes of Metadata"),
	SUP("  [2:2] : ", 2, "Protection Information Type 3"),
	SUP("  [1:1] : ", 1, "Protection Information Type 2"),
	SUP("  [0:0] : ", 0, "Protection Information Type 1"),
};
static const char *const pi_types[] = { "Disabled", "Type 1 Enabled", "Type 2 Enabled",
	"Type 3 Enabled", "Reserved Enabled", "Reserved Enabled", "Reserved Enabled",
	"Reserved Enabled" };
static const struct hline dps[] = {
	RSVD("  [7:4] : ", 0xf0, 4),
	YN("  [3:3] : ", 3, "Protection Information is Transferred as %s 8 Bytes of Metadata",
	   "First", "Last"),
	ARR("  [2:0] : ", 0x7, 0, "Protection Information %s", pi_types),
};
static const struct hline nmic[] = {
	RSVD("  [7:1] : ", 0xfe, 1),
	YN("  [0:0] : ", 0, "Namespace Multipath %sCapable", "", "Not "),
};
static const struct hline rescap[] = {
	YN("  [7:7] : ", 7, "Ignore Existing Key - Used as defined in revision %s", "1.3 or later",
	   "1.2.1 or earlier"),
	SUP("  [6:6] : ", 6, "Exclusive Access - All Registrants"),
	SUP("  [5:5] : ", 5, "Write Exclusive - All Registrants"),
	SUP("  [4:4] : ", 4, "Exclusive Access - Registrants Only"),
	SUP("  [3:3] : ", 3, "Write Exclusive - Registrants Only"),
	SUP("  [2:2] : ", 2, "Exclusive Access"),
	SUP("  [1:1] : ", 1, "Write Exclusive"),
	SUP("  [0:0] : ", 0, "Persist Through Power Loss"),
};
static const struct hline fpi[] = {
	SUP("  [7:7] : ", 7, "Format Progress Indicator"),
	{ "  [6:0] : ", 0x7f, 0, H_PCT, IF_FPIS, 0, "Format Progress Indicator (Remaining %d%%)",
	  NULL, NULL, NULL },
};
static const char *const dealloc_read[] = { "Not Reported", "0x00", "0xFF", "Reserved Value",
	"Reserved Value", "Reserved Value", "Reserved Value", "Reserved Value" };
static const struct hline dlfeat[] = {
	RSVD("  [7:5] : ", 0xe0, 5),
	YN("  [4:4] : ", 4, "Guard Field of Deallocated Logical Blocks is set to %s",
	   "CRC of The Value Read", "0xFFFF"),
	SUP("  [3:3] : ", 3, "Deallocate Bit in the Write Zeroes Command is"),
	ARR("  [2:0] : ", 0x7, 0, "Bytes Read From a Deallocated Logical Block and its Metadata are %s",
	    dealloc_read),
};

#define F(s, n) { #n, offsetof(struct s, n), sizeof(((struct s *)0)->n), false, n, ARRAY_LEN(n) }

static const struct hfield ctrl_dec[] = {
	F(nvme_id_ctrl, cmic), F(nvme_id_ctrl, oaes), F(nvme_id_ctrl, ctratt),
	{ "cntrltype", offsetof(struct nvme_id_ctrl, cntrltype), 1, true, cntrltype,
	  ARRAY_LEN(cntrltype) },
	F(nvme_id_ctrl, nvmsr), F(nvme_id_ctrl, vwci), F(nvme_id_ctrl, mec), F(nvme_id_ctrl, oacs),
	F(nvme_id_ctrl, frmw), F(nvme_id_ctrl, lpa), F(nvme_id_ctrl, elpe), F(nvme_id_ctrl, npss),
	F(nvme_id_ctrl, avscc), F(nvme_id_ctrl, apsta), F(nvme_id_ctrl, wctemp),
	F(nvme_id_ctrl, cctemp), F(nvme_id_ctrl, tnvmcap), F(nvme_id_ctrl, unvmcap),
	F(nvme_id_ctrl, rpmbs), F(nvme_id_ctrl, hctma), F(nvme_id_ctrl, mntmt),
	F(nvme_id_ctrl, mxtmt), F(nvme_id_ctrl, sanicap), F(nvme_id_ctrl, anacap),
	F(nvme_id_ctrl, sqes), F(nvme_id_ctrl, cqes), F(nvme_id_ctrl, oncs), F(nvme_id_ctrl, fuses),
	F(nvme_id_ctrl, fna), F(nvme_id_ctrl, vwc), F(nvme_id_ctrl, icsvscc), F(nvme_id_ctrl, nwpc),
	F(nvme_id_ctrl, ocfs), F(nvme_id_ctrl, sgls), F(nvme_id_ctrl, fcatt), F(nvme_id_ctrl, ofcs),
};
static const struct hfield ns_dec[] = {
	F(nvme_id_ns, nsfeat), F(nvme_id_ns, flbas), F(nvme_id_ns, mc), F(nvme_id_ns, dpc),
	F(nvme_id_ns, dps), F(nvme_id_ns, nmic), F(nvme_id_ns, rescap), F(nvme_id_ns, fpi),
	F(nvme_id_ns, dlfeat),
};

static void hline(const struct hline *l, uint32_t v, const uint8_t *raw)
{
	uint32_t x = (v & l->mask) >> l->shift;
	char buf[48];

	if ((l->cond & IF_SGLSP) && !(v & 3) && !x)
		return;
	if ((l->cond & IF_FPIS) && !(v & 0x80) && !x)
		return;
	switch (l->kind) {
	case H_RSVD:
		if (x)
			printf("%s%#x\tReserved\n", l->label, x);
		return;
	case H_TEMP:
		printf("%s%ld°C (%u Kelvin)\t%s\n", l->label, (long)x - 273, x, l->fmt);
		return;
	case H_ZB:
		printf("%s%d (0's based)\t%s\n", l->label, (int)x, l->fmt);
		return;
	case H_U128:
		printf("[127:0] : %s\n\t%s\n", p_u128_str(raw, buf, sizeof(buf)), l->fmt);
		return;
	default:
		break;
	}
	/* SGL support "not supported" has its own label in nvme-cli */
	printf("%s%#x\t", l->arr == sgl_support && !x ? " [1:0]  : " : l->label, x);
	switch (l->kind) {
	case H_YN: printf(l->fmt, x ? l->a : l->b); break;
	case H_POW2: printf(l->fmt, 1 << x); break;
	case H_ARR: printf(l->fmt, l->arr[x & (l->n - 1u)]); break;
	case H_PCT: printf(l->fmt, (int)x); break;
	default: printf("%s", l->fmt); break;
	}
	printf("\n");
}

static void decode(const struct hfield *t, size_t n, const char *field, const void *base)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = (const uint8_t *)base + t[i].off;
		uint32_t v;

		if (strcmp(t[i].name, field))
			continue;
		v = t[i].size == 1 ? p[0] : t[i].size == 2 ? pl16(p) : t[i].size == 4 ? pl32(p) : 0;
		for (size_t j = 0; j < t[i].nr; j++)
			hline(&t[i].l[j], v, p);
		if (!t[i].no_blank)
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
