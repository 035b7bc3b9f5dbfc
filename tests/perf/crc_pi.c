/* SPDX-License-Identifier: MIT */
/*
 * GB/s of the end-to-end protection guards on 4 KiB buffers (one logical
 * block each): the 16-bit guard (ISA-L's crc16_t10dif), the 64-bit guard
 * carry-less on 128 and 512 bits and by table (src/lib/crc64_nvme*.c), and ISA-L's CRC-32
 * (iSCSI, IEEE) and CRC-64 ECMA for comparison, on blocks in cache (as a
 * block just copied is).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <isa-l/crc.h>
#include <isa-l/crc64.h>

#include "lib/crc_pi.h"

#define BLK 4096u
#define NBLK 256u
#define SAMPLE 64u

static uint8_t *buf;
static volatile uint64_t sink;

static uint64_t c16(const uint8_t *p) { return crc_t10dif_update(0, p, BLK); }
static uint64_t c64_clmul(const uint8_t *p) { return crc64_nvme_clmul(0, p, BLK); }
static uint64_t c64_vpclmul(const uint8_t *p) { return crc64_nvme_vpclmul(0, p, BLK); }
static uint64_t c64_table(const uint8_t *p) { return crc64_nvme_generic(0, p, BLK); }
static uint64_t c16_table(const uint8_t *p) { return crc_t10dif_generic(0, p, BLK); }
static uint64_t c64_auto(const uint8_t *p) { return crc64_nvme(0, p, BLK); }
static uint64_t c32c(const uint8_t *p) { return crc32_iscsi((unsigned char *)p, BLK, 0); }
static uint64_t c32ieee(const uint8_t *p) { return crc32_ieee(0, p, BLK); }
static uint64_t c64ecma(const uint8_t *p) { return crc64_ecma_refl(0, p, BLK); }

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The best of many short samples (64 blocks, 256 KiB, a few tens of us)
 * over 0.5 s: on a shared machine a long run measures the scheduler.
 */
static double gbps(uint64_t (*f)(const uint8_t *))
{
	double best = 1e9, start = now();
	uint64_t acc = 0;

	while (now() - start < 0.5) {
		double t0 = now(), t;

		for (unsigned i = 0; i < SAMPLE; i++)
			acc ^= f(buf + (size_t)i * BLK);
		t = now() - t0;
		if (t < best)
			best = t;
	}
	sink = acc;
	return (double)SAMPLE * BLK / best / 1e9;
}

int main(void)
{
	static const struct {
		const char *name;
		uint64_t (*f)(const uint8_t *);
	} cases[] = {
		{ "crc16 t10dif (ISA-L)", c16 },
		{ "crc16 t10dif (table)", c16_table },
		{ "crc64 nvme (pclmul)", c64_clmul },
		{ "crc64 nvme (vpclmul)", c64_vpclmul },
		{ "crc64 nvme (table)", c64_table },
		{ "crc64 nvme (dispatch)", c64_auto },
		{ "crc32 iscsi (ISA-L)", c32c },
		{ "crc32 ieee (ISA-L)", c32ieee },
		{ "crc64 ecma refl (ISA-L)", c64ecma },
	};

	buf = malloc((size_t)NBLK * BLK);
	if (!buf)
		return 1;
	srandom(1);
	for (size_t i = 0; i < (size_t)NBLK * BLK; i++)
		buf[i] = (uint8_t)random();
	if (!crc64_nvme_have_clmul())
		printf("note: no PCLMULQDQ here, the pclmul row is the table\n");
	if (!crc64_nvme_have_vpclmul())
		printf("note: no AVX-512 VPCLMULQDQ here, the vpclmul row is the next best\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		printf("%-26s %6.2f GB/s\n", cases[i].name, gbps(cases[i].f));
	return 0;
}
