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

/*
 * The zoned and protection information sequences run on a controller of
 * their own (QEMU's serial "ucmdzp"; ucmd's from DIR), six namespaces:
 *   1: zoned, 512-byte blocks, DT_ZONES zones of DT_ZSZE blocks, DT_ZCAP writable
 *   2: 512 + 8,   PI type 1, 16b guard, separate metadata
 *   3: 4096 + 16, PI type 2, 16b guard, extended LBA, PI last
 *   4: 512 + 8,   PI type 3, 16b guard, extended LBA
 *   5: 4096 + 16, PI type 1, 64b guard, separate metadata
 *   6: 512 + 16,  PI type 1, 16b guard, separate metadata, PI first
 * each PI namespace DT_PI_BLOCKS blocks (tests/system/qemu/run.sh --zp).
 */
#define DT_ZP_NS	6
#define DT_ZSZE		2048ull	/* 1 MiB zones */
#define DT_ZCAP		1536ull	/* 768 KiB writable */
#define DT_ZONES	16	/* a 16 MiB image */
#define DT_ZMOR		2	/* zoned.max_open */
#define DT_ZMAR		3	/* zoned.max_active */
#define DT_ZASL		5	/* Zone Append Size Limit: 2^5 4 KiB pages, 256 blocks */
#define DT_PI_BLOCKS	256ull	/* each PI namespace */
#define DT_MAX_NS	DT_ZP_NS

struct dt_target {
	struct ucmd_engine *e;
	int ctrl_fd;		/* nvme0 */
	int ns_fd[DT_MAX_NS];	/* ng0n1, ng0n2, ... */
	uint32_t nsid[DT_MAX_NS];
	int nr_ns;
	void (*close)(struct dt_target *t);
	void *priv;
};

int dt_open_kernel(struct dt_target *t, char *const *paths, int n);
/* Only in the full build (emulated controller and host driver). */
int dt_open_emulated(struct dt_target *t);
/* The zoned + PI controller that tests/system/qemu_kernel.sh made in dir with the CLI. */
int dt_open_emulated_dir(struct dt_target *t, const char *dir, int n);
/* ucmd's host driver over NVMe/TCP: url is nvme-tcp://HOST:PORT/SUBNQN. */
int dt_open_tcp(struct dt_target *t, const char *url);

/* Run the sequence; returns the number of steps that could not run at all. */
int dt_run(struct dt_target *t);
/* The zoned and protection information sequences (on the DT_ZP_NS controller). */
int dt_run_zp(struct dt_target *t);

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
void dt_zns(struct dt *d);
void dt_pi(struct dt *d);
/* An admin command on the controller; its status (or -errno), *dw0 the result. */
int dt_admin_cmd(struct dt *d, uint8_t opcode, uint32_t nsid, uint32_t cdw10, uint32_t cdw11,
		 void *data, uint32_t len, uint64_t *dw0);
/* A read/write-shaped I/O command: slba in CDW10/11, nlb (1-based) in CDW12 bits 15:0. */
struct nvme_uring_cmd dt_rw(uint8_t opcode, uint32_t nsid, uint64_t slba, uint32_t nlb,
			    void *buf, uint32_t len);
/* Run c on ns index i, print "name res= dw0=" (and the sum of out when given). */
int dt_io(struct dt *d, const char *name, int i, struct nvme_uring_cmd c, const void *out,
	  size_t outlen);
void dt_hex(const char *name, const void *p, size_t len);

#endif /* UCMD_DIFFTEST_H */
