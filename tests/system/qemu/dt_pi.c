/* SPDX-License-Identifier: MIT */
/*
 * The protection information sequences (NVM Command Set, End-to-end Data
 * Protection) on namespaces 2..6 of the zoned + PI controller (difftest.h):
 * writes with PRACT and with PI the host built, in separate metadata and in
 * extended LBAs, reads with PRCHK, bad guard / application / reference tags,
 * the type 1/2/3 reference tag rules and the escape values. Each step prints
 * its status, the data's checksum and the metadata bytes as read back.
 *
 * The guards are computed here, bit by bit from the polynomials, not with
 * ucmd's own CRC code: the comparison must not share code with one side.
 */
#include <endian.h>
#include <nvme/types.h>
#include <stdio.h>
#include <string.h>

#include "difftest.h"

enum { OP_WRITE = 0x01, OP_READ = 0x02, OP_COMPARE = 0x05, OP_WRITE_ZEROES = 0x08,
       OP_VERIFY = 0x0c };
enum { PRCHK_REF = 1u << 26, PRCHK_APP = 1u << 27, PRCHK_GUARD = 1u << 28, PRACT = 1u << 29 };
#define PRCHK_ALL (PRCHK_REF | PRCHK_APP | PRCHK_GUARD)
/*
 * Every check the type has: Type 3 has no reference tag to check, and QEMU
 * refuses PRCHK reference there (its own step, pi.nsN.*-prchk-ref, shows it)
 */
#define PRCHK(f) ((f)->type == 3 ? PRCHK_APP | PRCHK_GUARD : PRCHK_ALL)

struct fmt {
	unsigned ds, ms;	/* data and metadata bytes per block */
	unsigned type;		/* 1..3 */
	bool pif64;		/* 64b guard (PIF 2h) */
	bool first;		/* PI in the first bytes of the metadata */
	bool ext;		/* extended LBA (FLBAS bit 4) */
};

/* namespace index 1.. of the controller, as difftest.h lists them */
static const struct fmt fmts[DT_ZP_NS] = {
	[1] = { 512, 8, 1, false, false, false },
	[2] = { 4096, 16, 2, false, false, true },
	[3] = { 512, 8, 3, false, false, true },
	[4] = { 4096, 16, 1, true, false, false },
	[5] = { 512, 16, 1, false, true, false },
};

#define NLB 2
static uint8_t dbuf[NLB * (4096 + 16)] __attribute__((aligned(4096)));
static uint8_t mbuf[NLB * 16] __attribute__((aligned(64)));
static uint8_t buf[4096] __attribute__((aligned(4096)));

static uint16_t crc16_t10dif(uint16_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= (uint16_t)(*p++ << 8);
		for (int i = 0; i < 8; i++)
			crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x8bb7 : crc << 1);
	}
	return crc;
}

/* NVMe CRC-64 (Rocksoft): reflected 0xAD93D23594C93659, init and xorout all ones */
static uint64_t crc64_nvme(uint64_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (crc & 1 ? 0x9a6c9329ac4bc9b5ull : 0);
	}
	return ~crc;
}

static unsigned tuple_size(const struct fmt *f)
{
	return f->pif64 ? 16 : 8;
}

static unsigned tuple_off(const struct fmt *f)
{
	return f->first ? 0 : f->ms - tuple_size(f);
}

/* block i's data and metadata in the buffers the command moves */
static uint8_t *blk_data(const struct fmt *f, unsigned i)
{
	return dbuf + i * (f->ds + (f->ext ? f->ms : 0));
}

static uint8_t *blk_md(const struct fmt *f, unsigned i)
{
	return f->ext ? blk_data(f, i) + f->ds : mbuf + i * f->ms;
}

/* The tuple for block i: the guard over the data and the metadata before the tuple. */
static void make_tuple(const struct fmt *f, unsigned i, uint16_t app, uint64_t ref)
{
	uint8_t *md = blk_md(f, i), *t = md + tuple_off(f);

	if (f->pif64) {
		uint64_t g = crc64_nvme(0, blk_data(f, i), f->ds);
		g = crc64_nvme(g, md, tuple_off(f));
		for (int b = 0; b < 8; b++)
			t[b] = (uint8_t)(g >> (56 - 8 * b));
		t[8] = (uint8_t)(app >> 8);
		t[9] = (uint8_t)app;
		for (int b = 0; b < 6; b++)
			t[10 + b] = (uint8_t)(ref >> (40 - 8 * b));
	} else {
		uint16_t g = crc16_t10dif(0, blk_data(f, i), f->ds);
		g = crc16_t10dif(g, md, tuple_off(f));
		t[0] = (uint8_t)(g >> 8);
		t[1] = (uint8_t)g;
		t[2] = (uint8_t)(app >> 8);
		t[3] = (uint8_t)app;
		for (int b = 0; b < 4; b++)
			t[4 + b] = (uint8_t)(ref >> (24 - 8 * b));
	}
}

static void fill(const struct fmt *f, unsigned seed)
{
	memset(dbuf, 0, sizeof(dbuf));
	memset(mbuf, 0, sizeof(mbuf));
	for (unsigned i = 0; i < NLB; i++) {
		uint8_t *p = blk_data(f, i), *md = blk_md(f, i);
		for (unsigned b = 0; b < f->ds; b++)
			p[b] = (uint8_t)(seed * 29 + b * 3 + i);
		for (unsigned b = 0; b < f->ms; b++)	/* the bytes around the tuple */
			md[b] = (uint8_t)(0xa0 + seed + b);
	}
}

/* Whether PRACT moves no metadata: the metadata is the tuple alone */
static bool pract_strips(const struct fmt *f)
{
	return f->ms == tuple_size(f);
}

struct pcmd {
	uint8_t op;
	uint64_t slba;
	uint32_t prinfo;	/* CDW12 bits 29:26 */
	uint64_t ilbrt;
	uint16_t lbat, lbatm;
};

/* One command on namespace index n with the buffers laid out for its format. */
static int pi_io(struct dt *d, const char *name, int n, const struct pcmd *p, bool print_data)
{
	const struct fmt *f = &fmts[n];
	bool nomd = (p->prinfo & PRACT) && pract_strips(f);
	uint32_t dlen = NLB * (f->ds + (f->ext && !nomd ? f->ms : 0));
	struct nvme_uring_cmd c;
	char nm[96];
	int res;

	bool nodata = p->op == OP_WRITE_ZEROES || p->op == OP_VERIFY;

	c = dt_rw(p->op, d->t->nsid[n], p->slba, NLB, nodata ? NULL : dbuf, nodata ? 0 : dlen);
	c.cdw12 |= p->prinfo;
	c.cdw14 = (uint32_t)p->ilbrt;
	c.cdw3 = (uint32_t)(p->ilbrt >> 32) & 0xffff;	/* EILBRT: 48-bit reference tags */
	c.cdw15 = p->lbat | (uint32_t)p->lbatm << 16;
	if (!f->ext && !nomd && !nodata) {
		c.metadata = (uint64_t)(uintptr_t)mbuf;
		c.metadata_len = NLB * f->ms;
	}
	if (p->op == OP_READ) {
		memset(dbuf, 0xee, sizeof(dbuf));
		memset(mbuf, 0xee, sizeof(mbuf));
	}
	res = dt_io(d, name, n, c, print_data ? dbuf : NULL, print_data ? dlen : 0);
	if (print_data && !res && !nomd) {
		/* every block's metadata, tuple included, as the controller returned it */
		uint8_t md[NLB * 16];
		for (unsigned i = 0; i < NLB; i++)
			memcpy(md + i * f->ms, blk_md(f, i), f->ms);
		snprintf(nm, sizeof(nm), "%s.md", name);
		dt_hex(nm, md, NLB * f->ms);
	}
	return res;
}

/* the reference tag of the command's first block that passes the type's check */
static uint64_t ref_for(const struct fmt *f, uint64_t slba)
{
	if (f->type == 1)
		return slba & (f->pif64 ? 0xffffffffffffull : 0xffffffffull);
	return f->type == 2 ? 0x1000 + slba : 0x77;
}

/* host-built tuples for a write at slba, ref tags as type 1/2 increment them */
static void host_pi(const struct fmt *f, uint64_t slba, uint16_t app, unsigned seed)
{
	fill(f, seed);
	for (unsigned i = 0; i < NLB; i++)
		make_tuple(f, i, app, ref_for(f, slba) + (f->type == 3 ? 0 : i));
}

#define U(name, v) dt_field(name, "0x%llx", (unsigned long long)(v))

static void identify(struct dt *d, int n, const char *pfx)
{
	struct nvme_id_ns *ns = (void *)buf;
	char name[96];
	uint64_t dw0;
	int res;

#define F(fld, v) (snprintf(name, sizeof(name), "%s.%s", pfx, fld), U(name, v))
	memset(buf, 0, sizeof(buf));
	res = dt_admin_cmd(d, nvme_admin_identify, d->t->nsid[n], NVME_IDENTIFY_CNS_NS, 0, buf,
			   4096, &dw0);
	snprintf(name, sizeof(name), "%s.id-ns", pfx);
	dt_line(name, res, dw0, NULL, 0);
	unsigned fl = ns->flbas & 0xf;
	F("id-ns.nsze", le64toh(ns->nsze));
	F("id-ns.flbas", ns->flbas);
	F("id-ns.mc", ns->mc);
	F("id-ns.dpc", ns->dpc);
	F("id-ns.dps", ns->dps);
	F("id-ns.lbaf.cur.ds", ns->lbaf[fl].ds);
	F("id-ns.lbaf.cur.ms", le16toh(ns->lbaf[fl].ms));

	/* the NVM Command Set's Identify Namespace: the guard's format */
	memset(buf, 0, sizeof(buf));
	res = dt_admin_cmd(d, nvme_admin_identify, d->t->nsid[n], NVME_IDENTIFY_CNS_CSI_NS,
			   (uint32_t)NVME_CSI_NVM << 24, buf, 4096, &dw0);
	snprintf(name, sizeof(name), "%s.id-ns-csi0", pfx);
	dt_line(name, res, dw0, NULL, 0);
	struct nvme_nvm_id_ns *nvm = (void *)buf;
	F("id-ns-csi0.pic", nvm->pic);
	F("id-ns-csi0.elbaf.cur", le32toh(nvm->elbaf[fl]));
#undef F
}

static void step(struct dt *d, int n, const char *pfx, const char *what, const struct pcmd *p,
		 bool print_data)
{
	char name[96];

	snprintf(name, sizeof(name), "%s.%s", pfx, what);
	pi_io(d, name, n, p, print_data);
}

static void sequence(struct dt *d, int n)
{
	const struct fmt *f = &fmts[n];
	char pfx[32];
	uint64_t s;
	struct pcmd p;

	snprintf(pfx, sizeof(pfx), "pi.ns%u", d->t->nsid[n]);
	identify(d, n, pfx);

	/* PRACT: the controller builds the tuples from the command's tags */
	s = 8;
	fill(f, 1);
	p = (struct pcmd){ OP_WRITE, s, PRACT | PRCHK(f), ref_for(f, s), 0x1234, 0xffff };
	step(d, n, pfx, "write-pract", &p, false);
	p = (struct pcmd){ OP_READ, s, 0, 0, 0, 0 };
	step(d, n, pfx, "read-raw-pract", &p, true);
	p = (struct pcmd){ OP_READ, s, PRCHK(f), ref_for(f, s), 0x1234, 0xffff };
	step(d, n, pfx, "read-check-pract", &p, true);
	p = (struct pcmd){ OP_READ, s, PRACT | PRCHK(f), ref_for(f, s), 0x1234, 0xffff };
	step(d, n, pfx, "read-pract", &p, true);
	p = (struct pcmd){ OP_READ, s, PRCHK_APP, ref_for(f, s), 0x1235, 0xffff };
	step(d, n, pfx, "read-wrong-app", &p, false);
	p = (struct pcmd){ OP_READ, s, PRCHK_APP, ref_for(f, s), 0x1299, 0xff00 };
	step(d, n, pfx, "read-app-masked", &p, false);
	p = (struct pcmd){ OP_READ, s, PRCHK_REF, ref_for(f, s) + 1, 0, 0 };
	step(d, n, pfx, "read-wrong-ref", &p, false);

	/* PI the host built, checked on the way in */
	s = 16;
	host_pi(f, s, 0x4321, 2);
	p = (struct pcmd){ OP_WRITE, s, PRCHK(f), ref_for(f, s), 0x4321, 0xffff };
	step(d, n, pfx, "write-host-pi", &p, false);
	p = (struct pcmd){ OP_READ, s, PRCHK(f), ref_for(f, s), 0x4321, 0xffff };
	step(d, n, pfx, "read-host-pi", &p, true);
	p = (struct pcmd){ OP_VERIFY, s, PRCHK(f), ref_for(f, s), 0x4321, 0xffff };
	step(d, n, pfx, "verify-host-pi", &p, false);
	p = (struct pcmd){ OP_VERIFY, s, PRCHK(f), ref_for(f, s), 0x4322, 0xffff };
	step(d, n, pfx, "verify-wrong-app", &p, false);
	host_pi(f, s, 0x4321, 2);
	p = (struct pcmd){ OP_COMPARE, s, PRCHK(f), ref_for(f, s), 0x4321, 0xffff };
	step(d, n, pfx, "compare-host-pi", &p, false);

	/* bad tags: the write changes nothing (read back raw after each) */
	host_pi(f, s, 0x4321, 3);
	blk_md(f, 1)[tuple_off(f)] ^= 0x01;
	p = (struct pcmd){ OP_WRITE, s, PRCHK(f), ref_for(f, s), 0x4321, 0xffff };
	step(d, n, pfx, "write-bad-guard", &p, false);
	host_pi(f, s, 0x4322, 3);
	step(d, n, pfx, "write-bad-app", &p, false);
	host_pi(f, s, 0x4321, 3);
	blk_md(f, 1)[tuple_off(f) + tuple_size(f) - 1] ^= 0x01;
	make_tuple(f, 0, 0x4321, ref_for(f, s) + 5);
	step(d, n, pfx, "write-bad-ref", &p, false);
	p = (struct pcmd){ OP_READ, s, 0, 0, 0, 0 };
	step(d, n, pfx, "read-after-bad-writes", &p, true);

	/* stored unchecked, caught on the read */
	s = 24;
	host_pi(f, s, 0x5555, 4);
	blk_md(f, 0)[tuple_off(f) + 1] ^= 0x80;
	p = (struct pcmd){ OP_WRITE, s, 0, 0, 0, 0 };
	step(d, n, pfx, "write-unchecked-bad-guard", &p, false);
	p = (struct pcmd){ OP_READ, s, PRCHK_GUARD, 0, 0, 0 };
	step(d, n, pfx, "read-bad-guard", &p, false);
	p = (struct pcmd){ OP_VERIFY, s, PRCHK_GUARD, 0, 0, 0 };
	step(d, n, pfx, "verify-bad-guard", &p, false);
	p = (struct pcmd){ OP_READ, s, PRCHK(f) & ~PRCHK_GUARD, ref_for(f, s), 0x5555, 0xffff };
	step(d, n, pfx, "read-bad-guard-unchecked", &p, false);

	/* type 1: ILBRT must be the starting LBA's when the reference tag is checked */
	s = 32;
	host_pi(f, s, 0x6666, 5);
	p = (struct pcmd){ OP_WRITE, s, PRCHK(f), ref_for(f, s) + 3, 0x6666, 0xffff };
	step(d, n, pfx, "write-ilbrt-not-slba", &p, false);
	p = (struct pcmd){ OP_WRITE, s, PRCHK_GUARD | PRCHK_APP, ref_for(f, s) + 3, 0x6666, 0xffff };
	step(d, n, pfx, "write-ilbrt-not-slba-nochk", &p, false);
	/* ref tags that do not follow the type's rule for block 1 */
	host_pi(f, s, 0x6666, 6);
	make_tuple(f, 1, 0x6666, ref_for(f, s));
	p = (struct pcmd){ OP_WRITE, s, PRCHK(f), ref_for(f, s), 0x6666, 0xffff };
	step(d, n, pfx, "write-ref-not-incremented", &p, false);

	/* escape values: application tag FFFFh (and for type 3 reference tag all ones) */
	s = 40;
	host_pi(f, s, 0xffff, 7);
	blk_md(f, 0)[tuple_off(f)] ^= 0xff;
	p = (struct pcmd){ OP_WRITE, s, PRCHK(f), ref_for(f, s), 0x7777, 0xffff };
	step(d, n, pfx, "write-escape-app", &p, false);
	fill(f, 8);
	for (unsigned i = 0; i < NLB; i++) {
		make_tuple(f, i, 0xffff, f->pif64 ? 0xffffffffffffull : 0xffffffffull);
		blk_md(f, i)[tuple_off(f)] ^= 0x5a;
	}
	s = 48;
	p = (struct pcmd){ OP_WRITE, s, PRCHK(f), ref_for(f, s), 0x7777, 0xffff };
	step(d, n, pfx, "write-escape-app-ref", &p, false);
	p = (struct pcmd){ OP_READ, s, PRCHK(f), ref_for(f, s), 0x7777, 0xffff };
	step(d, n, pfx, "read-escape-app-ref", &p, true);

	/* the reference tag check asked of every type (Type 3 has none to check) */
	s = 72;
	host_pi(f, s, 0x1111, 9);
	p = (struct pcmd){ OP_WRITE, s, PRCHK_REF, ref_for(f, s), 0x1111, 0xffff };
	step(d, n, pfx, "write-prchk-ref", &p, false);
	p = (struct pcmd){ OP_READ, s, PRCHK_REF, ref_for(f, s), 0x1111, 0xffff };
	step(d, n, pfx, "read-prchk-ref", &p, false);

	/* never written: what the metadata reads as, and whether checks pass */
	s = 200;
	p = (struct pcmd){ OP_READ, s, 0, 0, 0, 0 };
	step(d, n, pfx, "read-unwritten", &p, true);
	p = (struct pcmd){ OP_READ, s, PRCHK(f), ref_for(f, s), 0x1234, 0xffff };
	step(d, n, pfx, "read-unwritten-check", &p, false);

	/* Write Zeroes with and without PRACT */
	s = 56;
	p = (struct pcmd){ OP_WRITE_ZEROES, s, PRACT, ref_for(f, s), 0x2468, 0xffff };
	step(d, n, pfx, "write-zeroes-pract", &p, false);
	p = (struct pcmd){ OP_READ, s, 0, 0, 0, 0 };
	step(d, n, pfx, "read-zeroes-pract", &p, true);
	s = 64;
	p = (struct pcmd){ OP_WRITE_ZEROES, s, 0, 0, 0, 0 };
	step(d, n, pfx, "write-zeroes", &p, false);
	p = (struct pcmd){ OP_READ, s, 0, 0, 0, 0 };
	step(d, n, pfx, "read-zeroes", &p, true);
	p = (struct pcmd){ OP_READ, s, PRCHK(f), ref_for(f, s), 0, 0xffff };
	step(d, n, pfx, "read-zeroes-check", &p, false);
}

void dt_pi(struct dt *d)
{
	for (int n = 1; n < d->t->nr_ns && n < DT_ZP_NS; n++)
		sequence(d, n);
}
