/* SPDX-License-Identifier: MIT */
/* Between the two implementations of crc64_nvme() (crc_pi.h) */
#ifndef UCMD_LIB_CRC64_NVME_INT_H
#define UCMD_LIB_CRC64_NVME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Folding constants, reflected, filled by crc64_nvme_init(): [0] multiplies
 * the first 8 bytes of a 16-byte block, [1] the next 8; foldN carries a block
 * N * 16 bytes ahead.
 */
struct crc64_nvme_consts {
	uint64_t fold1[2];
	uint64_t fold4[2];
	uint64_t fold8[2];
	uint64_t fold16[2];
};
extern struct crc64_nvme_consts crc64_nvme_k;

void crc64_nvme_init(void);
/* The table-driven register update, without inversions */
uint64_t crc64_nvme_raw(uint64_t crc, const uint8_t *p, size_t len);
/* Whether this CPU has what crc64_nvme_clmul() / _vpclmul() need */
bool crc64_nvme_clmul_cpu(void);
bool crc64_nvme_vpclmul_cpu(void);

#endif
