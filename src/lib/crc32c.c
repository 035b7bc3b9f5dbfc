/* SPDX-License-Identifier: MIT */
/*
 * CRC-32C (crc32c.h): ISA-L's crc32_iscsi where the program has ISA-L.
 * Debian ships ISA-L as a shared library only, so a program linked with
 * the static libucmd.a has none: the reference is weakened there
 * (src/libucmd_static.sh), and the table below answers instead.
 *
 * The reference is strong here, not "#pragma weak": with --as-needed a
 * shared libucmd whose every reference to ISA-L is weak would not need
 * libisal at all, and every CRC (this one and crc16_t10dif.c's, which is
 * weak) would fall back to its table.
 */
#include <pthread.h>

#include <isa-l/crc.h>

#include "lib/crc32c.h"

#define CRC32C_POLY_REFLECTED 0x82f63b78u

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? CRC32C_POLY_REFLECTED : 0);
		table[i] = c;
	}
}

uint32_t crc32c_generic(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, table_init);
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	unsigned int (*isal)(unsigned char *, int, unsigned int) = crc32_iscsi;

	/* NULL only where libucmd_static.sh weakened it: hide it from the compiler */
	__asm__("" : "+r"(isal));
	if (!isal)
		return crc32c_generic(crc, buf, len);
	/* crc32_iscsi takes an int length and inverts neither seed nor result */
	while (len) {
		int n = len > (1u << 30) ? (1 << 30) : (int)len;

		crc = ~isal((unsigned char *)buf, n, ~crc);
		buf = (const uint8_t *)buf + n;
		len -= (size_t)n;
	}
	return crc;
}
