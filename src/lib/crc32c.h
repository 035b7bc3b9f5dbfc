/* SPDX-License-Identifier: MIT */
/*
 * CRC-32C (Castagnoli: polynomial 1EDC6F41h reflected, init and xorout all
 * ones), the one copy: NVMe/TCP's header and data digests (host transport
 * and target, through src/tcp/pdu.h) and the emulated controller's state
 * file and journal records. Chaining as crc64_nvme() (crc_pi.h): start
 * from 0, pass the previous result to continue over the next piece; the
 * inversions are inside (the kernel's crc32c() leaves them to its callers).
 */
#ifndef UCMD_LIB_CRC32C_H
#define UCMD_LIB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * ISA-L's crc32_iscsi (SSE4.2 and carry-less multiplication, chosen at run
 * time) where the program has ISA-L, else crc32c_generic() (a program
 * linked with the static libucmd.a: crc32c.c).
 */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);
/* The table-driven version, for tests and bench */
uint32_t crc32c_generic(uint32_t crc, const void *buf, size_t len);

#endif
