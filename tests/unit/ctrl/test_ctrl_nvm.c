/* SPDX-License-Identifier: MIT */
/* NVM command set: Read/Write/Flush/Write Zeroes/DSM/Compare/Verify/
 * Write Uncorrectable/Copy and their error statuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000
#define BS 512
#define NSZE 1024

struct fx {
	struct host h;
	uint32_t nsid;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .lbaf = 0, .store = UCMD_NS_STORE_RAM, .attach = true };

	host_default_params(&p);
	f->nsid = host_open_ns(&f->h, &p, &nsp);
	assert_int_not_equal(f->nsid, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	host_close(&f->h);
	free(f);
	return 0;
}

static void test_read_write(void **state)
{
	struct fx *f = *state;
	size_t len = 64 * BS;
	uint8_t *w = host_alloc(&f->h, len), *r = host_alloc(&f->h, len);

	fill_pattern(w, len, 1);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 10, 64, w, len, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 10, 64, r, len, NULL, 0), 0);
	assert_memory_equal(w, r, len);
	/* FUA write */
	fill_pattern(w, BS, 2);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 0, 1, w, BS, NULL, 1u << 30), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 0, 1, r, BS, NULL, 0), 0);
	assert_memory_equal(w, r, BS);
	/* unwritten blocks read as zeros */
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 500, 1, r, BS, NULL, 0), 0);
	for (int i = 0; i < BS; i++)
		assert_int_equal(r[i], 0);
}

static void test_errors(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 4 * BS);

	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, NSZE - 1, 2, b, 2 * BS, NULL, 0),
			 SC(0, 0x80) | DNR);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, NSZE, 1, b, BS, NULL, 0),
			 SC(0, 0x80) | DNR);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, ~0ull - 1, 4, b, 4 * BS, NULL, 0),
			 SC(0, 0x80) | DNR);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, 7, 0, 1, b, BS, NULL, 0), SC(0, 0x0b) | DNR);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, 0, 0, 1, b, BS, NULL, 0), SC(0, 0x0b) | DNR);
	assert_int_equal(host_io(&f->h, 0x7f, f->nsid, 0, 1, b, BS, NULL, 0), SC(0, 0x01) | DNR);
	/* PRINFO (protection information) is not supported */
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 0, 1, b, BS, NULL, 1u << 26),
			 SC(0, 0x02) | DNR);
	/* fused bits set */
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_flush, .nsid = f->nsid, .flags = 1 };
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), SC(0, 0x02) | DNR);
}

static void test_flush(void **state)
{
	struct fx *f = *state;
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_flush, .nsid = f->nsid };

	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), 0);
	s.nsid = 0xffffffff;
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), 0);
	s.nsid = 9;
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), SC(0, 0x0b) | DNR);
}

static void write_pattern(struct fx *f, uint64_t slba, uint32_t nlb, unsigned seed)
{
	uint8_t *w = host_alloc(&f->h, nlb * BS);

	fill_pattern(w, nlb * BS, seed);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, slba, nlb, w, nlb * BS, NULL, 0), 0);
}

static bool is_zero(struct fx *f, uint64_t slba, uint32_t nlb)
{
	uint8_t *r = host_alloc(&f->h, nlb * BS);

	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, slba, nlb, r, nlb * BS, NULL, 0), 0);
	for (size_t i = 0; i < nlb * BS; i++)
		if (r[i])
			return false;
	return true;
}

static void test_write_zeroes(void **state)
{
	struct fx *f = *state;

	write_pattern(f, 100, 8, 3);
	assert_false(is_zero(f, 100, 8));
	assert_int_equal(host_io(&f->h, nvme_cmd_write_zeroes, f->nsid, 102, 2, NULL, 0, NULL, 0), 0);
	assert_true(is_zero(f, 102, 2));
	assert_false(is_zero(f, 100, 2));
	assert_false(is_zero(f, 104, 4));
	/* DEAC */
	assert_int_equal(host_io(&f->h, nvme_cmd_write_zeroes, f->nsid, 100, 8, NULL, 0, NULL, 1u << 25), 0);
	assert_true(is_zero(f, 100, 8));
	assert_int_equal(host_io(&f->h, nvme_cmd_write_zeroes, f->nsid, NSZE - 1, 2, NULL, 0, NULL, 0),
			 SC(0, 0x80) | DNR);
}

static void test_dsm_deallocate(void **state)
{
	struct fx *f = *state;
	struct nvme_dsm_range *r = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_dsm, .nsid = f->nsid };

	write_pattern(f, 200, 32, 4);
	r[0].slba = 200; r[0].nlb = 4;
	r[1].slba = 210; r[1].nlb = 2;
	r[2].slba = 230; r[2].nlb = 2;
	s.cdw10 = 2;			/* 3 ranges */
	s.cdw11 = NVME_DSMGMT_AD;
	host_set_prp(&f->h, &s, r, 3 * sizeof(*r));
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), 0);
	assert_true(is_zero(f, 200, 4));
	assert_false(is_zero(f, 204, 6));
	assert_true(is_zero(f, 210, 2));
	assert_false(is_zero(f, 212, 18));
	assert_true(is_zero(f, 230, 2));
	/* out of range in any entry fails the command */
	r[1].slba = NSZE;
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), SC(0, 0x80) | DNR);
	/* without AD: a hint, no change */
	write_pattern(f, 300, 1, 5);
	r[0].slba = 300; r[0].nlb = 1;
	s.cdw10 = 0;
	s.cdw11 = 0;
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), 0);
	assert_false(is_zero(f, 300, 1));
}

static void test_compare(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 4 * BS);

	fill_pattern(b, 4 * BS, 6);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 400, 4, b, 4 * BS, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_compare, f->nsid, 400, 4, b, 4 * BS, NULL, 0), 0);
	b[3 * BS + 17] ^= 1;
	assert_int_equal(host_io(&f->h, nvme_cmd_compare, f->nsid, 400, 4, b, 4 * BS, NULL, 0),
			 SC(2, 0x85) | DNR);
}

static void test_write_uncor_verify(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 8 * BS);

	write_pattern(f, 500, 8, 7);
	assert_int_equal(host_io(&f->h, nvme_cmd_verify, f->nsid, 500, 8, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_write_uncor, f->nsid, 502, 2, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 500, 8, b, 8 * BS, NULL, 0),
			 SC(2, 0x81) | DNR);
	assert_int_equal(host_io(&f->h, nvme_cmd_verify, f->nsid, 503, 1, NULL, 0, NULL, 0),
			 SC(2, 0x81) | DNR);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 500, 2, b, 2 * BS, NULL, 0), 0);
	/* Overwriting one block clears only that block */
	write_pattern(f, 502, 1, 8);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 502, 1, b, BS, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 503, 1, b, BS, NULL, 0),
			 SC(2, 0x81) | DNR);
	/* Write Zeroes clears too */
	assert_int_equal(host_io(&f->h, nvme_cmd_write_zeroes, f->nsid, 503, 1, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 500, 8, b, 8 * BS, NULL, 0), 0);
	/* and deallocation */
	assert_int_equal(host_io(&f->h, nvme_cmd_write_uncor, f->nsid, 600, 4, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_write_zeroes, f->nsid, 600, 4, NULL, 0, NULL, 1u << 25), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 600, 4, b, 4 * BS, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_write_uncor, f->nsid, NSZE, 1, NULL, 0, NULL, 0),
			 SC(0, 0x80) | DNR);
}

static void test_copy(void **state)
{
	struct fx *f = *state;
	struct nvme_copy_range *r = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_copy, .nsid = f->nsid };
	uint8_t *a = host_alloc(&f->h, 6 * BS), *b = host_alloc(&f->h, 6 * BS);

	fill_pattern(a, 4 * BS, 9);
	fill_pattern(a + 4 * BS, 2 * BS, 10);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 700, 4, a, 4 * BS, NULL, 0), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 720, 2, a + 4 * BS, 2 * BS, NULL, 0), 0);
	r[0].slba = 700; r[0].nlb = 3;		/* 0's based: 4 blocks */
	r[1].slba = 720; r[1].nlb = 1;
	s.cdw10 = 800;
	s.cdw12 = 1;				/* 2 ranges */
	host_set_prp(&f->h, &s, r, 2 * sizeof(*r));
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), 0);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 800, 6, b, 6 * BS, NULL, 0), 0);
	assert_memory_equal(a, b, 6 * BS);
	/* destination out of range */
	s.cdw10 = NSZE - 2;
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), SC(0, 0x80) | DNR);
	/* source out of range */
	s.cdw10 = 800;
	r[1].slba = NSZE - 1;
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), SC(0, 0x80) | DNR);
	/* descriptor format 2h (source namespace identifiers) not supported */
	r[1].slba = 720;
	s.cdw12 = 1 | 2u << 8;
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), SC(0, 0x02) | DNR);
	/* uncorrectable source */
	s.cdw12 = 1;
	assert_int_equal(host_io(&f->h, nvme_cmd_write_uncor, f->nsid, 721, 1, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), SC(2, 0x81) | DNR);
	/* too many ranges */
	s.cdw12 = 200;
	assert_int_equal(host_cmd(&f->h, 1, &s, NULL), SC(1, 0x83) | DNR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_zeroes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dsm_deallocate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_uncor_verify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
