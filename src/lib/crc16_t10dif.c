/* SPDX-License-Identifier: MIT */
/*
 * The 16-bit guard, CRC-16 T10-DIF: ISA-L's crc16_t10dif (SIMD) where the
 * program has ISA-L. Debian ships ISA-L as a shared library only, so a
 * program linked with the static libucmd.a has none: the reference is weak
 * there (src/libucmd_static.sh weakens it, as it does crc32_iscsi), and the
 * table below answers instead.
 */
#include <pthread.h>

#include "lib/crc_pi.h"

#pragma weak crc16_t10dif

#define CRC16_T10DIF_POLY 0x8bb7u

static uint16_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint16_t c = (uint16_t)(i << 8);

		for (int b = 0; b < 8; b++)
			c = (uint16_t)(c & 0x8000 ? ((unsigned)c << 1) ^ CRC16_T10DIF_POLY : (unsigned)c << 1);
		table[i] = c;
	}
}

uint16_t crc_t10dif_generic(uint16_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, table_init);
	while (len--)
		crc = (uint16_t)(crc << 8) ^ table[(uint8_t)(crc >> 8) ^ *p++];
	return crc;
}

uint16_t crc_t10dif_update(uint16_t crc, const void *buf, size_t len)
{
	if (crc16_t10dif)
		return crc16_t10dif(crc, buf, len);
	return crc_t10dif_generic(crc, buf, len);
}
