/* SPDX-License-Identifier: MIT */
/*
 * Storage tags through the controller: the formats with a Storage Tag Size
 * (12: 4096+16 STS 8, 13: 4096+16 STS 16) in the NVM Command Set Identify
 * Namespace with the namespace's LBSTM, Format NVM refusing to change a
 * Storage Tag Size, Namespace Management taking the host's LBSTM, and the
 * commands: LBST inserted with PRACT (CDW3 and CDW14), STC checking it on
 * Read and Verify with 88h and an error log entry, the LBSTM's cleared bits
 * not compared, the reference tag the low 32 bits; Copy's STCR checking
 * the sources' storage tags against their descriptors' ELBT and STCW the
 * destination's against LBST; and LBSTM surviving a restart.
 */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "nvme/ctrl/pi.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000
#define PRCHK_ALL (NVME_IO_PRINFO_PRCHK_GUARD | NVME_IO_PRINFO_PRCHK_APP | NVME_IO_PRINFO_PRCHK_REF)
#define PRACT NVME_IO_PRINFO_PRACT
#define STC NVME_IO_STC
#define ST_STAG SC(2, NVME_SC_STORAGE_TAG_CHECK)
#define ST_FORMAT (SC(1, NVME_SC_INVALID_FORMAT) | DNR)

static uint16_t format(struct host *h, uint32_t nsid, uint8_t lbaf, uint8_t pi)
{
	struct ucmd_nvme_sqe f = { .opcode = nvme_admin_format_nvm, .nsid = nsid };

	f.cdw10 = lbaf | (uint32_t)pi << 5;
	return host_cmd(h, 0, &f, NULL);
}

/* Read, Write or Verify with the 48-bit space LBST:ILBRT over CDW3 15:0 and CDW14 */
static uint16_t io(struct host *h, uint8_t op, uint32_t nsid, uint64_t slba, uint32_t nlb,
		   void *buf, void *meta, uint16_t control, uint64_t space, uint16_t lbat)
{
	struct ucmd_nvme_sqe s = { .opcode = op, .nsid = nsid };

	if (buf)
		host_set_prp(h, &s, buf, (size_t)nlb * 4096);
	s.mptr = (uintptr_t)meta;
	s.cdw10 = (uint32_t)slba;
	s.cdw11 = (uint32_t)(slba >> 32);
	s.cdw12 = (nlb - 1) | (uint32_t)control << 16;
	s.cdw3 = (uint32_t)(space >> 32) & 0xffff;
	s.cdw14 = (uint32_t)space;
	s.cdw15 = lbat | 0xffffu << 16;
	return host_cmd(h, 1, &s, NULL);
}

static uint64_t space_of(const uint8_t *tuple)
{
	uint64_t v = 0;

	for (unsigned i = 10; i < 16; i++)
		v = v << 8 | tuple[i];
	return v;
}

static struct nvme_nvm_id_ns *nvm_id(struct host *h, uint32_t nsid)
{
	struct nvme_nvm_id_ns *nvm = host_alloc(h, 4096);

	assert_int_equal(host_identify(h, NVME_IDENTIFY_CNS_CSI_NS, nsid, NVME_CSI_NVM, nvm), 0);
	return nvm;
}

static void test_format_sts(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 12, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	/* a namespace made on an STS format checks every storage tag bit */
	assert_int_equal(le64toh(nvm_id(&h, nsid)->lbstm), 0xff);
	/* the same STS with PI: fine; another non-zero one, or none to some, is not */
	assert_int_equal(format(&h, nsid, 12, 1), 0);
	assert_int_equal(format(&h, nsid, 13, 1), ST_FORMAT);
	assert_int_equal(le64toh(nvm_id(&h, nsid)->lbstm), 0xff);
	assert_int_equal(format(&h, nsid, 10, 1), 0);
	assert_int_equal(le64toh(nvm_id(&h, nsid)->lbstm), 0);
	assert_int_equal(format(&h, nsid, 12, 1), ST_FORMAT);
	assert_int_equal(format(&h, nsid, 13, 0), ST_FORMAT);
	/* Identify CNS 0Ah for format 13: its extended LBA format entry and PIC */
	struct nvme_nvm_id_ns *nvm = host_alloc(&h, 4096);
	struct ucmd_nvme_sqe id = { .opcode = nvme_admin_identify,
				    .cdw10 = NVME_IDENTIFY_CNS_CSI_NS_USER_DATA_FORMAT,
				    .cdw11 = 13 | (uint32_t)NVME_CSI_NVM << 24 };

	host_set_prp(&h, &id, nvm, 4096);
	assert_int_equal(host_cmd(&h, 0, &id, NULL), 0);
	assert_int_equal(le32toh(nvm->elbaf[13]), 2u << 7 | 16);
	assert_int_equal(nvm->pic, 0x5);
	host_close(&h);
}

static uint16_t ns_create(struct host *h, uint8_t flbas, uint8_t dps, uint64_t lbstm,
			  uint32_t *nsid)
{
	struct nvme_id_ns *id = host_alloc(h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_ns_mgmt };
	struct ucmd_nvme_cqe cqe;
	uint16_t st;

	id->nsze = id->ncap = htole64(64);
	id->flbas = flbas;
	id->dps = dps;
	id->lbstm = htole64(lbstm);
	host_set_prp(h, &s, id, 4096);
	st = host_cmd(h, 0, &s, &cqe);
	*nsid = cqe.dw0;
	return st;
}

static uint16_t ns_attach(struct host *h, uint32_t nsid)
{
	struct nvme_ctrl_list *l = host_alloc(h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_ns_attach, .nsid = nsid };

	l->num = htole16(1);
	l->identifier[0] = htole16(1);	/* this controller */
	host_set_prp(h, &s, l, 4096);
	return host_cmd(h, 0, &s, NULL);
}

static void test_commands(void **state)
{
	struct ucmd_ctrl_params p;
	char dir[] = "/tmp/ucmd-pi-stag-XXXXXX";
	struct host h;
	uint32_t nsid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	host_default_params(&p);
	p.dir = dir;
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 64, true, 1), 0);
	/* 4096+16 STS 16, type 1; the host's LBSTM has bits past the 16 the format has */
	assert_int_equal(ns_create(&h, 13, NVME_NS_DPS_PI_TYPE1, 0x1ff00ull, &nsid), 0);
	assert_int_equal(ns_attach(&h, nsid), 0);
	assert_int_equal(le64toh(nvm_id(&h, nsid)->lbstm), 0xff00);
	assert_int_equal(le32toh(nvm_id(&h, nsid)->elbaf[13]), 2u << 7 | 16);

	uint8_t *d = host_alloc(&h, 2 * 4096), *rd = host_alloc(&h, 2 * 4096);
	uint8_t *m = host_alloc(&h, 2 * 16);

	fill_pattern(d, 2 * 4096, 3);
	/* PRACT: the tuples get LBST ABCDh and the reference tags 20, 21 */
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 20, 2, d, m, PRACT, 0xabcd00000014ull, 9), 0);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, 0, 0, 0), 0);
	assert_memory_equal(d, rd, 2 * 4096);
	assert_int_equal(space_of(m), 0xabcd00000014ull);
	assert_int_equal(space_of(m + 16), 0xabcd00000015ull);

	/* every check and STC: the right LBST passes, one unmasked bit off is 88h */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, PRCHK_ALL | STC,
			    0xabcd00000014ull, 9), 0);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, PRCHK_ALL | STC,
			    0xaacd00000014ull, 9), ST_STAG);
	/* the error log names the first block */
	struct nvme_error_log_page *e = host_alloc(&h, 4096);

	assert_int_equal(host_get_log(&h, NVME_LOG_LID_ERROR, 0xffffffffu, e, 4096), 0);
	assert_int_equal(le16toh(e[0].status_field) >> 1, ST_STAG);
	assert_int_equal(le64toh(e[0].lba), 20);
	/* LBSTM's low byte is clear: those bits are not compared */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, PRCHK_ALL | STC,
			    0xab0000000014ull, 9), 0);
	/* without STC the storage tag is not looked at */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, PRCHK_ALL,
			    0x123400000014ull, 9), 0);
	/* Verify takes STC too */
	assert_int_equal(io(&h, nvme_cmd_verify, nsid, 20, 2, NULL, NULL, STC,
			    0x0bcd00000014ull, 9), ST_STAG);
	assert_int_equal(io(&h, nvme_cmd_verify, nsid, 20, 2, NULL, NULL, STC | PRCHK_ALL,
			    0xabcd00000014ull, 9), 0);
	/* the reference tag is the low 32 bits: Type 1's ILBRT must be SLBA's, LBST aside */
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, PRCHK_ALL,
			    0xabcd00000015ull, 9), SC(1, NVME_SC_INVALID_PI) | DNR);

	/* a write whose host tuples carry another storage tag: 88h, nothing stored */
	uint8_t *m2 = host_alloc(&h, 2 * 16);

	memcpy(m2, m, 32);
	m2[16 + 10] ^= 0x80;	/* block 21's storage tag, most significant bit */
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 20, 2, rd, m2, PRCHK_ALL | STC,
			    0xabcd00000014ull, 9), ST_STAG);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m2, 0, 0, 0), 0);
	assert_memory_equal(m, m2, 32);

	/* Write Zeroes with PRACT: the tuple carries the command's LBST too */
	assert_int_equal(io(&h, nvme_cmd_write_zeroes, nsid, 50, 1, NULL, NULL, PRACT,
			    0x444400000032ull, 3), 0);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 50, 1, rd, m2, 0, 0, 0), 0);
	assert_int_equal(space_of(m2), 0x444400000032ull);

	/* the namespace's LBSTM is the controller's state: a restart keeps it */
	host_close(&h);
	host_default_params(&p);
	p.dir = dir;
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 64, true, 1), 0);
	assert_int_equal(le64toh(nvm_id(&h, nsid)->lbstm), 0xff00);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, PRCHK_ALL | STC,
			    0xaacd00000014ull, 9), ST_STAG);
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

/*
 * Copy of one format 1h range: ELBT's low 48 bits (bytes 35:30, most
 * significant first) the range's ELBST:EILBRT; the write side's LBST:ILBRT
 * in CDW3/CDW14; stcr, stcw: CDW12 bits 25 and 24
 */
static uint16_t copy(struct host *h, uint32_t nsid, uint64_t sdlba, uint64_t slba, uint16_t nlb,
		     uint8_t prinfor, uint64_t elbt, bool stcr, uint8_t prinfow, uint64_t space,
		     bool stcw)
{
	uint8_t *r = host_alloc(h, 40);
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_copy, .nsid = nsid };

	memset(r, 0, 40);
	for (unsigned i = 0; i < 8; i++)
		r[8 + i] = (uint8_t)(slba >> (8 * i));
	r[16] = (uint8_t)(nlb - 1);
	r[17] = (uint8_t)((nlb - 1) >> 8);
	for (unsigned i = 0; i < 6; i++)
		r[35 - i] = (uint8_t)(elbt >> (8 * i));
	r[38] = r[39] = 0xff;	/* ELBATM; ELBAT 0 */
	host_set_prp(h, &s, r, 40);
	s.cdw3 = (uint32_t)(space >> 32) & 0xffff;
	s.cdw10 = (uint32_t)sdlba;
	s.cdw11 = (uint32_t)(sdlba >> 32);
	s.cdw12 = 1u << 8 | (uint32_t)prinfor << 12 | (stcw ? 1u << 24 : 0) |
		  (stcr ? 1u << 25 : 0) | (uint32_t)prinfow << 26;
	s.cdw14 = (uint32_t)space;
	s.cdw15 = 0xffffu << 16;
	return host_cmd(h, 1, &s, NULL);
}

static void test_copy(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .lbaf = 13, .store = UCMD_NS_STORE_RAM, .attach = true };
	uint8_t prchk = PRCHK_ALL >> 10, pract = PRACT >> 10;
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(format(&h, nsid, 13, 1), 0);
	uint8_t *d = host_alloc(&h, 2 * 4096), *rd = host_alloc(&h, 2 * 4096);
	uint8_t *m = host_alloc(&h, 2 * 16);

	fill_pattern(d, 2 * 4096, 7);
	assert_int_equal(io(&h, nvme_cmd_write, nsid, 0, 2, d, m, PRACT, 0x5a5a00000000ull, 0), 0);
	/* STCR: the range's storage tag is checked; one that differs is 88h, nothing copied */
	assert_int_equal(copy(&h, nsid, 20, 0, 2, prchk, 0x5a5b00000000ull, true, pract,
			      0x777700000014ull, false), ST_STAG);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, 0, 0, 0), 0);
	assert_memory_not_equal(d, rd, 2 * 4096);
	/* without STCR it is not looked at; PRACT gives the destination LBST 7777h */
	assert_int_equal(copy(&h, nsid, 20, 0, 2, prchk, 0x5a5b00000000ull, false, pract,
			      0x777700000014ull, false), 0);
	assert_int_equal(io(&h, nvme_cmd_read, nsid, 20, 2, rd, m, PRCHK_ALL | STC,
			    0x777700000014ull, 0), 0);
	assert_memory_equal(d, rd, 2 * 4096);
	assert_int_equal(copy(&h, nsid, 30, 0, 2, prchk, 0x5a5a00000000ull, true, pract,
			      0x777700000014ull, false), 0);
	/* STCW without PRACT: the tuples copied as they are, checked against LBST */
	assert_int_equal(copy(&h, nsid, 40, 0, 2, 0, 0, false, 0, 0x5a5b00000000ull, true),
			 ST_STAG);
	assert_int_equal(copy(&h, nsid, 40, 0, 2, 0, 0, false, 0, 0x5a5a00000000ull, true), 0);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_sts),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
