/* SPDX-License-Identifier: MIT */
/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), the checksum of the
 * state file and of each journal record. Table driven, one byte at a time:
 * the state is small and written rarely, so speed does not matter and no
 * library is worth a dependency for it.
 */
#include "ctrl_int.h"

static uint32_t table[256];

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
		table[i] = c;
	}
}

uint32_t nvmet_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const uint8_t *p = buf;

	pthread_once(&once, table_init);
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
