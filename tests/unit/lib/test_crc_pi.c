/* SPDX-License-Identifier: MIT */
/*
 * The guards of end-to-end data protection (src/lib/crc_pi.h): the published
 * test vectors (T10 SBC's CRC-16 codewords, the NVM Command Set's 64b CRC
 * test cases on 4 KiB), and the carry-less CRC-64s against the table on
 * random lengths, alignments and chained pieces. Also CRC-32C (crc32c.h),
 * ISA-L's against the table the same way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/crc32c.h"
#include "lib/crc_pi.h"

typedef uint64_t (*crc64_fn)(uint64_t, const void *, size_t);

static void fill(uint8_t *b, size_t n, int kind)
{
	for (size_t i = 0; i < n; i++)
		b[i] = kind == 0 ? 0x00 : kind == 1 ? 0xff : kind == 2 ? (uint8_t)i : (uint8_t)(0xff - i);
}

/* SBC-3's CRC test cases: 32 bytes each */
static void test_crc16_vectors(void **state)
{
	uint8_t b[32];

	(void)state;
	fill(b, 32, 0);
	assert_int_equal(crc_t10dif_update(0, b, 32), 0x0000);
	fill(b, 32, 1);
	assert_int_equal(crc_t10dif_update(0, b, 32), 0xa293);
	fill(b, 32, 2);
	assert_int_equal(crc_t10dif_update(0, b, 32), 0x0224);
	fill(b, 32, 3);
	assert_int_equal(crc_t10dif_update(0, b, 32), 0xa0b7);
	memset(b, 0, 32);
	b[0] = b[1] = 0xff;
	assert_int_equal(crc_t10dif_update(0, b, 32), 0x21b8);
	assert_int_equal(crc_t10dif_update(0, "123456789", 9), 0xd0db);
	/* chained in two pieces */
	assert_int_equal(crc_t10dif_update(crc_t10dif_update(0, "1234", 4), "56789", 5), 0xd0db);
}

/* The table a static program falls back to: the same vectors, the same as ISA-L's anywhere */
static void test_crc16_generic(void **state)
{
	uint8_t b[4096 + 3];

	(void)state;
	for (int kind = 0; kind < 4; kind++) {
		fill(b, 32, kind);
		assert_int_equal(crc_t10dif_generic(0, b, 32), crc_t10dif_update(0, b, 32));
	}
	assert_int_equal(crc_t10dif_generic(0, "123456789", 9), 0xd0db);
	fill(b, sizeof(b), 2);
	for (size_t len = 0; len < sizeof(b); len += 509)
		for (size_t off = 0; off < 3; off++)
			assert_int_equal(crc_t10dif_generic(0x1234, b + off, len - (len ? off : 0)),
					 crc_t10dif_update(0x1234, b + off, len - (len ? off : 0)));
}

static void vectors64(crc64_fn f)
{
	static const uint64_t want[4] = {
		0x6482d367eb22b64eull, 0xc0ddba7302eca3acull,
		0x3e729f5f6750449cull, 0x9a2df64b8e9e517eull,
	};
	uint8_t b[4096];

	for (int kind = 0; kind < 4; kind++) {
		fill(b, sizeof(b), kind);
		assert_int_equal(f(0, b, sizeof(b)), want[kind]);
	}
	/* the CRC catalogue's check value of CRC-64/NVME */
	assert_int_equal(f(0, "123456789", 9), 0xae8b14860a799888ull);
	assert_int_equal(f(0, "", 0), 0);
}

static void test_crc64_generic_vectors(void **state)
{
	(void)state;
	vectors64(crc64_nvme_generic);
}

static void test_crc64_clmul_vectors(void **state)
{
	(void)state;
	if (!crc64_nvme_have_clmul())
		print_message("no PCLMULQDQ here: crc64_nvme_clmul is the table\n");
	vectors64(crc64_nvme_clmul);
}

static void test_crc64_vpclmul_vectors(void **state)
{
	(void)state;
	if (!crc64_nvme_have_vpclmul())
		print_message("no AVX-512 VPCLMULQDQ here: crc64_nvme_vpclmul is the next best\n");
	vectors64(crc64_nvme_vpclmul);
}

static void test_crc64_dispatch_vectors(void **state)
{
	(void)state;
	vectors64(crc64_nvme);
}

/*
 * Every length to 300 and random ones to 9000, at every 16-byte alignment:
 * the 128-bit and 512-bit folding against the table (each is the next one
 * down where the CPU lacks it: the test then covers that fallback)
 */
static void test_crc64_clmul_matches_table(void **state)
{
	enum { MAX = 9000 };
	uint8_t *buf = malloc(MAX + 16);

	(void)state;
	assert_non_null(buf);
	srandom(29);
	for (size_t i = 0; i < MAX + 16; i++)
		buf[i] = (uint8_t)random();
	for (int round = 0; round < 3000; round++) {
		size_t len = round < 1100 ? (size_t)round : (size_t)random() % MAX;
		size_t off = (size_t)random() % 16;
		uint64_t seed = round & 1 ? (uint64_t)random() << 33 ^ (uint64_t)random() : 0;

		assert_int_equal(crc64_nvme_clmul(seed, buf + off, len),
				 crc64_nvme_generic(seed, buf + off, len));
		assert_int_equal(crc64_nvme_vpclmul(seed, buf + off, len),
				 crc64_nvme_generic(seed, buf + off, len));
	}
	free(buf);
}

/* A CRC over pieces equals the CRC over the whole, both ways */
static void test_crc64_chaining(void **state)
{
	enum { MAX = 5000 };
	static uint8_t buf[MAX];

	(void)state;
	srandom(64);
	for (size_t i = 0; i < MAX; i++)
		buf[i] = (uint8_t)random();
	for (int round = 0; round < 500; round++) {
		size_t len = (size_t)random() % MAX;
		size_t cut = len ? (size_t)random() % len : 0;
		uint64_t whole = crc64_nvme_generic(0, buf, len);

		assert_int_equal(crc64_nvme_generic(crc64_nvme_generic(0, buf, cut), buf + cut,
						    len - cut), whole);
		assert_int_equal(crc64_nvme(crc64_nvme(0, buf, cut), buf + cut, len - cut), whole);
	}
}

/*
 * CRC-32C's check value (RFC 3720 B.4's "123456789") and iSCSI's 32 bytes of
 * zeros and of ones, on ISA-L's and on the table
 */
static void test_crc32c_vectors(void **state)
{
	uint8_t b[32];

	(void)state;
	assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283);
	assert_int_equal(crc32c_generic(0, "123456789", 9), 0xe3069283);
	assert_int_equal(crc32c(0, "", 0), 0);
	fill(b, sizeof(b), 0);
	assert_int_equal(crc32c(0, b, sizeof(b)), 0x8a9136aa);
	assert_int_equal(crc32c_generic(0, b, sizeof(b)), 0x8a9136aa);
	fill(b, sizeof(b), 1);
	assert_int_equal(crc32c(0, b, sizeof(b)), 0x62a8ab43);
	assert_int_equal(crc32c_generic(0, b, sizeof(b)), 0x62a8ab43);
}

/* ISA-L's against the table on every length to 1100 and random ones, chained too */
static void test_crc32c_matches_table(void **state)
{
	enum { MAX = 9000 };
	uint8_t *buf = malloc(MAX + 16);

	(void)state;
	assert_non_null(buf);
	srandom(32);
	for (size_t i = 0; i < MAX + 16; i++)
		buf[i] = (uint8_t)random();
	for (int round = 0; round < 3000; round++) {
		size_t len = round < 1100 ? (size_t)round : (size_t)random() % MAX;
		size_t off = (size_t)random() % 16, cut = len ? (size_t)random() % len : 0;
		uint32_t whole = crc32c_generic(0, buf + off, len);

		assert_int_equal(crc32c(0, buf + off, len), whole);
		assert_int_equal(crc32c(crc32c(0, buf + off, cut), buf + off + cut, len - cut),
				 whole);
		assert_int_equal(crc32c_generic(crc32c_generic(0, buf + off, cut),
						buf + off + cut, len - cut), whole);
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc16_vectors),
		cmocka_unit_test(test_crc16_generic),
		cmocka_unit_test(test_crc64_generic_vectors),
		cmocka_unit_test(test_crc64_clmul_vectors),
		cmocka_unit_test(test_crc64_vpclmul_vectors),
		cmocka_unit_test(test_crc64_dispatch_vectors),
		cmocka_unit_test(test_crc64_clmul_matches_table),
		cmocka_unit_test(test_crc64_chaining),
		cmocka_unit_test(test_crc32c_vectors),
		cmocka_unit_test(test_crc32c_matches_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
