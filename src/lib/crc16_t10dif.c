/* SPDX-License-Identifier: MIT */
/*
 * The 16-bit guard, CRC-16 T10-DIF: ISA-L's crc16_t10dif (SIMD) where the
 * program has ISA-L. Debian ships ISA-L as a shared library only, so a
 * program linked with the static libucmd.a has none: the reference is weak
 * there (src/libucmd_static.sh weakens it, as it does crc32_iscsi), and the
 * tables below answer instead: slicing by 8 (table[k][x] is the CRC of byte
 * x followed by k zero bytes, so eight bytes fold in one step of eight
 * independent lookups), about 5x the one-table loop.
 */
#include <pthread.h>

#include "lib/crc_pi.h"

#pragma weak crc16_t10dif

#define CRC16_T10DIF_POLY 0x8bb7u

static uint16_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint16_t c = (uint16_t)(i << 8);

		for (int b = 0; b < 8; b++)
			c = (uint16_t)(c & 0x8000 ? ((unsigned)c << 1) ^ CRC16_T10DIF_POLY : (unsigned)c << 1);
		table[0][i] = c;
	}
	for (unsigned k = 1; k < 8; k++)
		for (unsigned i = 0; i < 256; i++)
			table[k][i] = (uint16_t)(table[k - 1][i] << 8) ^
				      table[0][(uint8_t)(table[k - 1][i] >> 8)];
}

uint16_t crc_t10dif_generic(uint16_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, table_init);
	for (; len >= 8; len -= 8, p += 8)
		crc = table[7][p[0] ^ (crc >> 8)] ^ table[6][p[1] ^ (uint8_t)crc] ^
		      table[5][p[2]] ^ table[4][p[3]] ^ table[3][p[4]] ^ table[2][p[5]] ^
		      table[1][p[6]] ^ table[0][p[7]];
	while (len--)
		crc = (uint16_t)(crc << 8) ^ table[0][(uint8_t)(crc >> 8) ^ *p++];
	return crc;
}

uint16_t crc_t10dif_update(uint16_t crc, const void *buf, size_t len)
{
	if (crc16_t10dif)
		return crc16_t10dif(crc, buf, len);
	return crc_t10dif_generic(crc, buf, len);
}
