/* SPDX-License-Identifier: MIT */
/*
 * Protection information beyond Read and Write: the 64b guard formats
 * (ELBAF's PIF 2h, the 48-bit reference tag through CDW3), PRINFO on
 * Compare, Verify, Write Zeroes and Copy, and the error log entry naming
 * the block whose check failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "nvme/ctrl/pi.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000
#define PRCHK_ALL (NVME_IO_PRINFO_PRCHK_GUARD | NVME_IO_PRINFO_PRCHK_APP | NVME_IO_PRINFO_PRCHK_REF)
#define PRACT NVME_IO_PRINFO_PRACT
#define ERRLOG_MAX 64

static uint16_t format(struct host *h, uint32_t nsid, uint8_t lbaf, bool mset, uint8_t pi)
{
	struct ucmd_nvme_sqe f = { .opcode = nvme_admin_format_nvm, .nsid = nsid };

	f.cdw10 = (lbaf & 0xf) | (uint32_t)(lbaf >> 4) << 12 | (mset ? 1u << 4 : 0) |
		  (uint32_t)pi << 5;
	return host_cmd(h, 0, &f, NULL);
}

struct tags {
	uint16_t control;
	uint64_t ilbrt;		/* bits 47:32 go to CDW3 */
	uint16_t lbat, lbatm;
};

/* An NVM command with blocks, PRINFO and tags; buf NULL transfers nothing */
static uint16_t cmd(struct host *h, uint8_t op, uint32_t nsid, uint64_t slba, uint32_t nlb,
		    void *buf, size_t len, void *meta, const struct tags *t)
{
	struct ucmd_nvme_sqe s = { .opcode = op, .nsid = nsid };

	if (buf)
		host_set_prp(h, &s, buf, len);
	s.mptr = (uintptr_t)meta;
	s.cdw3 = (uint32_t)(t->ilbrt >> 32);
	s.cdw10 = (uint32_t)slba;
	s.cdw11 = (uint32_t)(slba >> 32);
	s.cdw12 = (nlb - 1) | (uint32_t)t->control << 16;
	s.cdw14 = (uint32_t)t->ilbrt;
	s.cdw15 = t->lbat | (uint32_t)t->lbatm << 16;
	return host_cmd(h, 1, &s, NULL);
}

static void tuples(const struct pi_fmt *f, uint64_t ilbrt, uint32_t nlb, const uint8_t *d,
		   uint8_t *m, uint16_t lbat)
{
	struct pi_cmd c = { .ilbrt = ilbrt, .lbat = lbat };

	for (uint32_t i = 0; i < nlb; i++)
		pi_generate(f, &c, i, d + (size_t)i * f->lbads, m + (size_t)i * f->ms);
}

/* The newest error log entry */
static void last_error(struct host *h, struct nvme_error_log_page *out)
{
	struct nvme_error_log_page *e = host_alloc(h, ERRLOG_MAX * sizeof(*e));
	uint64_t best = 0;

	assert_int_equal(host_get_log(h, NVME_LOG_LID_ERROR, 0xffffffff, e,
				      ERRLOG_MAX * sizeof(*e)), 0);
	for (unsigned i = 0; i < ERRLOG_MAX; i++)
		if (le64toh(e[i].error_count) > best) {
			best = le64toh(e[i].error_count);
			*out = e[i];
		}
	assert_true(best > 0);
}

static void test_identify_elbaf(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 0, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct nvme_nvm_id_ns *nvm;
	struct nvme_id_ctrl *ctrl;
	struct nvme_id_ns *id;
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	ctrl = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, ctrl), 0);
	assert_true(le32toh(ctrl->ctratt) & NVME_CTRL_CTRATT_ELBAS);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, nsid, 0, id), 0);
	assert_int_equal(id->nlbaf, 13);
	assert_int_equal(le16toh(id->lbaf[8].ms), 16);
	assert_int_equal(id->lbaf[10].ds, 12);
	nvm = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CSI_NS, nsid, NVME_CSI_NVM, nvm), 0);
	for (unsigned i = 0; i < 12; i++)
		assert_int_equal(le32toh(nvm->elbaf[i]), i >= 8 ? 2u << 7 : 0);
	/* 12 and 13: 64b guard with an 8- and a 16-bit storage tag */
	assert_int_equal(le32toh(nvm->elbaf[12]), 2u << 7 | 8);
	assert_int_equal(le32toh(nvm->elbaf[13]), 2u << 7 | 16);
	assert_int_equal(le32toh(nvm->elbaf[14]), 0);
	/* 16BPISTS (a 64b guard format exists) and STCRS; no storage tag here: LBSTM 0 */
	assert_int_equal(nvm->pic, 0x5);
	assert_int_equal(le64toh(nvm->lbstm), 0);
	/* the 64b guard's tuple is 16 bytes: no 8-byte format holds it, every 16-byte one does */
	assert_int_equal(format(&h, nsid, 8, false, 1), 0);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, nsid, 0, id), 0);
	assert_int_equal(id->flbas & 0xf, 8);
	assert_int_equal(id->dps, NVME_NS_DPS_PI_TYPE1);
	host_close(&h);
}

/* 64b guard, type 2, 4096 + 16 separate: CRC-64 guards and the 48-bit reference tag */
static void test_guard64(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 10, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct pi_fmt f = { .type = 2, .pif = PI_PIF_64B, .ms = 16, .lbads = 4096 };
	struct tags t = { .control = PRCHK_ALL, .ilbrt = 0xa5b600000005ull, .lbat = 0x1234, .lbatm = 0xffff };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 10, false, 2), 0);
	uint8_t *d = host_alloc(&h, 3 * 4096), *m = host_alloc(&h, 3 * 16);
	uint8_t *rd = host_alloc(&h, 3 * 4096), *rm = host_alloc(&h, 3 * 16);

	fill_pattern(d, 3 * 4096, 21);
	tuples(&f, t.ilbrt, 3, d, m, t.lbat);
	assert_int_equal(cmd(&h, nvme_cmd_write, nsid, 4, 3, d, 3 * 4096, m, &t), 0);
	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 4, 3, rd, 3 * 4096, rm, &t), 0);
	assert_memory_equal(d, rd, 3 * 4096);
	assert_memory_equal(m, rm, 3 * 16);
	/* the reference tag's bits 47:32 are compared too: CDW3 off by one fails */
	struct tags t2 = t;

	t2.ilbrt ^= 1ull << 32;
	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 4, 3, rd, 3 * 4096, rm, &t2),
			 SC(2, NVME_SC_REFTAG_CHECK));
	/* a 16b guard over the same bytes is no 64b guard */
	m[16 + 7] ^= 0x40;
	assert_int_equal(cmd(&h, nvme_cmd_write, nsid, 4, 3, d, 3 * 4096, m, &t),
			 SC(2, NVME_SC_GUARD_CHECK));
	/* PRACT: the controller's CRC-64 guards, read back checked */
	struct tags g = { .control = PRACT, .ilbrt = 0x100000000ull, .lbat = 9 };
	struct tags gc = { .control = PRCHK_ALL, .ilbrt = 0x100000000ull, .lbat = 9, .lbatm = 0xffff };

	assert_int_equal(cmd(&h, nvme_cmd_write, nsid, 20, 3, d, 3 * 4096, NULL, &g), 0);
	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 20, 3, rd, 3 * 4096, rm, &gc), 0);
	assert_memory_equal(d, rd, 3 * 4096);
	struct pi_tuple tp;

	pi_tuple_get(&f, rm + 16, &tp);
	assert_int_equal(tp.reftag, 0x100000001ull);
	assert_int_equal(tp.guard, pi_guard(&f, d + 4096, rm + 16));
	host_close(&h);
}

/* Compare and Verify check the stored tuples; the failed block is in the error log */
static void test_compare_verify(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 1, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct pi_fmt f = { .type = 1, .pif = PI_PIF_16B, .ms = 8, .lbads = 512 };
	struct tags t = { .control = PRCHK_ALL, .ilbrt = 30, .lbat = 5, .lbatm = 0xffff };
	struct tags none = { 0 };
	struct nvme_error_log_page e;
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 1, false, 1), 0);
	uint8_t *d = host_alloc(&h, 4 * 512), *m = host_alloc(&h, 4 * 8);

	fill_pattern(d, 4 * 512, 3);
	tuples(&f, 30, 4, d, m, 5);
	assert_int_equal(cmd(&h, nvme_cmd_write, nsid, 30, 4, d, 4 * 512, m, &t), 0);
	assert_int_equal(cmd(&h, nvme_cmd_verify, nsid, 30, 4, NULL, 0, NULL, &t), 0);
	assert_int_equal(cmd(&h, nvme_cmd_compare, nsid, 30, 4, d, 4 * 512, m, &t), 0);
	/* the same tuples, other data: Compare Failure */
	d[100] ^= 1;
	assert_int_equal(cmd(&h, nvme_cmd_compare, nsid, 30, 4, d, 4 * 512, m, &none),
			 SC(2, NVME_SC_COMPARE_FAILED) | DNR);
	/* stored unchecked with block 32's guard wrong ... */
	d[100] ^= 1;
	d[2 * 512] ^= 1;
	assert_int_equal(cmd(&h, nvme_cmd_write, nsid, 30, 4, d, 4 * 512, m, &none), 0);
	/* ... Verify and Compare with the guard check fail on it, and name it */
	assert_int_equal(cmd(&h, nvme_cmd_verify, nsid, 30, 4, NULL, 0, NULL, &t),
			 SC(2, NVME_SC_GUARD_CHECK));
	last_error(&h, &e);
	assert_int_equal(le64toh(e.lba), 32);
	assert_int_equal(le32toh(e.nsid), nsid);
	assert_int_equal(le16toh(e.status_field) >> 1, SC(2, NVME_SC_GUARD_CHECK));
	assert_int_equal(cmd(&h, nvme_cmd_compare, nsid, 30, 4, d, 4 * 512, m, &t),
			 SC(2, NVME_SC_GUARD_CHECK));
	/* without it both pass */
	struct tags ref = t;

	ref.control = NVME_IO_PRINFO_PRCHK_REF;
	assert_int_equal(cmd(&h, nvme_cmd_verify, nsid, 30, 4, NULL, 0, NULL, &ref), 0);
	assert_int_equal(cmd(&h, nvme_cmd_compare, nsid, 30, 4, d, 4 * 512, m, &ref), 0);
	/* Type 1: ILBRT must be the SLBA's */
	ref.ilbrt = 31;
	assert_int_equal(cmd(&h, nvme_cmd_verify, nsid, 30, 4, NULL, 0, NULL, &ref),
			 SC(1, NVME_SC_INVALID_PI) | DNR);
	/* a failed write names its block too */
	m[3 * 8 + 7] ^= 1;
	assert_int_equal(cmd(&h, nvme_cmd_write, nsid, 30, 4, d, 4 * 512, m, &t),
			 SC(2, NVME_SC_GUARD_CHECK));
	last_error(&h, &e);
	assert_int_equal(le64toh(e.lba), 32);
	host_close(&h);
}

/* Write Zeroes: zero tuples, or with PRACT the tuples of zeroed blocks */
static void test_write_zeroes(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 8, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct tags pract = { .control = PRACT, .ilbrt = 10, .lbat = 0x77 };
	struct tags chk = { .control = PRCHK_ALL, .ilbrt = 10, .lbat = 0x77, .lbatm = 0xffff };
	struct tags none = { 0 };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 8, false, 1), 0);
	uint8_t *rd = host_alloc(&h, 4 * 512), *rm = host_alloc(&h, 4 * 16);

	assert_int_equal(cmd(&h, nvme_cmd_write_zeroes, nsid, 10, 4, NULL, 0, NULL, &none), 0);
	/*
	 * without PRACT the blocks read as deallocated ones: all-FFh tuples,
	 * whose application and reference tags say "not checked"
	 */
	assert_int_equal(cmd(&h, nvme_cmd_verify, nsid, 10, 4, NULL, 0, NULL, &chk), 0);
	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, &chk), 0);
	for (unsigned i = 0; i < 4 * 16; i++)
		assert_int_equal(rm[i], 0xff);
	assert_int_equal(cmd(&h, nvme_cmd_write_zeroes, nsid, 10, 4, NULL, 0, NULL, &pract), 0);
	assert_int_equal(cmd(&h, nvme_cmd_verify, nsid, 10, 4, NULL, 0, NULL, &chk), 0);
	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, &chk), 0);
	for (unsigned i = 0; i < 4 * 512; i++)
		assert_int_equal(rd[i], 0);
	assert_int_equal(rm[3 * 16 + 15], 13);	/* block 13's reference tag */
	/* with the reference check, Type 1's ILBRT rule holds here too */
	struct tags bad = chk;

	bad.ilbrt = 11;
	assert_int_equal(cmd(&h, nvme_cmd_write_zeroes, nsid, 10, 4, NULL, 0, NULL, &bad),
			 SC(1, NVME_SC_INVALID_PI) | DNR);
	host_close(&h);
}

/* Copy: PRINFOR checks the sources with each range's tags, PRINFOW the destination */
static uint16_t copy1(struct host *h, uint32_t nsid, uint64_t sdlba, uint64_t slba, uint16_t nlb,
		      uint8_t prinfor, uint32_t eilbrt, uint16_t elbat, const struct tags *w)
{
	uint8_t *r = host_alloc(h, 32);
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_copy, .nsid = nsid };

	memset(r, 0, 32);
	for (unsigned i = 0; i < 8; i++)
		r[8 + i] = (uint8_t)(slba >> (8 * i));
	r[16] = (uint8_t)(nlb - 1);
	r[17] = (uint8_t)((nlb - 1) >> 8);
	memcpy(r + 24, &eilbrt, 4);
	memcpy(r + 28, &elbat, 2);
	r[30] = r[31] = 0xff;	/* ELBATM */
	host_set_prp(h, &s, r, 32);
	s.cdw10 = (uint32_t)sdlba;
	s.cdw11 = (uint32_t)(sdlba >> 32);
	s.cdw12 = (uint32_t)prinfor << 12 | (uint32_t)w->control << 16;
	s.cdw14 = (uint32_t)w->ilbrt;
	s.cdw15 = w->lbat | (uint32_t)w->lbatm << 16;
	return host_cmd(h, 1, &s, NULL);
}

static void test_copy(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 1, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct pi_fmt f = { .type = 1, .pif = PI_PIF_16B, .ms = 8, .lbads = 512 };
	struct tags t = { .control = PRCHK_ALL, .ilbrt = 0, .lbat = 4, .lbatm = 0xffff };
	struct tags none = { 0 };
	uint8_t prchk = PRCHK_ALL >> 10;
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 1, false, 1), 0);
	uint8_t *d = host_alloc(&h, 2 * 512), *m = host_alloc(&h, 2 * 8), *rm = host_alloc(&h, 2 * 8);

	fill_pattern(d, 2 * 512, 8);
	tuples(&f, 0, 2, d, m, 4);
	assert_int_equal(cmd(&h, nvme_cmd_write, nsid, 0, 2, d, 2 * 512, m, &t), 0);
	/* the source's application tag is not what the range expects: 83h, nothing written */
	struct tags w = { .control = PRACT, .ilbrt = 40, .lbat = 6 };

	assert_int_equal(copy1(&h, nsid, 40, 0, 2, prchk, 0, 5, &w), SC(2, NVME_SC_APPTAG_CHECK));
	struct tags c40 = { .control = PRCHK_ALL, .ilbrt = 40, .lbat = 6, .lbatm = 0xffff };

	/* still unwritten: all-FFh tuples */
	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 40, 2, d, 2 * 512, rm, &none), 0);
	for (unsigned i = 0; i < 2 * 8; i++)
		assert_int_equal(rm[i], 0xff);
	fill_pattern(d, 2 * 512, 8);
	/* the right tags: the destination's tuples are the controller's new ones */
	assert_int_equal(copy1(&h, nsid, 40, 0, 2, prchk, 0, 4, &w), 0);
	assert_int_equal(cmd(&h, nvme_cmd_verify, nsid, 40, 2, NULL, 0, NULL, &c40), 0);
	/* without PRACT the source's tuples land as they are: PRINFOW's reference check fails */
	struct tags w2 = { .control = NVME_IO_PRINFO_PRCHK_REF, .ilbrt = 50 };

	assert_int_equal(copy1(&h, nsid, 50, 0, 2, 0, 0, 0, &w2), SC(2, NVME_SC_REFTAG_CHECK));
	assert_int_equal(copy1(&h, nsid, 50, 0, 2, 0, 0, 0, &none), 0);
	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 50, 2, d, 2 * 512, rm, &none), 0);
	assert_memory_equal(m, rm, 2 * 8);
	host_close(&h);
}

/* One Copy with a source range in descriptor format 1h (40 bytes, 48-bit EILBRT) */
static uint16_t copy_f1(struct host *h, uint32_t nsid, uint64_t sdlba, uint64_t slba, uint16_t nlb,
			uint8_t prinfor, uint64_t eilbrt, uint16_t elbat, const struct tags *w,
			unsigned fmt)
{
	uint8_t *r = host_alloc(h, 40);
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_copy, .nsid = nsid };

	memset(r, 0, 40);
	for (unsigned i = 0; i < 8; i++)
		r[8 + i] = (uint8_t)(slba >> (8 * i));
	r[16] = (uint8_t)(nlb - 1);
	r[17] = (uint8_t)((nlb - 1) >> 8);
	/* ELBT, bytes 35:26, most significant first: the reference tag is the low 48 bits */
	for (unsigned i = 0; i < 6; i++)
		r[35 - i] = (uint8_t)(eilbrt >> (8 * i));
	memcpy(r + 36, &elbat, 2);
	r[38] = r[39] = 0xff;	/* ELBATM */
	host_set_prp(h, &s, r, 40);
	s.cdw3 = (uint32_t)(w->ilbrt >> 32);
	s.cdw10 = (uint32_t)sdlba;
	s.cdw11 = (uint32_t)(sdlba >> 32);
	s.cdw12 = (uint32_t)prinfor << 12 | (uint32_t)w->control << 16 | fmt << 8;
	s.cdw14 = (uint32_t)w->ilbrt;
	s.cdw15 = w->lbat | (uint32_t)w->lbatm << 16;
	return host_cmd(h, 1, &s, NULL);
}

/*
 * Copy descriptor format 1h on a 64b guard namespace: each range's 48-bit
 * expected reference tag and application tag are checked (PRINFOR); the
 * 16b guard format 0h is the wrong one there, and 1h on a 16b guard
 * namespace, both Invalid Namespace or Format.
 */
static void test_copy_format1(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 8, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct pi_fmt f = { .type = 1, .pif = PI_PIF_64B, .ms = 16, .lbads = 512 };
	const uint64_t base = 0x12ull << 32;	/* a reference tag past 32 bits */
	struct tags t = { .control = PRCHK_ALL, .ilbrt = base, .lbat = 7, .lbatm = 0xffff };
	struct tags none = { 0 };
	uint8_t prchk = PRCHK_ALL >> 10;
	struct nvme_id_ctrl *id;
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 8, false, 2), 0);	/* type 2: the command's tag */
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	assert_int_equal(le16toh(id->ocfs) & 3, 3);
	uint8_t *d = host_alloc(&h, 2 * 512), *m = host_alloc(&h, 2 * 16);
	uint8_t *rd = host_alloc(&h, 2 * 512), *rm = host_alloc(&h, 2 * 16);

	f.type = 2;
	fill_pattern(d, 2 * 512, 5);
	tuples(&f, base, 2, d, m, 7);
	assert_int_equal(cmd(&h, nvme_cmd_write, nsid, 0, 2, d, 2 * 512, m, &t), 0);
	/* the wrong application tag in the range: 83h, nothing written */
	struct tags w = { .control = PRACT, .ilbrt = base, .lbat = 9 };

	assert_int_equal(copy_f1(&h, nsid, 20, 0, 2, prchk, base, 8, &w, 1),
			 SC(2, NVME_SC_APPTAG_CHECK));
	/* the wrong reference tag, off in bits 47:32 only: 84h */
	assert_int_equal(copy_f1(&h, nsid, 20, 0, 2, prchk, base + (1ull << 32), 7, &w, 1),
			 SC(2, NVME_SC_REFTAG_CHECK));
	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 20, 2, rd, 2 * 512, rm, &none), 0);
	assert_memory_not_equal(d, rd, 2 * 512);
	/* the right tags: copied, with the controller's new tuples (application tag 9) */
	assert_int_equal(copy_f1(&h, nsid, 20, 0, 2, prchk, base, 7, &w, 1), 0);
	struct tags c20 = { .control = PRCHK_ALL, .ilbrt = base, .lbat = 9, .lbatm = 0xffff };

	assert_int_equal(cmd(&h, nvme_cmd_read, nsid, 20, 2, rd, 2 * 512, rm, &c20), 0);
	assert_memory_equal(d, rd, 2 * 512);
	/* format 0h carries 16b guard tags: the wrong format for this namespace */
	assert_int_equal(copy_f1(&h, nsid, 30, 0, 2, 0, 0, 0, &none, 0), SC(0, 0x0b) | DNR);
	host_close(&h);

	/* and 1h on a 16b guard namespace */
	nsp.lbaf = 1;
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 1, false, 1), 0);
	assert_int_equal(copy_f1(&h, nsid, 30, 0, 2, 0, 0, 0, &none, 1), SC(0, 0x0b) | DNR);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identify_elbaf),
		cmocka_unit_test(test_guard64),
		cmocka_unit_test(test_compare_verify),
		cmocka_unit_test(test_write_zeroes),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_copy_format1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
