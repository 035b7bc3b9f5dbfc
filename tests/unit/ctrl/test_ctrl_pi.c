/* SPDX-License-Identifier: MIT */
/*
 * Protection information tuples (src/nvme/ctrl/pi.c) on their own: the
 * layouts, what the guard covers, each PRCHK check and its status, the
 * reference tag rules of types 1, 2 and 3, the escape values, the command
 * check of Type 1's ILBRT, and generate-then-check on every format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/crc_pi.h"
#include "nvme/ctrl/pi.h"

#define PRCHK_ALL (NVME_IO_PRINFO_PRCHK_GUARD | NVME_IO_PRINFO_PRCHK_APP | NVME_IO_PRINFO_PRCHK_REF)

static uint8_t data[4096];
static uint8_t md[64];

static struct pi_fmt fmt(uint8_t type, uint8_t pif, bool first, uint16_t ms, uint32_t lbads)
{
	return (struct pi_fmt){ .type = type, .pif = pif, .first = first, .ms = ms, .lbads = lbads };
}

static void fill_random(unsigned seed)
{
	srandom(seed);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)random();
	for (size_t i = 0; i < sizeof(md); i++)
		md[i] = (uint8_t)random();
}

static void test_layout(void **state)
{
	struct pi_fmt f16 = fmt(1, PI_PIF_16B, false, 64, 512);
	struct pi_fmt f64 = fmt(1, PI_PIF_64B, false, 64, 512);
	struct pi_tuple t = { .guard = 0x1122, .apptag = 0x3344, .reftag = 0x55667788 };
	struct pi_tuple back;
	static const uint8_t want16[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	static const uint8_t want64[16] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
					    0x33, 0x44, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6 };

	(void)state;
	assert_int_equal(pi_tuple_size(&f16), 8);
	assert_int_equal(pi_tuple_size(&f64), 16);
	assert_int_equal(pi_tuple_offset(&f16), 56);
	assert_int_equal(pi_tuple_offset(&f64), 48);
	f16.first = f64.first = true;
	assert_int_equal(pi_tuple_offset(&f16), 0);
	assert_int_equal(pi_tuple_offset(&f64), 0);

	/* big-endian fields, at the tuple's place, nothing else touched */
	memset(md, 0xee, sizeof(md));
	f16.first = false;
	pi_tuple_put(&f16, md, &t);
	assert_memory_equal(md + 56, want16, 8);
	for (int i = 0; i < 56; i++)
		assert_int_equal(md[i], 0xee);
	pi_tuple_get(&f16, md, &back);
	assert_int_equal(back.guard, t.guard);
	assert_int_equal(back.apptag, t.apptag);
	assert_int_equal(back.reftag, t.reftag);

	memset(md, 0xee, sizeof(md));
	t.guard = 0x0102030405060708ull;
	t.reftag = 0xa1a2a3a4a5a6ull;
	pi_tuple_put(&f64, md, &t);		/* first */
	assert_memory_equal(md, want64, 16);
	for (int i = 16; i < 64; i++)
		assert_int_equal(md[i], 0xee);
	pi_tuple_get(&f64, md, &back);
	assert_int_equal(back.guard, t.guard);
	assert_int_equal(back.reftag, t.reftag);
}

static void test_fmt_valid(void **state)
{
	struct pi_fmt f;

	(void)state;
	for (uint8_t type = 1; type <= 3; type++) {
		f = fmt(type, PI_PIF_16B, false, 8, 512);
		assert_true(pi_fmt_valid(&f));
		assert_true(pi_md_is_tuple(&f));
		f = fmt(type, PI_PIF_64B, true, 16, 4096);
		assert_true(pi_fmt_valid(&f));
		assert_true(pi_md_is_tuple(&f));
		f = fmt(type, PI_PIF_64B, false, 64, 4096);
		assert_true(pi_fmt_valid(&f));
		assert_false(pi_md_is_tuple(&f));
	}
	f = fmt(0, PI_PIF_16B, false, 8, 512);
	assert_false(pi_fmt_valid(&f));
	f = fmt(4, PI_PIF_16B, false, 8, 512);
	assert_false(pi_fmt_valid(&f));
	f = fmt(1, 1, false, 16, 512);		/* 32b guard: not offered */
	assert_false(pi_fmt_valid(&f));
	f = fmt(1, 3, false, 16, 512);
	assert_false(pi_fmt_valid(&f));
	f = fmt(1, PI_PIF_64B, false, 8, 512);	/* 16-byte tuple in 8 bytes */
	assert_false(pi_fmt_valid(&f));
	f = fmt(1, PI_PIF_16B, false, 0, 512);
	assert_false(pi_fmt_valid(&f));
	f = fmt(1, PI_PIF_16B, false, 8, 0);
	assert_false(pi_fmt_valid(&f));
}

/* The guard covers the data, plus the metadata before a last tuple */
static void test_guard_coverage(void **state)
{
	struct pi_fmt f;

	(void)state;
	fill_random(1);
	f = fmt(1, PI_PIF_16B, false, 64, 512);
	assert_int_equal(pi_guard(&f, data, md),
			 crc_t10dif_update(crc_t10dif_update(0, data, 512), md, 56));
	f.first = true;
	assert_int_equal(pi_guard(&f, data, md), crc_t10dif_update(0, data, 512));
	f.ms = 8;
	f.first = false;
	assert_int_equal(pi_guard(&f, data, md), crc_t10dif_update(0, data, 512));

	f = fmt(1, PI_PIF_64B, false, 64, 4096);
	assert_int_equal(pi_guard(&f, data, md), crc64_nvme(crc64_nvme(0, data, 4096), md, 48));
	f.first = true;
	assert_int_equal(pi_guard(&f, data, md), crc64_nvme(0, data, 4096));
	/* the NVM Command Set's test case: 4 KiB of zeroes */
	memset(data, 0, sizeof(data));
	f.ms = 16;
	assert_int_equal(pi_guard(&f, data, md), 0x6482d367eb22b64eull);
	f = fmt(1, PI_PIF_16B, true, 8, 4096);
	assert_int_equal(pi_guard(&f, data, md), 0);
}

/* Every format, every PI type, several blocks of a command: generate passes check */
static void test_generate_then_check(void **state)
{
	static const uint16_t ms[] = { 8, 16, 64 };
	static const uint32_t lbads[] = { 512, 4096 };

	(void)state;
	for (uint8_t type = 1; type <= 3; type++)
		for (uint8_t pif = 0; pif <= 2; pif += 2)
			for (int first = 0; first < 2; first++)
				for (size_t m = 0; m < 3; m++)
					for (size_t l = 0; l < 2; l++) {
						struct pi_fmt f = fmt(type, pif, first, ms[m], lbads[l]);
						struct pi_cmd c = {
							.control = PRCHK_ALL | NVME_IO_PRINFO_PRACT,
							.ilbrt = 0xfffffffffffeull, .slba = 0xfffffffffffeull,
							.lbat = 0x1234, .lbatm = 0xffff,
						};

						if (!pi_fmt_valid(&f))
							continue;
						assert_int_equal(pi_cmd_check(&f, &c), 0);
						for (uint32_t i = 0; i < 4; i++) {
							fill_random(type * 100 + pif * 10 + i);
							pi_generate(&f, &c, i, data, md);
							assert_int_equal(pi_check(&f, &c, i, data, md), 0);
						}
					}
}

/* A block generated for block i of the command, ready to be spoiled */
static void good(const struct pi_fmt *f, const struct pi_cmd *c, uint32_t i)
{
	fill_random(7 + i);
	pi_generate(f, c, i, data, md);
	assert_int_equal(pi_check(f, c, i, data, md), 0);
}

static void test_guard_check(void **state)
{
	(void)state;
	for (uint8_t pif = 0; pif <= 2; pif += 2) {
		struct pi_fmt f = fmt(2, pif, false, 64, 512);
		struct pi_cmd c = { .control = PRCHK_ALL, .ilbrt = 10, .lbat = 1, .lbatm = 0xffff };
		struct pi_cmd noguard = c;

		noguard.control &= (uint16_t)~NVME_IO_PRINFO_PRCHK_GUARD;
		good(&f, &c, 0);
		data[511] ^= 1;
		assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_GUARD);
		assert_int_equal(pi_check(&f, &noguard, 0, data, md), 0);
		/* the metadata before a last tuple is guarded */
		good(&f, &c, 0);
		md[0] ^= 0x80;
		assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_GUARD);
		/* the metadata after a first tuple is not */
		f.first = true;
		good(&f, &c, 0);
		md[63] ^= 0x80;
		assert_int_equal(pi_check(&f, &c, 0, data, md), 0);
		/* nor is the tuple's own guard field a guard failure beyond itself */
		md[1] ^= 0x01;
		assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_GUARD);
	}
}

static void test_apptag_check(void **state)
{
	(void)state;
	for (uint8_t type = 1; type <= 3; type++) {
		struct pi_fmt f = fmt(type, PI_PIF_16B, true, 8, 512);
		struct pi_cmd c = { .control = PRCHK_ALL, .ilbrt = 0, .lbat = 0xab12, .lbatm = 0xffff };
		struct pi_cmd noapp = c;
		struct pi_tuple t;

		noapp.control &= (uint16_t)~NVME_IO_PRINFO_PRCHK_APP;
		good(&f, &c, 0);
		c.lbat = 0xab13;
		assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_APPTAG);
		assert_int_equal(pi_check(&f, &noapp, 0, data, md), 0);
		/* the mask: only its bits are compared */
		c.lbatm = 0xff00;
		assert_int_equal(pi_check(&f, &c, 0, data, md), 0);
		c.lbat = 0xac12;
		assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_APPTAG);
		c.lbatm = 0;
		assert_int_equal(pi_check(&f, &c, 0, data, md), 0);
		/* a changed tag in the tuple, same command */
		c.lbat = 0xab12;
		c.lbatm = 0xffff;
		pi_tuple_get(&f, md, &t);
		t.apptag = 0xab10;
		pi_tuple_put(&f, md, &t);
		assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_APPTAG);
	}
}

static void test_reftag_types(void **state)
{
	(void)state;
	for (uint8_t pif = 0; pif <= 2; pif += 2) {
		uint64_t mask = pif ? 0xffffffffffffull : 0xffffffffull;

		for (uint8_t type = 1; type <= 3; type++) {
			struct pi_fmt f = fmt(type, pif, false, 16, 512);
			struct pi_cmd c = { .control = PRCHK_ALL, .ilbrt = 1000, .slba = 1000,
					    .lbat = 5, .lbatm = 0xffff };
			struct pi_cmd noref = c;
			struct pi_tuple t;

			noref.control &= (uint16_t)~NVME_IO_PRINFO_PRCHK_REF;
			/* block 3 carries ILBRT + 3 (types 1, 2) or ILBRT (type 3) */
			good(&f, &c, 3);
			pi_tuple_get(&f, md, &t);
			assert_int_equal(t.reftag, type == 3 ? 1000 : 1003);
			/* the same tuple checked as block 2: only types 1 and 2 mind */
			assert_int_equal(pi_check(&f, &c, 2, data, md), type == 3 ? 0 : PI_SC_REFTAG);
			assert_int_equal(pi_check(&f, &noref, 2, data, md), 0);
			/* the tag wraps at the field's width */
			c.ilbrt = c.slba = mask;
			good(&f, &c, 1);
			pi_tuple_get(&f, md, &t);
			assert_int_equal(t.reftag, type == 3 ? mask : 0);
			/* 2^32 is 0 in a 32-bit field, not in a 48-bit one */
			t.reftag = 0x100000000ull;
			pi_tuple_put(&f, md, &t);
			pi_tuple_get(&f, md, &t);
			assert_int_equal(t.reftag, pif ? 0x100000000ull : 0);
		}
	}
}

static void test_escapes(void **state)
{
	(void)state;
	for (uint8_t pif = 0; pif <= 2; pif += 2) {
		uint64_t ones = pif ? 0xffffffffffffull : 0xffffffffull;

		for (uint8_t type = 1; type <= 3; type++) {
			struct pi_fmt f = fmt(type, pif, false, 64, 512);
			struct pi_cmd c = { .control = PRCHK_ALL, .ilbrt = 77, .slba = 77,
					    .lbat = 0x1111, .lbatm = 0xffff };
			struct pi_tuple t = { .guard = 0xdead, .apptag = 0xffff, .reftag = 12345 };

			fill_random(3);
			pi_tuple_put(&f, md, &t);
			/* FFFFh alone: off for types 1 and 2, not for type 3 */
			assert_int_equal(pi_check(&f, &c, 0, data, md), type == 3 ? PI_SC_GUARD : 0);
			/* type 3 needs the reference tag all ones too */
			t.reftag = ones;
			pi_tuple_put(&f, md, &t);
			assert_int_equal(pi_check(&f, &c, 0, data, md), 0);
			if (pif) {
				/* 32 ones in the 48-bit field are not the escape */
				t.reftag = 0xffffffffull;
				pi_tuple_put(&f, md, &t);
				assert_int_equal(pi_check(&f, &c, 0, data, md),
						 type == 3 ? PI_SC_GUARD : 0);
			}
			/* one bit off FFFFh: every check applies */
			t.apptag = 0xfffe;
			t.reftag = ones;
			pi_tuple_put(&f, md, &t);
			assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_GUARD);
		}
	}
}

/* Guard first, then application tag, then reference tag */
static void test_check_order(void **state)
{
	struct pi_fmt f = fmt(1, PI_PIF_16B, false, 8, 512);
	struct pi_cmd c = { .control = PRCHK_ALL, .ilbrt = 9, .slba = 9, .lbat = 2, .lbatm = 0xffff };
	struct pi_tuple t;

	(void)state;
	good(&f, &c, 0);
	pi_tuple_get(&f, md, &t);
	t.apptag = 3;
	t.reftag = 99;
	pi_tuple_put(&f, md, &t);
	assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_APPTAG);
	t.guard ^= 1;
	pi_tuple_put(&f, md, &t);
	assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_GUARD);
	c.control = NVME_IO_PRINFO_PRCHK_REF;
	assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_REFTAG);
	c.control = 0;
	assert_int_equal(pi_check(&f, &c, 0, data, md), 0);
}

/* Type 1 with PRCHK reference tag: ILBRT is the SLBA's low bits */
static void test_cmd_check(void **state)
{
	struct pi_fmt f = fmt(1, PI_PIF_16B, false, 8, 512);
	struct pi_cmd c = { .control = NVME_IO_PRINFO_PRCHK_REF, .ilbrt = 5, .slba = 0x100000005ull };

	(void)state;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
	c.ilbrt = 6;
	assert_int_equal(pi_cmd_check(&f, &c), PI_SC_INVALID_PI);
	assert_int_equal(PI_SC_INVALID_PI, 0x4181);
	c.control = NVME_IO_PRINFO_PRCHK_GUARD | NVME_IO_PRINFO_PRCHK_APP;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
	c.control = NVME_IO_PRINFO_PRCHK_REF;
	f.type = 2;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
	f.type = 3;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
	/* 48 bits with the 64b guard */
	f = fmt(1, PI_PIF_64B, false, 16, 512);
	c.ilbrt = 5;
	assert_int_equal(pi_cmd_check(&f, &c), PI_SC_INVALID_PI);
	c.ilbrt = 0x100000005ull;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
	c.slba = 0x1000100000005ull;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
}

static void test_statuses(void **state)
{
	(void)state;
	assert_int_equal(PI_SC_GUARD, 0x282);
	assert_int_equal(PI_SC_APPTAG, 0x283);
	assert_int_equal(PI_SC_REFTAG, 0x284);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_fmt_valid),
		cmocka_unit_test(test_guard_coverage),
		cmocka_unit_test(test_generate_then_check),
		cmocka_unit_test(test_guard_check),
		cmocka_unit_test(test_apptag_check),
		cmocka_unit_test(test_reftag_types),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_check_order),
		cmocka_unit_test(test_cmd_check),
		cmocka_unit_test(test_statuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
