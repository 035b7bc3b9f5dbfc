/* SPDX-License-Identifier: MIT */
/*
 * The guards of NVMe end-to-end data protection: the 16-bit guard (CRC-16
 * T10-DIF, 8-byte protection information) and the 64-bit guard (NVMe's
 * CRC-64, Protection Information Format 2h, 16-byte protection information).
 * Names and chaining follow the kernel's crc_t10dif_update() and
 * crc64_nvme(): start from 0, pass the previous result to continue over the
 * next piece of the same buffer.
 */
#ifndef UCMD_LIB_CRC_PI_H
#define UCMD_LIB_CRC_PI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <isa-l/crc.h>

/*
 * CRC-16 T10-DIF: polynomial 8BB7h, init 0, not reflected, no xorout.
 * ISA-L's where the program has it, else crc_t10dif_generic() (a static
 * program: crc16_t10dif.c).
 */
uint16_t crc_t10dif_update(uint16_t crc, const void *buf, size_t len);
/* The table-driven version, for tests and bench */
uint16_t crc_t10dif_generic(uint16_t crc, const void *buf, size_t len);

/*
 * CRC-64 of the NVM Command Set (the "Rocksoft" polynomial
 * AD93D23594C93659h, reflected, init and xorout all ones), by carry-less
 * multiplication where the CPU has it (512-bit or 128-bit), otherwise by
 * table.
 */
uint64_t crc64_nvme(uint64_t crc, const void *buf, size_t len);

/* The two implementations crc64_nvme() chooses between, for tests and bench */
uint64_t crc64_nvme_generic(uint64_t crc, const void *buf, size_t len);
/*
 * Folding on 128-bit registers (x86-64 PCLMULQDQ, SSE4.1) and on 512-bit
 * ones (AVX-512F/VL, VPCLMULQDQ). Each may be called anywhere: where the CPU
 * lacks what it needs (have_*() false) it is the next one down, the
 * 512-bit one the 128-bit one, the 128-bit one crc64_nvme_generic().
 */
bool crc64_nvme_have_clmul(void);
uint64_t crc64_nvme_clmul(uint64_t crc, const void *buf, size_t len);
bool crc64_nvme_have_vpclmul(void);
uint64_t crc64_nvme_vpclmul(uint64_t crc, const void *buf, size_t len);

#endif
