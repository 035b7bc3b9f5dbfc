/* SPDX-License-Identifier: MIT */
/*
 * Host test fixture: an engine, an emulated controller with one RAM
 * namespace, the host driver attached, the three devices opened and a
 * ring (SQE128|CQE32 unless told otherwise).
 */
#ifndef UCMD_TEST_HOST_FIXTURE_H
#define UCMD_TEST_HOST_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ucmd/ucmd.h"
#include "ucmd/nvme.h"
#include "nvme/ctrl/ctrl.h"
#include "core/file.h"

struct fx_opts {
	enum ucmd_ctrl_mode mode;
	unsigned ring_flags;		/* 0: SQE128 | CQE32 */
	bool ring_flags_set;		/* use ring_flags even when 0 */
	unsigned entries;		/* 0: 64 */
	uint8_t lbaf;
	bool extended;
	uint64_t nsze;			/* 0: 4096 blocks */
	unsigned nr_poll_queues;
	unsigned nr_io_queues;
	int open_flags;			/* for the devices; 0: O_RDWR */
	bool rdonly;			/* open the devices O_RDONLY */
	uint64_t zone_size;		/* blocks: a zoned namespace; 0: NVM */
	uint32_t max_open, max_active;	/* a zoned namespace's limits, 0: none */
	bool no_bdev;			/* the host makes no nvme0n1: do not open it */
};

struct fx {
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng, dev, bdev;
	uint32_t nsid;
	unsigned lbs;
};

int  fx_setup(struct fx *f, const struct fx_opts *o);
void fx_teardown(struct fx *f);

/* Submit one NVMe passthrough command and wait; returns cqe.res, result in *res2. */
int fx_nvme(struct fx *f, int fd, uint32_t cmd_op, const struct nvme_uring_cmd *cmd,
	    uint64_t *res2);
/* Same with uring_cmd_flags (IORING_URING_CMD_FIXED) and buf_index */
int fx_nvme_ex(struct fx *f, int fd, uint32_t cmd_op, const struct nvme_uring_cmd *cmd,
	       unsigned uring_cmd_flags, unsigned buf_index, uint64_t *res2);

/* Read/Write command helpers (nlb is 1-based) */
void fx_rw_cmd(struct nvme_uring_cmd *c, uint8_t opcode, uint32_t nsid, uint64_t slba,
	       uint32_t nlb, void *buf, uint32_t len);
void fx_fill(void *buf, size_t len, unsigned seed);
void *fx_alloc(size_t len);

#endif
