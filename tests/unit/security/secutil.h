/* SPDX-License-Identifier: MIT */
/*
 * Shared by the security tests: "tp", a test provider with NVMe-like
 * commands that describes them and counts what it executes by decoding the
 * very bytes it is handed; and helpers for engines, rings and audit files.
 */
#ifndef SECUTIL_H
#define SECUTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "ucmd/ucmd.h"

/* cmd_op values */
#define TP_IO	 1u
#define TP_ADMIN 2u

/* opcodes, NVMe's numbers */
#define TP_FLUSH    0x00
#define TP_WRITE    0x01
#define TP_READ	    0x02
#define TP_IDENTIFY 0x06	/* with TP_ADMIN */
#define TP_FORMAT   0x80	/* with TP_ADMIN */
#define TP_VENDOR   0x81

/* The command area of a 128-byte SQE. */
struct tp_cmd {
	uint8_t opcode;
	uint8_t cns;
	uint16_t rsvd;
	uint32_t nsid;
	uint64_t slba;
	uint32_t nlb;		/* blocks of 512 bytes, 1-based */
	uint32_t pad;
};

struct tp_exec {
	uint8_t opcode;
	uint64_t slba;
	uint32_t nlb;
};

/* Register device name (e.g. "ng9n1") of the test provider on e. */
void tp_register(struct ucmd_engine *e, const char *name);
void tp_reset(void);
unsigned tp_nr_exec(void);
unsigned tp_nr_writes(void);
/* Copy of the execution log; returns its length. */
unsigned tp_log(struct tp_exec *out, unsigned max);

/* An SQE128 ring on e. */
void sec_ring(struct ucmd_engine *e, struct ucmd_ring *ring, unsigned entries);
/* Queue one tp command. */
struct io_uring_sqe *tp_prep(struct ucmd_ring *ring, int fd, uint32_t cmd_op, uint8_t opcode,
			     uint64_t slba, uint32_t nlb);
/* Submit what is queued and reap one CQE; its res. */
int sec_submit_one(struct ucmd_ring *ring);

/* Write text to a fresh temporary file; returns its path (static buffer per call). */
const char *sec_tmpfile(const char *text);
/* Read the lines of path into lines (malloc'd); returns the count. */
unsigned sec_read_lines(const char *path, char **lines, unsigned max);
void sec_free_lines(char **lines, unsigned n);

#endif
