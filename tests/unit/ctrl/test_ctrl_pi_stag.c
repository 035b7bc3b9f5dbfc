/* SPDX-License-Identifier: MIT */
/*
 * Storage tags (src/nvme/ctrl/pi.c): the Storage and Reference Space split
 * by the Storage Tag Size, LBST generated with PRACT, the Storage Tag Check
 * (STC) under LBSTM and its status 88h, the reference tag narrowed to what
 * the storage tag leaves (Type 1's ILBRT rule, the wrap, Type 3's escape),
 * and a format whose space is all storage tag.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvme/ctrl/pi.h"

#define PRCHK_ALL (NVME_IO_PRINFO_PRCHK_GUARD | NVME_IO_PRINFO_PRCHK_APP | NVME_IO_PRINFO_PRCHK_REF)

static uint8_t data[4096];
static uint8_t md[16];

static struct pi_fmt fmt64(uint8_t type, uint8_t sts, uint64_t lbstm)
{
	return (struct pi_fmt){ .type = type, .pif = PI_PIF_64B, .ms = 16, .lbads = 4096,
				.sts = sts, .lbstm = lbstm };
}

/* The tuple's 6-byte space, big-endian, as it sits in the metadata */
static uint64_t space_of(const uint8_t *m)
{
	uint64_t v = 0;

	for (unsigned i = 10; i < 16; i++)
		v = v << 8 | m[i];
	return v;
}

static void test_split(void **state)
{
	struct pi_fmt f = fmt64(1, 8, 0xff);
	struct pi_tuple t = { .guard = 1, .apptag = 2, .stag = 0xab, .reftag = 0x1234567890 };
	struct pi_tuple back;

	(void)state;
	assert_int_equal(pi_space_bits(&f), 48);
	assert_true(pi_fmt_valid(&f));
	pi_tuple_put(&f, md, &t);
	/* the storage tag in the 8 most significant bits, the 40-bit reference tag below */
	assert_int_equal(space_of(md), 0xab1234567890ull);
	pi_tuple_get(&f, md, &back);
	assert_int_equal(back.stag, 0xab);
	assert_int_equal(back.reftag, 0x1234567890ull);

	/* STS 16: a 32-bit reference tag */
	f.sts = 16;
	t = (struct pi_tuple){ .stag = 0xbeef, .reftag = 0xdeadbeef };
	pi_tuple_put(&f, md, &t);
	assert_int_equal(space_of(md), 0xbeefdeadbeefull);
	pi_tuple_get(&f, md, &back);
	assert_int_equal(back.stag, 0xbeef);
	assert_int_equal(back.reftag, 0xdeadbeef);

	/* STS 0: no storage tag, the whole space is the reference tag */
	f.sts = 0;
	pi_tuple_get(&f, md, &back);
	assert_int_equal(back.stag, 0);
	assert_int_equal(back.reftag, 0xbeefdeadbeefull);

	/* wider than the space: no valid format, 16b guard's 32 bits likewise */
	f.sts = 49;
	assert_false(pi_fmt_valid(&f));
	f.sts = 48;
	assert_true(pi_fmt_valid(&f));
	struct pi_fmt g = { .type = 1, .pif = PI_PIF_16B, .ms = 8, .lbads = 512, .sts = 33 };

	assert_int_equal(pi_space_bits(&g), 32);
	assert_false(pi_fmt_valid(&g));
	g.sts = 32;
	assert_true(pi_fmt_valid(&g));
}

/* PRACT: LBST from the command's space, the reference tag counting in its own bits */
static void test_generate(void **state)
{
	struct pi_fmt f = fmt64(1, 16, 0xffff);
	/* LBST 0x5a5a above ILBRT FFFFFFFFh: block 1's reference tag wraps to 0 */
	struct pi_cmd c = { .ilbrt = 0x5a5affffffffull, .slba = 0xffffffffull, .lbat = 7 };
	struct pi_tuple t;

	(void)state;
	memset(data, 0x3c, sizeof(data));
	memset(md, 0, sizeof(md));
	pi_generate(&f, &c, 0, data, md);
	pi_tuple_get(&f, md, &t);
	assert_int_equal(t.stag, 0x5a5a);
	assert_int_equal(t.reftag, 0xffffffffull);
	assert_int_equal(t.apptag, 7);
	pi_generate(&f, &c, 1, data, md);
	pi_tuple_get(&f, md, &t);
	assert_int_equal(t.stag, 0x5a5a);	/* the increment never carries into the storage tag */
	assert_int_equal(t.reftag, 0);
	assert_int_equal(space_of(md), 0x5a5a00000000ull);
	/* and that block checks with every check and STC */
	c.control = PRCHK_ALL;
	c.stc = true;
	assert_int_equal(pi_check(&f, &c, 1, data, md), 0);
}

static void test_stc(void **state)
{
	struct pi_fmt f = fmt64(2, 8, 0xff);
	struct pi_cmd w = { .ilbrt = 0x410000000010ull, .slba = 16, .lbat = 1 };
	struct pi_cmd r = { .control = PRCHK_ALL, .slba = 16, .lbat = 1, .lbatm = 0xffff };

	(void)state;
	memset(data, 0x11, sizeof(data));
	pi_generate(&f, &w, 0, data, md);
	/* the right storage tag passes, a wrong one is 88h with STC set ... */
	r.ilbrt = 0x410000000010ull;
	r.stc = true;
	assert_int_equal(pi_check(&f, &r, 0, data, md), 0);
	r.ilbrt = 0x420000000010ull;
	assert_int_equal(pi_check(&f, &r, 0, data, md), PI_SC_STAG);
	/* ... and is not looked at without it, PRCHK or not */
	r.stc = false;
	assert_int_equal(pi_check(&f, &r, 0, data, md), 0);
	r.control = 0;
	r.stc = true;
	assert_int_equal(pi_check(&f, &r, 0, data, md), PI_SC_STAG);

	/* LBSTM: a bit cleared there is not compared */
	f.lbstm = 0xfc;
	r.ilbrt = 0x420000000010ull;	/* 41h vs 42h differ in bits 1:0 only */
	assert_int_equal(pi_check(&f, &r, 0, data, md), 0);
	r.ilbrt = 0x450000000010ull;	/* bit 2 differs */
	assert_int_equal(pi_check(&f, &r, 0, data, md), PI_SC_STAG);
	f.lbstm = 0;
	assert_int_equal(pi_check(&f, &r, 0, data, md), 0);

	/* order: guard and application tag before the storage tag, it before the reference tag */
	f.lbstm = 0xff;
	r = (struct pi_cmd){ .control = PRCHK_ALL, .ilbrt = 0x420000000011ull, .slba = 16,
			     .lbat = 1, .lbatm = 0xffff, .stc = true };
	assert_int_equal(pi_check(&f, &r, 0, data, md), PI_SC_STAG);
	r.lbat = 2;
	assert_int_equal(pi_check(&f, &r, 0, data, md), PI_SC_APPTAG);
	r.lbat = 1;
	r.ilbrt = 0x410000000011ull;
	assert_int_equal(pi_check(&f, &r, 0, data, md), PI_SC_REFTAG);

	/* a format without a storage tag ignores STC (the tuple's top bits are reference tag) */
	struct pi_fmt g = fmt64(2, 0, 0);

	r.ilbrt = 0x410000000010ull;
	pi_generate(&g, &r, 0, data, md);
	r = (struct pi_cmd){ .ilbrt = 0x420000000010ull, .slba = 16, .stc = true };
	assert_int_equal(pi_check(&g, &r, 0, data, md), 0);
	/* (there the top bits are the reference tag's: PRCHK sees them) */
	r.control = NVME_IO_PRINFO_PRCHK_REF;
	assert_int_equal(pi_check(&g, &r, 0, data, md), PI_SC_REFTAG);
}

/* Type 1's ILBRT rule and the reference tag's width follow the STS */
static void test_type1_ilbrt(void **state)
{
	struct pi_fmt f = fmt64(1, 16, 0xffff);
	/* SLBA 1_0000_0005h: its low 32 bits are the reference tag; the LBST above is free */
	struct pi_cmd c = { .control = NVME_IO_PRINFO_PRCHK_REF, .ilbrt = 0x777700000005ull,
			    .slba = 0x100000005ull };

	(void)state;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
	c.ilbrt = 0x777700000006ull;
	assert_int_equal(pi_cmd_check(&f, &c), PI_SC_INVALID_PI);
	/* with STS 0 the same SLBA needs its low 48 bits */
	f.sts = 0;
	c.ilbrt = 0x000100000005ull;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
	c.ilbrt = 0x777700000005ull;
	assert_int_equal(pi_cmd_check(&f, &c), PI_SC_INVALID_PI);
	/* STS 48: no reference tag, nothing to hold ILBRT to, nothing to check */
	f.sts = 48;
	f.lbstm = 0xffffffffffffull;
	assert_int_equal(pi_cmd_check(&f, &c), 0);
	memset(data, 0x42, sizeof(data));
	pi_generate(&f, &c, 0, data, md);
	c.control = PRCHK_ALL;
	c.lbatm = 0xffff;
	assert_int_equal(pi_check(&f, &c, 9, data, md), 0);
	c.stc = true;
	assert_int_equal(pi_check(&f, &c, 9, data, md), 0);
	c.ilbrt ^= 1;
	assert_int_equal(pi_check(&f, &c, 9, data, md), PI_SC_STAG);
}

/* Type 3's escape: application tag FFFFh and the reference tag's bits all ones */
static void test_type3_escape(void **state)
{
	struct pi_fmt f = fmt64(3, 16, 0xffff);
	struct pi_tuple t = { .guard = 0, .apptag = 0xffff, .stag = 0x1234, .reftag = 0xffffffff };
	struct pi_cmd c = { .control = PRCHK_ALL, .lbat = 1, .lbatm = 0xffff, .stc = true,
			    .ilbrt = 0x999900000000ull };

	(void)state;
	memset(data, 0, sizeof(data));
	pi_tuple_put(&f, md, &t);
	/* the storage tag needs not be all ones: the reference tag is */
	assert_int_equal(pi_check(&f, &c, 0, data, md), 0);
	t.reftag = 0xfffffffe;
	pi_tuple_put(&f, md, &t);
	assert_int_equal(pi_check(&f, &c, 0, data, md), PI_SC_GUARD);
	/* all storage tag, no reference tag: the application tag alone escapes */
	f.sts = 48;
	f.lbstm = 0xffffffffffffull;
	t = (struct pi_tuple){ .apptag = 0xffff, .stag = 0x1 };
	pi_tuple_put(&f, md, &t);
	assert_int_equal(pi_check(&f, &c, 0, data, md), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_generate),
		cmocka_unit_test(test_stc),
		cmocka_unit_test(test_type1_ilbrt),
		cmocka_unit_test(test_type3_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
