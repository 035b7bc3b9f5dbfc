/* SPDX-License-Identifier: MIT */
/*
 * The zoned sequence (Zoned Namespace Command Set, CSI 02h) on namespace
 * index 0 of the zoned + PI controller: Identify, zone reports, writes at
 * and off the write pointer, Zone Append (the LBA the controller chose, in
 * the big CQE), the zone actions and the open/active resource limits.
 * Zone states are printed for every zone after each step that changes them,
 * so that a difference names the zone and the step.
 */
#include <endian.h>
#include <nvme/types.h>
#include <stdio.h>
#include <string.h>

#include "difftest.h"

enum { OP_WRITE = 0x01, OP_READ = 0x02, OP_ZMS = 0x79, OP_ZMR = 0x7a, OP_ZAPPEND = 0x7d };
enum { ZSA_CLOSE = 1, ZSA_FINISH = 2, ZSA_OPEN = 3, ZSA_RESET = 4, ZSA_OFFLINE = 5 };

static uint8_t buf[4096] __attribute__((aligned(4096)));
static uint8_t data[270 * 512] __attribute__((aligned(4096)));
static uint8_t rdata[16 * 512] __attribute__((aligned(4096)));

static void fill(uint8_t *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 13 + i * 5 + (i >> 9));
}

static uint64_t zslba(unsigned z)
{
	return z * DT_ZSZE;
}

/* Zone Management Receive: ZRA, ZRASF and Partial Report in CDW13 */
static int report(struct dt *d, const char *name, uint64_t slba, uint32_t len, uint8_t zra,
		  uint8_t zrasf, bool partial)
{
	struct nvme_uring_cmd c = dt_rw(OP_ZMR, d->t->nsid[0], slba, 0, buf, len);
	const struct nvme_zone_report *r = (const void *)buf;
	uint64_t dw0;
	char n[96];
	int res;

	c.cdw12 = len / 4 - 1;
	c.cdw13 = zra | (uint32_t)zrasf << 8 | (partial ? 1u << 16 : 0);
	memset(buf, 0xee, sizeof(buf));
	res = dt_cmd(d, &d->ring, d->t->ns_fd[0], NVME_URING_CMD_IO, &c, 0, 0, 0, &dw0);
	dt_line(name, res, dw0, NULL, 0);
	if (res)
		return res;
	uint64_t nr = le64toh(r->nr_zones);
	snprintf(n, sizeof(n), "%s.nr", name);
	dt_field(n, "%llu", (unsigned long long)nr);
	for (uint64_t i = 0; i < nr && 64 + (i + 1) * 64 <= len; i++) {
		const struct nvme_zns_desc *z = &r->entries[i];
		/* type / state / attributes / capacity / zslba / write pointer */
		snprintf(n, sizeof(n), "%s.z%llu", name, (unsigned long long)i);
		dt_field(n, "%x/%x/%x/%llu/%llu/%llu", z->zt, z->zs >> 4, z->za,
			 (unsigned long long)le64toh(z->zcap), (unsigned long long)le64toh(z->zslba),
			 (unsigned long long)le64toh(z->wp));
	}
	return 0;
}

static void report_all(struct dt *d, const char *name)
{
	report(d, name, 0, 64 + DT_ZONES * 64, 0, 0, false);
}

/* Zone Management Send: ZSA and Select All in CDW13 */
static int zms(struct dt *d, const char *name, unsigned z, uint8_t zsa, bool all)
{
	struct nvme_uring_cmd c = dt_rw(OP_ZMS, d->t->nsid[0], zslba(z), 0, NULL, 0);

	c.cdw12 = 0;
	c.cdw13 = zsa | (all ? 1u << 8 : 0);
	return dt_io(d, name, 0, c, NULL, 0);
}

static int write_at(struct dt *d, const char *name, uint64_t slba, uint32_t nlb, unsigned seed)
{
	fill(data, nlb * 512, seed);
	return dt_io(d, name, 0, dt_rw(OP_WRITE, d->t->nsid[0], slba, nlb, data, nlb * 512), NULL,
		     0);
}

static int append(struct dt *d, const char *name, uint64_t zs, uint32_t nlb, unsigned seed)
{
	fill(data, nlb * 512, seed);
	return dt_io(d, name, 0, dt_rw(OP_ZAPPEND, d->t->nsid[0], zs, nlb, data, nlb * 512), NULL,
		     0);
}

static void read_at(struct dt *d, const char *name, uint64_t slba, uint32_t nlb)
{
	memset(rdata, 0xee, nlb * 512);
	dt_io(d, name, 0, dt_rw(OP_READ, d->t->nsid[0], slba, nlb, rdata, nlb * 512), rdata,
	      nlb * 512);
}

#define U(name, v) dt_field(name, "0x%llx", (unsigned long long)(v))

static void identify(struct dt *d)
{
	uint32_t nsid = d->t->nsid[0];
	uint64_t dw0;
	int res;

	memset(buf, 0, sizeof(buf));
	res = dt_admin_cmd(d, nvme_admin_identify, nsid, NVME_IDENTIFY_CNS_NS, 0, buf, 4096, &dw0);
	dt_line("zns.id-ns", res, dw0, NULL, 0);
	struct nvme_id_ns *ns = (void *)buf;
	U("zns.id-ns.nsze", le64toh(ns->nsze));
	U("zns.id-ns.ncap", le64toh(ns->ncap));
	U("zns.id-ns.flbas", ns->flbas);
	U("zns.id-ns.lbaf.cur.ds", ns->lbaf[ns->flbas & 0xf].ds);
	unsigned f = ns->flbas & 0xf;

	/* CNS 05h with CSI 02h in CDW11 bits 31:24 */
	memset(buf, 0, sizeof(buf));
	res = dt_admin_cmd(d, nvme_admin_identify, nsid, NVME_IDENTIFY_CNS_CSI_NS,
			   (uint32_t)NVME_CSI_ZNS << 24, buf, 4096, &dw0);
	dt_line("zns.id-ns-csi2", res, dw0, NULL, 0);
	struct nvme_zns_id_ns *z = (void *)buf;
	U("zns.id-ns-csi2.zoc", le16toh(z->zoc));
	U("zns.id-ns-csi2.ozcs", le16toh(z->ozcs));
	U("zns.id-ns-csi2.mar", le32toh(z->mar));
	U("zns.id-ns-csi2.mor", le32toh(z->mor));
	U("zns.id-ns-csi2.rrl", le32toh(z->rrl));
	U("zns.id-ns-csi2.frl", le32toh(z->frl));
	U("zns.id-ns-csi2.numzrwa", le32toh(z->numzrwa));
	U("zns.id-ns-csi2.zsze", le64toh(z->lbafe[f].zsze));
	U("zns.id-ns-csi2.zdes", z->lbafe[f].zdes);

	memset(buf, 0, sizeof(buf));
	res = dt_admin_cmd(d, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CSI_CTRL,
			   (uint32_t)NVME_CSI_ZNS << 24, buf, 4096, &dw0);
	dt_line("zns.id-ctrl-csi2", res, dw0, NULL, 0);
	U("zns.id-ctrl-csi2.zasl", ((struct nvme_zns_id_ctrl *)buf)->zasl);

	/* the Namespace Identification Descriptor list names the command set */
	memset(buf, 0, sizeof(buf));
	res = dt_admin_cmd(d, nvme_admin_identify, nsid, NVME_IDENTIFY_CNS_NS_DESC_LIST, 0, buf,
			   4096, &dw0);
	dt_line("zns.ns-desc", res, dw0, NULL, 0);
	int csi = -1;
	for (size_t off = 0; off + 4 <= sizeof(buf) && buf[off];) {
		if (buf[off] == NVME_NIDT_CSI)
			csi = buf[off + 4];
		off += 4 + buf[off + 1];
	}
	dt_field("zns.ns-desc.csi", "%d", csi);
}

void dt_zns(struct dt *d)
{
	identify(d);
	zms(d, "zns.reset-all-initial", 0, ZSA_RESET, true);
	report_all(d, "zns.report-initial");

	write_at(d, "zns.write-at-wp", zslba(0), 8, 1);
	write_at(d, "zns.write-not-at-wp", zslba(0) + 100, 8, 2);
	write_at(d, "zns.write-at-wp-2", zslba(0) + 8, 8, 3);
	read_at(d, "zns.read-back", zslba(0), 16);
	report(d, "zns.report-z0", zslba(0), 128, 0, 0, false);

	/* the LBA the controller chose comes back in CQE DW0/DW1 */
	append(d, "zns.append-1", zslba(1), 8, 4);
	append(d, "zns.append-2", zslba(1), 8, 5);
	append(d, "zns.append-not-zslba", zslba(1) + 2, 8, 6);
	append(d, "zns.append-over-zasl", zslba(1), (1u << DT_ZASL) * 8 + 8, 7);
	read_at(d, "zns.read-appended", zslba(1), 16);
	read_at(d, "zns.read-across-zones", zslba(1) - 8, 16);
	read_at(d, "zns.read-past-wp", zslba(1) + 8, 16);
	report_all(d, "zns.report-after-writes");

	/* two zones implicitly open (MOR 2): a third makes room or fails */
	write_at(d, "zns.write-third-zone", zslba(2), 8, 8);
	report_all(d, "zns.report-third-zone");
	/* three zones active (MAR 3) */
	write_at(d, "zns.write-too-many-active", zslba(3), 8, 9);
	zms(d, "zns.open-too-many-active", 3, ZSA_OPEN, false);
	zms(d, "zns.close-z2", 2, ZSA_CLOSE, false);
	zms(d, "zns.finish-z0", 0, ZSA_FINISH, false);
	zms(d, "zns.open-z3", 3, ZSA_OPEN, false);
	zms(d, "zns.open-z2", 2, ZSA_OPEN, false);
	report_all(d, "zns.report-opened");
	zms(d, "zns.finish-z1", 1, ZSA_FINISH, false);
	zms(d, "zns.open-too-many-open", 4, ZSA_OPEN, false);
	report_all(d, "zns.report-limits");
	write_at(d, "zns.write-full-zone", zslba(0), 8, 10);
	zms(d, "zns.close-empty-open", 3, ZSA_CLOSE, false);
	report(d, "zns.report-z3-closed-empty", zslba(3), 128, 0, 0, false);

	/* fill zone 2 to its capacity: a write past it, then one reaching it */
	for (unsigned i = 0; i < 5; i++) {
		char name[32];
		snprintf(name, sizeof(name), "zns.fill-z2-%u", i);
		write_at(d, name, zslba(2) + 8 + 256 * i, i == 4 ? 248 : 256, 11 + i);
	}
	write_at(d, "zns.write-past-zcap", zslba(2) + 1280, 264, 16);
	write_at(d, "zns.write-to-zcap", zslba(2) + 1280, DT_ZCAP - 1280, 17);
	report(d, "zns.report-z2-full", zslba(2), 128, 0, 0, false);
	read_at(d, "zns.read-beyond-zcap", zslba(2) + DT_ZCAP - 8, 16);

	/* reporting options: Full zones only (ZRASF 05h), partial, extended, too small */
	report(d, "zns.report-full-only", 0, 64 + DT_ZONES * 64, 0, 5, false);
	report(d, "zns.report-partial", 0, 128, 0, 0, true);
	report(d, "zns.report-not-partial", 0, 128, 0, 0, false);
	report(d, "zns.report-extended", 0, 4096, 1, 0, false);
	report(d, "zns.report-from-z5", zslba(5), 192, 0, 0, false);
	zms(d, "zns.reset-z2", 2, ZSA_RESET, false);
	zms(d, "zns.offline-empty", 2, ZSA_OFFLINE, false);
	{
		struct nvme_uring_cmd c = dt_rw(OP_ZMS, d->t->nsid[0], zslba(1) + 1, 0, NULL, 0);
		c.cdw12 = 0;
		c.cdw13 = ZSA_RESET;
		dt_io(d, "zns.action-not-zslba", 0, c, NULL, 0);
		c = dt_rw(OP_ZMS, d->t->nsid[0], zslba(1), 0, NULL, 0);
		c.cdw12 = 0;
		c.cdw13 = 0x0f;
		dt_io(d, "zns.action-unknown", 0, c, NULL, 0);
	}
	zms(d, "zns.reset-all-final", 0, ZSA_RESET, true);
	report_all(d, "zns.report-final");
}
