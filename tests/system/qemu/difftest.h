/* SPDX-License-Identifier: MIT */
/*
 * The differential test: one command sequence, run through ucmd's API on a
 * target (QEMU's NVMe device through the kernel backend, or ucmd's emulated
 * controller), printing one line per step that the other target must match.
 */
#ifndef UCMD_DIFFTEST_H
#define UCMD_DIFFTEST_H

#include <stdint.h>

#include "ucmd/ucmd.h"

/* Both targets: nsid 1 has 512-byte blocks, nsid 2 4096 + 8 separate metadata. */
#define DT_NS1_BLOCKS	131072ull	/* 64 MiB */
#define DT_NS2_BLOCKS	16352ull	/* 64 MiB / (4096 + 8): QEMU keeps metadata in the image */

struct dt_target {
	struct ucmd_engine *e;
	int ctrl_fd;		/* nvme0 */
	int ns_fd[2];		/* ng0n1, ng0n2 */
	uint32_t nsid[2];
	void (*close)(struct dt_target *t);
	void *priv;
};

int dt_open_kernel(struct dt_target *t, const char *ns1, const char *ns2);
/* Only in the full build (emulated controller and host driver). */
int dt_open_emulated(struct dt_target *t);
/* ucmd's host driver over NVMe/TCP: url is nvme-tcp://HOST:PORT/SUBNQN. */
int dt_open_tcp(struct dt_target *t, const char *url);

/* Run the sequence; returns the number of steps that could not run at all. */
int dt_run(struct dt_target *t);

/* ---- shared by the sequence's files ---- */
#include <stdbool.h>
#include <stddef.h>

struct dt {
	struct dt_target *t;
	struct ucmd_ring ring;		/* SQE128 + CQE32, fixed file 0 = ns 1, fixed buffer 0 */
	int failed;			/* steps that could not be submitted */
};

/* Submit one passthrough command on ring; cqe res returned, *dw0 = big_cqe[0]. */
int dt_cmd(struct dt *d, struct ucmd_ring *ring, int fd, uint32_t op, const struct nvme_uring_cmd *c,
	   unsigned sqe_flags, unsigned uring_flags, unsigned buf_index, uint64_t *dw0);
uint32_t dt_sum(const void *p, size_t len);
/* One output line: "name res=R dw0=X" and, when data, " sum=S". */
void dt_line(const char *name, int res, uint64_t dw0, const void *data, size_t len);
void dt_field(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dt_admin(struct dt *d);

#endif /* UCMD_DIFFTEST_H */
