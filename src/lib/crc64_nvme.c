/* SPDX-License-Identifier: MIT */
/*
 * NVMe's CRC-64 (the 64-bit guard): the portable table-driven version, the
 * constants the carry-less versions fold with, and the choice between them.
 * Debian's ISA-L (2.30) has the ECMA, ISO and Jones CRC-64s but not this
 * polynomial, hence our own.
 */
#include <pthread.h>

#include "lib/crc_pi.h"
#include "lib/crc64_nvme_int.h"

/* Reflected form of AD93D23594C93659h (bit i of the poly at bit 63-i) */
#define CRC64_NVME_POLY_REFL 0x9a6c9329ac4bc9b5ull
#define CRC64_NVME_POLY	     0xad93d23594c93659ull

static uint64_t table[8][256];
struct crc64_nvme_consts crc64_nvme_k;
static bool have_clmul, have_vpclmul;

static uint64_t bitrev64(uint64_t v)
{
	uint64_t r = 0;

	for (int i = 0; i < 64; i++, v >>= 1)
		r = (r << 1) | (v & 1);
	return r;
}

/* x^e mod P, not reflected */
static uint64_t xpow_mod(unsigned e)
{
	uint64_t r = 1;

	while (e--)
		r = (r << 1) ^ ((r >> 63) ? CRC64_NVME_POLY : 0);
	return r;
}

/*
 * A carry-less product of two reflected 64-bit values is the reflected
 * 128-bit product times x, so folding over d bits uses x^(d-1) and
 * x^(d+63) rather than x^d and x^(d+64).
 */
static void fold_consts(uint64_t k[2], unsigned d)
{
	k[0] = bitrev64(xpow_mod(d + 63));	/* for the first 8 bytes */
	k[1] = bitrev64(xpow_mod(d - 1));	/* for the next 8 */
}

static void init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint64_t c = i;

		for (int b = 0; b < 8; b++)
			c = (c >> 1) ^ ((c & 1) ? CRC64_NVME_POLY_REFL : 0);
		table[0][i] = c;
	}
	/* slicing by 8: table[j][i] is i followed by j zero bytes */
	for (unsigned i = 0; i < 256; i++)
		for (int j = 1; j < 8; j++)
			table[j][i] = (table[j - 1][i] >> 8) ^ table[0][table[j - 1][i] & 0xff];
	fold_consts(crc64_nvme_k.fold1, 128);
	fold_consts(crc64_nvme_k.fold4, 512);
	fold_consts(crc64_nvme_k.fold8, 1024);
	fold_consts(crc64_nvme_k.fold16, 2048);
	have_clmul = crc64_nvme_clmul_cpu();
	have_vpclmul = crc64_nvme_vpclmul_cpu();
}

void crc64_nvme_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, init);
}

/* The register without the initial and final inversion */
uint64_t crc64_nvme_raw(uint64_t crc, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		crc ^= (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
		       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
		       (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
		crc = table[7][crc & 0xff] ^ table[6][(crc >> 8) & 0xff] ^
		      table[5][(crc >> 16) & 0xff] ^ table[4][(crc >> 24) & 0xff] ^
		      table[3][(crc >> 32) & 0xff] ^ table[2][(crc >> 40) & 0xff] ^
		      table[1][(crc >> 48) & 0xff] ^ table[0][crc >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint64_t crc64_nvme_generic(uint64_t crc, const void *buf, size_t len)
{
	crc64_nvme_init();
	return ~crc64_nvme_raw(~crc, buf, len);
}

bool crc64_nvme_have_clmul(void)
{
	crc64_nvme_init();
	return have_clmul;
}

bool crc64_nvme_have_vpclmul(void)
{
	crc64_nvme_init();
	return have_vpclmul;
}

uint64_t crc64_nvme(uint64_t crc, const void *buf, size_t len)
{
	crc64_nvme_init();
	if (have_vpclmul)
		return crc64_nvme_vpclmul(crc, buf, len);
	return have_clmul ? crc64_nvme_clmul(crc, buf, len) : crc64_nvme_generic(crc, buf, len);
}
