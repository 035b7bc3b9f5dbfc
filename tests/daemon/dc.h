/* SPDX-License-Identifier: MIT */
/*
 * daemon_client: a ucmdd client for the system tests (tests/system/daemon_*.sh).
 * It is a user of the public API: include/ucmd/ and libucmd, connected to
 * the daemon with ucmd_engine_connect(); only the garbage subcommand also
 * speaks the wire protocol itself (src/daemon/proto.h), to send what the
 * library never would.
 */
#ifndef DAEMON_CLIENT_DC_H
#define DAEMON_CLIENT_DC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ucmd/ucmd.h"

#include "ucmd/daemon.h"

/* NVMe opcodes the client sends (NVM command set, admin) */
#define NVME_OP_FLUSH	0x00
#define NVME_OP_WRITE	0x01
#define NVME_OP_READ	0x02
#define NVME_ADM_IDENTIFY 0x06
#define NVME_ADM_FORMAT	0x80

struct dc_opts {
	const char *daemon;	/* socket path; NULL: $UCMD_DAEMON */
	const char *ns;		/* generic namespace device, "ng0n1" */
	const char *ctrl;	/* controller device, "nvme0" */
	uint64_t slba;
	uint32_t nlb;		/* blocks per command */
	uint32_t count;		/* commands (rw), blocks (race) */
	uint64_t seed;
	uint64_t iters;
	double seconds;
	unsigned qd;
	unsigned entries;
	bool buf_alloc;		/* buffers from ucmd_buf_alloc() rather than malloc() */
	bool fixed;		/* registered buffers (IORING_URING_CMD_FIXED) */
	bool verify_only, read_only, no_reap, until_error;
	const char *want;	/* expect-errno: the answer wanted */
	unsigned stall_ms;
	uint64_t limit;
};

/* A connection: the engine, its devices and one SQE128/CQE32 ring. */
struct dc {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	int ns_fd, ctrl_fd;
	uint32_t nsid;
	uint32_t lba;		/* logical block size */
	uint64_t nsze;		/* logical blocks */
	const struct dc_opts *o;
};

/* Print why and exit 1: every failure of the client is a test failure. */
__attribute__((noreturn, format(printf, 1, 2))) void dc_die(const char *fmt, ...);
/* errno name for a negative res ("EACCES"), "OK" for 0, "NVME_0x..." for a status */
const char *dc_res_name(int res, char *buf, size_t len);

/* Connect, open both devices (O_RDWR, else O_RDONLY), a ring, Identify. 0 or -errno. */
int dc_open(struct dc *c, const struct dc_opts *o, unsigned entries);
void dc_close(struct dc *c);
/* A buffer the client does I/O on: ucmd_buf_alloc() or page-aligned malloc. */
void *dc_buf(struct dc *c, size_t len);
void dc_buf_free(struct dc *c, void *p);

/* Prepare one NVMe command on sqe (NVME_URING_CMD_IO or _ADMIN). */
void dc_prep_io(struct dc *c, struct io_uring_sqe *sqe, uint8_t opcode, uint64_t slba,
		uint32_t nlb, void *buf);
void dc_prep_admin(struct dc *c, struct io_uring_sqe *sqe, uint8_t opcode, uint32_t cdw10,
		   void *buf, uint32_t len);
/* Submit what is prepared and wait for one CQE: its res, or -errno of the ring. */
int dc_submit_one(struct dc *c);

/* The test pattern: what block lba holds when written with seed. */
void dc_pattern(void *buf, uint32_t lba_size, uint64_t seed, uint64_t lba);
/* The marker a racing "write" would leave: never equal to a pattern block. */
void dc_marker(void *buf, uint32_t lba_size);
bool dc_is_marker(const void *buf, uint32_t lba_size);

static inline uint64_t dc_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double dc_now(void);

/* subcommands */
int dc_race(const struct dc_opts *o);
int dc_flood(const struct dc_opts *o);
int dc_garbage(const struct dc_opts *o);
/* hostile WHAT: dc_hostile.c */
int dc_hostile(const struct dc_opts *o, const char *what);

#endif
