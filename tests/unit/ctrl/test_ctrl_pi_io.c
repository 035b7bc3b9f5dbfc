/* SPDX-License-Identifier: MIT */
/*
 * Protection information through the controller: Format NVM with PI and
 * PIL, Identify Namespace's dpc/dps, Read and Write checking the host's
 * tuples (82h/83h/84h, nothing stored on a failed write), PRACT inserting
 * and stripping them, on separate and extended metadata, and the format
 * surviving a restart of a controller directory.
 */
#include <endian.h>
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

static uint16_t format(struct host *h, uint32_t nsid, uint8_t lbaf, bool mset, uint8_t pi, bool pil)
{
	struct ucmd_nvme_sqe f = { .opcode = nvme_admin_format_nvm, .nsid = nsid };

	f.cdw10 = lbaf | (mset ? 1u << 4 : 0) | (uint32_t)pi << 5 | (pil ? 1u << 8 : 0);
	return host_cmd(h, 0, &f, NULL);
}

/* Read or Write with PRINFO and tags; meta NULL sends no MPTR */
static uint16_t io(struct host *h, uint8_t op, uint32_t nsid, uint64_t slba, uint32_t nlb,
		   void *buf, size_t len, void *meta, uint16_t control, uint32_t ilbrt,
		   uint16_t lbat, uint16_t lbatm)
{
	struct ucmd_nvme_sqe s = { .opcode = op, .nsid = nsid };

	host_set_prp(h, &s, buf, len);
	s.mptr = (uintptr_t)meta;
	s.cdw10 = (uint32_t)slba;
	s.cdw11 = (uint32_t)(slba >> 32);
	s.cdw12 = (nlb - 1) | (uint32_t)control << 16;
	s.cdw14 = ilbrt;
	s.cdw15 = lbat | (uint32_t)lbatm << 16;
	return host_cmd(h, 1, &s, NULL);
}

static void host_tuples(const struct pi_fmt *f, uint64_t slba, uint32_t nlb, const uint8_t *d,
			uint8_t *m, uint16_t lbat)
{
	struct pi_cmd c = { .ilbrt = slba, .slba = slba, .lbat = lbat };

	for (uint32_t i = 0; i < nlb; i++)
		pi_generate(f, &c, i, d + (size_t)i * f->lbads, m + (size_t)i * f->ms);
}

static void test_format_identify(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 256, .lbaf = 0, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	uint32_t nsid;
	struct nvme_id_ns *id;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, nsid, 0, id), 0);
	assert_int_equal(id->dpc, 0x1f);
	assert_int_equal(id->dps, 0);
	/* no metadata, no room for a tuple */
	assert_int_equal(format(&h, nsid, 0, false, 1, false), SC(1, NVME_SC_INVALID_FORMAT) | DNR);
	/* PI 4-7 are reserved */
	assert_int_equal(format(&h, nsid, 1, false, 4, false), SC(0, NVME_SC_INVALID_FIELD) | DNR);
	assert_int_equal(format(&h, nsid, 1, false, 2, true), 0);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, nsid, 0, id), 0);
	assert_int_equal(id->dps, NVME_NS_DPS_PI_TYPE2 | NVME_NS_DPS_PI_FIRST);
	assert_int_equal(id->flbas & 0xf, 1);
	assert_int_equal(format(&h, nsid, 7, true, 3, false), 0);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, nsid, 0, id), 0);
	assert_int_equal(id->dps, NVME_NS_DPS_PI_TYPE3);
	assert_int_equal(id->flbas, 7 | NVME_NS_FLBAS_META_EXT);
	/* and back to none */
	assert_int_equal(format(&h, nsid, 1, false, 0, false), 0);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, nsid, 0, id), 0);
	assert_int_equal(id->dps, 0);
	host_close(&h);
}

/* Type 1, 512 + 8 separate: the host's tuples checked on write and read */
static void test_type1_separate(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 256, .lbaf = 1, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct pi_fmt f = { .type = 1, .pif = PI_PIF_16B, .ms = 8, .lbads = 512 };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 1, false, 1, false), 0);
	uint8_t *d = host_alloc(&h, 4 * 512), *m = host_alloc(&h, 4 * 8);
	uint8_t *rd = host_alloc(&h, 4 * 512), *rm = host_alloc(&h, 4 * 8);

	fill_pattern(d, 4 * 512, 1);
	host_tuples(&f, 10, 4, d, m, 0x77);
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 10, 4, d, 4 * 512, m, PRCHK_ALL, 10, 0x77, 0xffff), 0);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, PRCHK_ALL, 10, 0x77, 0xffff), 0);
	assert_memory_equal(d, rd, 4 * 512);
	assert_memory_equal(m, rm, 4 * 8);

	/* a bad guard in block 2: 82h, and the stored blocks stay as they were */
	uint8_t *d2 = host_alloc(&h, 4 * 512);

	memcpy(d2, d, 4 * 512);
	d2[2 * 512 + 7] ^= 1;
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 10, 4, d2, 4 * 512, m, PRCHK_ALL, 10, 0x77, 0xffff),
			 SC(2, NVME_SC_GUARD_CHECK));
	/* without the guard check it is accepted ... */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, PRCHK_ALL, 10, 0x77, 0xffff), 0);
	assert_memory_equal(d, rd, 4 * 512);
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 10, 4, d2, 4 * 512, m,
			    NVME_IO_PRINFO_PRCHK_APP | NVME_IO_PRINFO_PRCHK_REF, 10, 0x77, 0xffff), 0);
	/* ... and then a read that checks the guard fails, one that does not passes */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, PRCHK_ALL, 10, 0x77, 0xffff),
			 SC(2, NVME_SC_GUARD_CHECK));
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, 0, 0, 0, 0), 0);
	assert_memory_equal(d2, rd, 4 * 512);
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 10, 4, d, 4 * 512, m, PRCHK_ALL, 10, 0x77, 0xffff), 0);

	/* application tag: compared under the mask */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, PRCHK_ALL, 10, 0x78, 0xffff),
			 SC(2, NVME_SC_APPTAG_CHECK));
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, PRCHK_ALL, 10, 0x78, 0xfff0), 0);
	/* reference tag: block 11 read as the first of a command at 11 passes, as 10's fails */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 11, 1, rd, 512, rm, PRCHK_ALL, 11, 0x77, 0xffff), 0);
	uint8_t *m2 = host_alloc(&h, 4 * 8);

	memcpy(m2, m, 32);
	m2[8 + 7] ^= 1;		/* block 11's reference tag */
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 10, 4, d, 4 * 512, m2, PRCHK_ALL, 10, 0x77, 0xffff),
			 SC(2, NVME_SC_REFTAG_CHECK));
	/* Type 1 with the reference check: ILBRT must be the SLBA's low bits */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 10, 4, rd, 4 * 512, rm, PRCHK_ALL, 11, 0x77, 0xffff),
			 SC(1, NVME_SC_INVALID_PI) | DNR);
	/* Compare takes PRINFO as Read does: the same blocks and tuples compare equal */
	assert_int_equal(io(&h, nvme_cmd_compare, nsid, 10, 4, d, 4 * 512, m, PRCHK_ALL, 10, 0x77, 0xffff), 0);
	host_close(&h);
}

/* PRACT with an 8-byte metadata: the host moves no metadata at all */
static void test_pract_strip_insert(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 5, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct pi_fmt f = { .type = 2, .pif = PI_PIF_16B, .ms = 8, .lbads = 4096 };
	struct pi_cmd c = { .control = PRCHK_ALL, .ilbrt = 500, .slba = 3, .lbat = 0xbeef, .lbatm = 0xffff };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 5, false, 2, false), 0);
	uint8_t *d = host_alloc(&h, 2 * 4096), *rd = host_alloc(&h, 2 * 4096), *rm = host_alloc(&h, 16);

	fill_pattern(d, 2 * 4096, 9);
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 3, 2, d, 2 * 4096, NULL, PRACT, 500, 0xbeef, 0), 0);
	/* read stripped, checked by the controller */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 3, 2, rd, 2 * 4096, NULL, PRACT | PRCHK_ALL, 500,
			    0xbeef, 0xffff), 0);
	assert_memory_equal(d, rd, 2 * 4096);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 3, 2, rd, 2 * 4096, NULL, PRACT | PRCHK_ALL, 501,
			    0xbeef, 0xffff), SC(2, NVME_SC_REFTAG_CHECK));
	/* read with the tuples: the ones the controller generated */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 3, 2, rd, 2 * 4096, rm, 0, 0, 0, 0), 0);
	for (uint32_t i = 0; i < 2; i++)
		assert_int_equal(pi_check(&f, &c, i, rd + i * 4096, rm + i * 8), 0);
	assert_int_equal(rm[2], 0xbe);
	assert_int_equal(rm[3], 0xef);
	assert_int_equal(rm[15], 501 & 0xff);
	host_close(&h);
}

/* Extended LBAs, 4096 + 16, tuple first: PRACT keeps the host's other 8 bytes */
static void test_extended_first(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 6, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct pi_fmt f = { .type = 1, .pif = PI_PIF_16B, .first = true, .ms = 16, .lbads = 4096 };
	struct pi_cmd c = { .control = PRCHK_ALL, .ilbrt = 7, .slba = 7, .lbat = 1, .lbatm = 0xffff };
	const size_t lb = 4096 + 16;
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 6, true, 1, true), 0);
	uint8_t *w = host_alloc(&h, 3 * lb), *r = host_alloc(&h, 3 * lb);

	fill_pattern(w, 3 * lb, 4);
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 7, 3, w, 3 * lb, NULL, PRACT, 7, 1, 0), 0);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 7, 3, r, 3 * lb, NULL, PRCHK_ALL, 7, 1, 0xffff), 0);
	for (uint32_t i = 0; i < 3; i++) {
		assert_memory_equal(w + i * lb, r + i * lb, 4096);		/* data */
		assert_memory_equal(w + i * lb + 4096 + 8, r + i * lb + 4096 + 8, 8);	/* after the tuple */
		assert_int_equal(pi_check(&f, &c, i, r + i * lb, r + i * lb + 4096), 0);
	}
	/* host-built tuples in an extended buffer, one spoiled */
	r[lb + 4096 + 3] ^= 1;		/* block 8's application tag */
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 7, 3, r, 3 * lb, NULL, PRCHK_ALL, 7, 1, 0xffff),
			 SC(2, NVME_SC_APPTAG_CHECK));
	host_close(&h);
}

/* The format is part of the controller directory's state */
static void test_persist(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-pi-XXXXXX";
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 1, .store = UCMD_NS_STORE_FILE, .attach = true };
	struct host h;
	uint32_t nsid;
	struct nvme_id_ns *id;

	(void)state;
	assert_non_null(mkdtemp(dir));
	host_default_params(&p);
	p.dir = dir;
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 3, false, 3, true), 0);
	host_close(&h);
	host_default_params(&p);
	p.dir = dir;
	assert_int_equal(host_open(&h, &p), 0);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, nsid, 0, id), 0);
	assert_int_equal(id->dps, NVME_NS_DPS_PI_TYPE3 | NVME_NS_DPS_PI_FIRST);
	assert_int_equal(id->flbas & 0xf, 3);
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

/*
 * A deallocated or unwritten block reads with an all-FFh tuple (NVM Command
 * Set: application and reference tags FFh, not checked; the guard FFh as
 * DLFEAT bit 4 clear says), the rest of its metadata zeros: never written,
 * just formatted and deallocated (DSM) alike, and reads checking every
 * field pass. A written one keeps its tuple across a restart of a directory.
 */
static void test_unwritten_tuples(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-pi-XXXXXX";
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 2, .store = UCMD_NS_STORE_FILE, .attach = true };
	struct pi_fmt f = { .type = 1, .pif = PI_PIF_16B, .first = true, .ms = 16, .lbads = 512 };
	struct host h;
	uint32_t nsid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	host_default_params(&p);
	p.dir = dir;
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 2, false, 1, true), 0);
	uint8_t *d = host_alloc(&h, 2 * 512), *m = host_alloc(&h, 2 * 16);
	uint8_t *rd = host_alloc(&h, 2 * 512), *rm = host_alloc(&h, 2 * 16);

	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, 2 * 512, rm, 0, 0, 0, 0), 0);
	for (unsigned i = 0; i < 2; i++) {
		for (unsigned b = 0; b < 8; b++)
			assert_int_equal(rm[i * 16 + b], 0xff);		/* the tuple, first */
		for (unsigned b = 8; b < 16; b++)
			assert_int_equal(rm[i * 16 + b], 0);		/* the rest */
	}
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, 2 * 512, rm, PRCHK_ALL, 20, 0x1234,
			    0xffff), 0);

	/* written, then deallocated: the same again */
	fill_pattern(d, 2 * 512, 3);
	memset(m, 0x5a, 2 * 16);
	host_tuples(&f, 20, 2, d, m, 0x77);
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 20, 2, d, 2 * 512, m, PRCHK_ALL, 20, 0x77, 0xffff), 0);
	uint8_t written[2 * 16];

	memcpy(written, m, sizeof(written));	/* the host's memory goes with it */
	host_close(&h);
	host_default_params(&p);
	p.dir = dir;
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 64, true, 1), 0);
	rd = host_alloc(&h, 2 * 512);
	rm = host_alloc(&h, 2 * 16);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, 2 * 512, rm, PRCHK_ALL, 20, 0x77, 0xffff), 0);
	assert_memory_equal(written, rm, 2 * 16);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, 2 * 512, rm, PRCHK_ALL, 20, 0x78, 0xffff),
			 SC(2, NVME_SC_APPTAG_CHECK));

	struct nvme_dsm_range *r = host_alloc(&h, sizeof(*r));
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_dsm, .nsid = nsid };

	memset(r, 0, sizeof(*r));
	r->nlb = htole32(2);
	r->slba = htole64(20);
	host_set_prp(&h, &s, r, sizeof(*r));
	s.cdw11 = NVME_DSMGMT_AD;
	assert_int_equal(host_cmd(&h, 1, &s, NULL), 0);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, 2 * 512, rm, PRCHK_ALL, 20, 0x78, 0xffff), 0);
	for (unsigned i = 0; i < 2; i++)
		for (unsigned b = 0; b < 16; b++)
			assert_int_equal(rm[i * 16 + b], b < 8 ? 0xff : 0);
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

/* A namespace without protection still refuses PRINFO */
static void test_no_pi_prinfo(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 1, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	uint8_t *d = host_alloc(&h, 512), *m = host_alloc(&h, 8);

	assert_int_equal(io(&h, nvme_cmd_write, nsid, 0, 1, d, 512, m, PRACT, 0, 0, 0),
			 SC(0, NVME_SC_INVALID_FIELD) | DNR);
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 0, 1, d, 512, m, 0, 0, 0, 0), 0);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_identify),
		cmocka_unit_test(test_type1_separate),
		cmocka_unit_test(test_pract_strip_insert),
		cmocka_unit_test(test_extended_first),
		cmocka_unit_test(test_persist),
		cmocka_unit_test(test_no_pi_prinfo),
		cmocka_unit_test(test_unwritten_tuples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
