/* SPDX-License-Identifier: MIT */
/*
 * show-regs in nvme-cli 2.3's layout: the controller registers by name,
 * with -H each register decoded after its line. One table gives the
 * normal order, label and decoder; JSON has its own key order.
 */
#include <inttypes.h>
#include <stdio.h>

#include "print_priv.h"

#define REG_SIZE 0x0e1c	/* 0000h..0E1Bh, what nvme-cli's -o binary writes */

static const char *yes(uint64_t v, const char *y, const char *n)
{
	return v ? y : n;
}

static void d_cap(uint64_t cap, uint64_t unused)
{
	(void)unused;
	printf("\tController Ready With Media Support (CRWMS): %s\n",
	       yes(cap >> 59 & 1, "Supported", "Not Supported"));
	printf("\tController Ready Independent of Media Support (CRIMS): %s\n",
	       yes(cap >> 60 & 1, "Supported", "Not Supported"));
	printf("\tController Memory Buffer Supported (CMBS): The Controller Memory Buffer is %s\n",
	       yes(cap >> 57 & 1, "Supported", "Not Supported"));
	printf("\tPersistent Memory Region Supported (PMRS): The Persistent Memory Region is %s\n",
	       yes(cap >> 56 & 1, "Supported", "Not Supported"));
	printf("\tMemory Page Size Maximum         (MPSMAX): %u bytes\n",
	       1u << (12 + (cap >> 52 & 0xf)));
	printf("\tMemory Page Size Minimum         (MPSMIN): %u bytes\n",
	       1u << (12 + (cap >> 48 & 0xf)));
	printf("\tBoot Partition Support              (BPS): %s\n", yes(cap >> 45 & 1, "Yes", "No"));
	printf("\tCommand Sets Supported              (CSS): NVM command set is %s\n",
	       yes(cap >> 37 & 1, "Supported", "Not Supported"));
	printf("\t                                           One or more I/O Command Sets are %s\n",
	       yes(cap >> 43 & 1, "Supported", "Not Supported"));
	printf("\t                                           %s\n", yes(cap >> 44 & 1,
	       "Only Admin Command Set Supported", "I/O Command Set is Supported"));
	printf("\tNVM Subsystem Reset Supported     (NSSRS): %s\n", yes(cap >> 36 & 1, "Yes", "No"));
	printf("\tDoorbell Stride                   (DSTRD): %u bytes\n",
	       1u << (2 + (cap >> 32 & 0xf)));
	printf("\tTimeout                              (TO): %u ms\n", (unsigned)(cap >> 24 & 0xff) * 500);
	printf("\tArbitration Mechanism Supported     (AMS): Weighted Round Robin with Urgent "
	       "Priority Class is %s\n", yes(cap >> 17 & 1, "supported", "not supported"));
	printf("\tContiguous Queues Required          (CQR): %s\n", yes(cap >> 16 & 1, "Yes", "No"));
	printf("\tMaximum Queue Entries Supported    (MQES): %u\n\n", (unsigned)(cap & 0xffff) + 1);
}

static void d_vs(uint64_t vs, uint64_t unused)
{
	(void)unused;
	printf("\tNVMe specification %d.%d\n\n", (int)(vs >> 16 & 0xffff), (int)(vs >> 8 & 0xff));
}

static void d_cc(uint64_t cc, uint64_t unused)
{
	static const char *const shn[] = { "No notification; no effect",
		"Normal shutdown notification", "Abrupt shutdown notification", "Reserved" };
	unsigned ams = cc >> 11 & 7, css = cc & 0x70;

	(void)unused;
	printf("\tController Ready Independent of Media Enable (CRIME): %s\n",
	       yes(cc >> 24 & 1, "Enabled", "Disabled"));
	printf("\tI/O Completion Queue Entry Size (IOCQES): %u bytes\n", 1u << (cc >> 20 & 0xf));
	printf("\tI/O Submission Queue Entry Size (IOSQES): %u bytes\n", 1u << (cc >> 16 & 0xf));
	printf("\tShutdown Notification              (SHN): %s\n", shn[cc >> 14 & 3]);
	printf("\tArbitration Mechanism Selected     (AMS): %s\n", ams == 0 ? "Round Robin" :
	       ams == 1 ? "Weighted Round Robin with Urgent Priority Class" :
	       ams == 7 ? "Vendor Specific" : "Reserved");
	printf("\tMemory Page Size                   (MPS): %u bytes\n", 1u << (12 + (cc >> 7 & 0xf)));
	printf("\tI/O Command Set Selected           (CSS): %s\n", css == 0 ? "NVM Command Set" :
	       css == 0x60 ? "All supported I/O Command Sets" :
	       css == 0x70 ? "Admin Command Set only" : "Reserved");
	printf("\tEnable                              (EN): %s\n\n", yes(cc & 1, "Yes", "No"));
}

static void d_csts(uint64_t csts, uint64_t unused)
{
	static const char *const shst[] = { "Normal operation (no shutdown has been requested)",
		"Shutdown processing occurring", "Shutdown processing complete", "Reserved" };

	(void)unused;
	printf("\tProcessing Paused               (PP): %s\n", yes(csts & 0x20, "Yes", "No"));
	printf("\tNVM Subsystem Reset Occurred (NSSRO): %s\n", yes(csts & 0x10, "Yes", "No"));
	printf("\tShutdown Status               (SHST): %s\n", shst[csts >> 2 & 3]);
	printf("\tController Fatal Status        (CFS): %s\n", yes(csts & 2, "True", "False"));
	printf("\tReady                          (RDY): %s\n\n", yes(csts & 1, "Yes", "No"));
}

static void d_nssr(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tNVM Subsystem Reset Control (NSSRC): %u\n\n", (unsigned)v);
}

static void d_crto(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tCRIMT                               : %d secs\n", (int)(v >> 16 & 0xffff) / 2);
	printf("\tCRWMT                               : %d secs\n", (int)(v & 0xffff) / 2);
}

static void d_intms(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tInterrupt Vector Mask Set (IVMS): %x\n\n", (unsigned)v);
}

static void d_intmc(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tInterrupt Vector Mask Clear (IVMC): %x\n\n", (unsigned)v);
}

static void d_aqa(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tAdmin Completion Queue Size (ACQS): %u\n", (unsigned)(v >> 16 & 0xfff) + 1);
	printf("\tAdmin Submission Queue Size (ASQS): %u\n\n", (unsigned)(v & 0xfff) + 1);
}

static void d_asq(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tAdmin Submission Queue Base (ASQB): %" PRIx64 "\n\n", v);
}

static void d_acq(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tAdmin Completion Queue Base (ACQB): %" PRIx64 "\n\n", v);
}

static const char *const enforced[] = { "Enforced", "Not Enforced" };

static void d_cmbloc(uint64_t v, uint64_t cmbsz)
{
	if (!cmbsz) {
		printf("\tController Memory Buffer feature is not supported\n\n");
		return;
	}
	printf("\tOffset                                                        (OFST): 0x%x (See cmbsz.szu for granularity)\n",
	       (unsigned)(v >> 12 & 0xfffff));
	printf("\tCMB Queue Dword Alignment                                     (CQDA): %d\n", (int)(v >> 8 & 1));
	printf("\tCMB Data Metadata Mixed Memory Support                      (CDMMMS): %s\n", enforced[v >> 7 & 1]);
	printf("\tCMB Data Pointer and Command Independent Locations Support (CDPCILS): %s\n", enforced[v >> 6 & 1]);
	printf("\tCMB Data Pointer Mixed Locations Support                    (CDPMLS): %s\n", enforced[v >> 5 & 1]);
	printf("\tCMB Queue Physically Discontiguous Support                   (CQPDS): %s\n", enforced[v >> 4 & 1]);
	printf("\tCMB Queue Mixed Memory Support                               (CQMMS): %s\n", enforced[v >> 3 & 1]);
	printf("\tBase Indicator Register                                        (BIR): 0x%x\n\n", (unsigned)(v & 7));
}

static void d_cmbsz(uint64_t v, uint64_t unused)
{
	static const char *const szu[] = { "4 KB", "64 KB", "1 MB", "16 MB", "256 MB", "4 GB", "64 GB" };
	unsigned u = v >> 8 & 0xf;

	(void)unused;
	if (!v) {
		printf("\tController Memory Buffer feature is not supported\n\n");
		return;
	}
	printf("\tSize                      (SZ): %u\n", (unsigned)(v >> 12 & 0xfffff));
	printf("\tSize Units               (SZU): %s\n", u < 7 ? szu[u] : "Reserved");
	printf("\tWrite Data Support       (WDS): Write Data and metadata transfer in Controller Memory Buffer is %s\n",
	       yes(v & 0x10, "Supported", "Not supported"));
	printf("\tRead Data Support        (RDS): Read Data and metadata transfer in Controller Memory Buffer is %s\n",
	       yes(v & 8, "Supported", "Not supported"));
	printf("\tPRP SGL List Support   (LISTS): PRP/SG Lists in Controller Memory Buffer is %s\n",
	       yes(v & 4, "Supported", "Not supported"));
	printf("\tCompletion Queue Support (CQS): Admin and I/O Completion Queues in Controller Memory Buffer is %s\n",
	       yes(v & 2, "Supported", "Not supported"));
	printf("\tSubmission Queue Support (SQS): Admin and I/O Submission Queues in Controller Memory Buffer is %s\n\n",
	       yes(v & 1, "Supported", "Not supported"));
}

static void d_bpinfo(uint64_t v, uint64_t unused)
{
	static const char *const brs[] = { "No Boot Partition read operation requested",
		"Boot Partition read in progress", "Boot Partition read completed successfully",
		"Error completing Boot Partition read" };

	(void)unused;
	printf("\tActive Boot Partition ID      (ABPID): %u\n", (unsigned)(v >> 31 & 1));
	printf("\tBoot Read Status                (BRS): %s\n", brs[v >> 24 & 3]);
	printf("\tBoot Partition Size            (BPSZ): %u\n", (unsigned)(v & 0x7fff));
}

static void d_bprsel(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tBoot Partition Identifier      (BPID): %u\n", (unsigned)(v >> 31 & 1));
	printf("\tBoot Partition Read Offset    (BPROF): %x\n", (unsigned)(v >> 10 & 0xfffff));
	printf("\tBoot Partition Read Size      (BPRSZ): %x\n", (unsigned)(v & 0x3ff));
}

static void d_bpmbl(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tBoot Partition Memory Buffer Base Address (BMBBA): %" PRIx64 "\n", v);
}

static void d_cmbmsc(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tController Base Address         (CBA): %" PRIx64 "\n", (v & ~(uint64_t)0xfff) >> 12);
	printf("\tController Memory Space Enable (CMSE): %" PRIx64 "\n", v >> 1 & 1);
	printf("\tCapabilities Registers Enabled  (CRE): CMBLOC and CMBSZ registers are%senabled\n\n",
	       v & 1 ? " " : " NOT ");
}

static void d_cmbsts(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tController Base Address Invalid (CBAI): %x\n\n", (unsigned)(v & 1));
}

static void d_pmrcap(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tController Memory Space Supported                   (CMSS): Referencing PMR with host supplied addresses is %s\n",
	       yes(v >> 24 & 1, "Supported", "Not Supported"));
	printf("\tPersistent Memory Region Timeout                   (PMRTO): %x\n", (unsigned)(v >> 16 & 0xff));
	printf("\tPersistent Memory Region Write Barrier Mechanisms (PMRWBM): %x\n", (unsigned)(v >> 10 & 0xf));
	printf("\tPersistent Memory Region Time Units                (PMRTU): PMR time unit is %s\n",
	       yes(v >> 8 & 3, "minutes", "500 milliseconds"));
	printf("\tBase Indicator Register                              (BIR): %x\n", (unsigned)(v >> 5 & 7));
	printf("\tWrite Data Support                                   (WDS): Write data to the PMR is %s\n",
	       yes(v & 0x10, "supported", "not supported"));
	printf("\tRead Data Support                                    (RDS): Read data from the PMR is %s\n",
	       yes(v & 8, "supported", "not supported"));
}

static void d_pmrctl(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tEnable (EN): PMR is %s\n", yes(v & 1, "READY", "Disabled"));
}

static void d_pmrsts(uint64_t v, uint64_t pmrctl)
{
	static const char *const hsts[] = { "Normal Operation", "Restore Error", "Read Only",
		"Unreliable" };
	unsigned h = v >> 9 & 7;

	printf("\tController Base Address Invalid (CBAI): %x\n", (unsigned)(v >> 12 & 1));
	printf("\tHealth Status                   (HSTS): %s\n", h < 4 ? hsts[h] : "Reserved");
	printf("\tNot Ready                       (NRDY): The Persistent Memory Region is %s to "
	       "process PCI Express memory read and write requests\n",
	       !(v & 0x100) && (pmrctl & 1) ? "READY" : "Not Ready");
	printf("\tError                            (ERR): %x\n", (unsigned)(v & 0xff));
}

static const char *pmr_units(unsigned u)
{
	static const char *const s[] = { "Bytes", "One KB", "One MB", "One GB" };

	return u < 4 ? s[u] : "Reserved";
}

static void d_pmrebs(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tPMR Elasticity Buffer Size Base  (PMRWBZ): %x\n", (unsigned)(v >> 8 & 0xffffff));
	printf("\tRead Bypass Behavior                     : memory reads not conflicting with memory "
	       "writes in the PMR Elasticity Buffer %s bypass those memory writes\n",
	       yes(v & 0x10, "SHALL", "MAY"));
	printf("\tPMR Elasticity Buffer Size Units (PMRSZU): %s\n", pmr_units(v & 0xf));
}

static void d_pmrswtp(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tPMR Sustained Write Throughput       (PMRSWTV): %x\n", (unsigned)(v >> 8 & 0xffffff));
	printf("\tPMR Sustained Write Throughput Units (PMRSWTU): %s/second\n", pmr_units(v & 0xf));
}

static void d_pmrmscl(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tController Base Address         (CBA): %#x\n", (unsigned)(v >> 12 & 0xfffff));
	printf("\tController Memory Space Enable (CMSE): %#x\n\n", (unsigned)(v >> 1 & 1));
}

static void d_pmrmscu(uint64_t v, uint64_t unused)
{
	(void)unused;
	printf("\tController Base Address         (CBA): %#x\n", (unsigned)v);
}

enum { R32, R64 };

struct reg {
	const char *label;	/* normal output, with its padding */
	const char *fmt;	/* "%x", "%#x" or PRIx64 */
	uint16_t off;
	uint8_t width;
	bool skip_ones;		/* not shown when it reads all ones (absent) */
	void (*decode)(uint64_t v, uint64_t other);
	uint16_t other;		/* the register a decoder also reads (0: none) */
};

static const struct reg regs[] = {
	{ "cap     ", "%" PRIx64, NVME_REG_CAP, R64, true, d_cap, 0 },
	{ "version ", "%x", NVME_REG_VS, R32, true, d_vs, 0 },
	{ "cc      ", "%x", NVME_REG_CC, R32, true, d_cc, 0 },
	{ "csts    ", "%x", NVME_REG_CSTS, R32, true, d_csts, 0 },
	{ "nssr    ", "%x", NVME_REG_NSSR, R32, true, d_nssr, 0 },
	{ "crto    ", "%x", NVME_REG_CRTO, R32, true, d_crto, 0 },
	{ "intms   ", "%x", NVME_REG_INTMS, R32, false, d_intms, 0 },
	{ "intmc   ", "%x", NVME_REG_INTMC, R32, false, d_intmc, 0 },
	{ "aqa     ", "%x", NVME_REG_AQA, R32, false, d_aqa, 0 },
	{ "asq     ", "%" PRIx64, NVME_REG_ASQ, R64, false, d_asq, 0 },
	{ "acq     ", "%" PRIx64, NVME_REG_ACQ, R64, false, d_acq, 0 },
	{ "cmbloc  ", "%x", NVME_REG_CMBLOC, R32, false, d_cmbloc, NVME_REG_CMBSZ },
	{ "cmbsz   ", "%x", NVME_REG_CMBSZ, R32, false, d_cmbsz, 0 },
	{ "bpinfo  ", "%x", NVME_REG_BPINFO, R32, false, d_bpinfo, 0 },
	{ "bprsel  ", "%x", NVME_REG_BPRSEL, R32, false, d_bprsel, 0 },
	{ "bpmbl   ", "%" PRIx64, NVME_REG_BPMBL, R64, false, d_bpmbl, 0 },
	{ "cmbmsc\t", "%" PRIx64, NVME_REG_CMBMSC, R64, false, d_cmbmsc, 0 },
	{ "cmbsts\t", "%x", NVME_REG_CMBSTS, R32, false, d_cmbsts, 0 },
	{ "pmrcap  ", "%x", NVME_REG_PMRCAP, R32, false, d_pmrcap, 0 },
	{ "pmrctl  ", "%x", NVME_REG_PMRCTL, R32, false, d_pmrctl, 0 },
	{ "pmrsts  ", "%x", NVME_REG_PMRSTS, R32, false, d_pmrsts, NVME_REG_PMRCTL },
	{ "pmrebs  ", "%x", NVME_REG_PMREBS, R32, false, d_pmrebs, 0 },
	{ "pmrswtp ", "%x", NVME_REG_PMRSWTP, R32, false, d_pmrswtp, 0 },
	{ "pmrmscl\t", "%#x", NVME_REG_PMRMSCL, R32, false, d_pmrmscl, 0 },
	{ "pmrmscu\t", "%#x", NVME_REG_PMRMSCU, R32, false, d_pmrmscu, 0 },
};

/* JSON keys in nvme-cli's order; 64-bit registers as unsigned numbers */
static const struct { const char *key; uint16_t off; uint8_t width; } json_regs[] = {
	{ "cap", NVME_REG_CAP, R64 }, { "vs", NVME_REG_VS, R32 },
	{ "intms", NVME_REG_INTMS, R32 }, { "intmc", NVME_REG_INTMC, R32 },
	{ "cc", NVME_REG_CC, R32 }, { "csts", NVME_REG_CSTS, R32 },
	{ "nssr", NVME_REG_NSSR, R32 }, { "crto", NVME_REG_CRTO, R32 },
	{ "aqa", NVME_REG_AQA, R32 }, { "asq", NVME_REG_ASQ, R64 }, { "acq", NVME_REG_ACQ, R64 },
	{ "cmbloc", NVME_REG_CMBLOC, R32 }, { "cmbsz", NVME_REG_CMBSZ, R32 },
	{ "bpinfo", NVME_REG_BPINFO, R32 }, { "bprsel", NVME_REG_BPRSEL, R32 },
	{ "bpmbl", NVME_REG_BPMBL, R64 }, { "cmbmsc", NVME_REG_CMBMSC, R64 },
	{ "cmbsts", NVME_REG_CMBSTS, R32 }, { "pmrcap", NVME_REG_PMRCAP, R32 },
	{ "pmrctl", NVME_REG_PMRCTL, R32 }, { "pmrsts", NVME_REG_PMRSTS, R32 },
	{ "pmrebs", NVME_REG_PMREBS, R32 }, { "pmrswtp", NVME_REG_PMRSWTP, R32 },
	{ "pmrmscl", NVME_REG_PMRMSCL, R32 }, { "pmrmscu", NVME_REG_PMRMSCU, R32 },
};

static uint64_t rd(const uint8_t *bar, uint16_t off, int width)
{
	return width == R64 ? pl64(bar + off) : pl32(bar + off);
}

void print_show_regs(const void *bar, enum out_fmt f, unsigned flags)
{
	const uint8_t *b = bar;

	if (f == OUT_BINARY)
		return p_raw(bar, REG_SIZE);
	if (f == OUT_JSON) {
		struct json_object *o = json_object_new_object();

		for (size_t i = 0; i < ARRAY_LEN(json_regs); i++) {
			uint64_t v = rd(b, json_regs[i].off, json_regs[i].width);

			if (json_regs[i].width == R64)
				pj_u64(o, json_regs[i].key, v);
			else
				pj_int(o, json_regs[i].key, v);
		}
		return pj_print(o);
	}
	for (size_t i = 0; i < ARRAY_LEN(regs); i++) {
		const struct reg *r = &regs[i];
		uint64_t v = rd(b, r->off, r->width);

		if (r->skip_ones && v == 0xffffffff)
			continue;
		printf("%s: ", r->label);
		if (r->width == R64)
			printf("%" PRIx64 "\n", v);
		else if (r->fmt[1] == '#')
			printf("%#x\n", (unsigned)v);
		else
			printf("%x\n", (unsigned)v);
		if (flags & PRINT_HUMAN)
			r->decode(v, r->other ? pl32(b + r->other) : 0);
	}
}
