/* SPDX-License-Identifier: MIT */
/*
 * The bench runner. It is handed a target (an engine and the names of a
 * namespace's devices) and never creates devices itself, so the same job
 * runs on the CLI's file-backed session, on a RAM controller of its own
 * (rig.h) or on a kernel backend that provides rings for real /dev/ngXnY.
 */
#ifndef UCMD_BENCH_JOB_H
#define UCMD_BENCH_JOB_H

#include <stdint.h>

#include "hist.h"
#include "opts.h"
#include "ucmd/ucmd.h"

struct bench_target {
	struct ucmd_engine *engine;
	char ng[64];		/* generic namespace device: passthru and sync paths */
	char bdev[72];		/* block device: block path ("/dev/nvme" + ng name) */
	uint32_t nsid;
	uint32_t lba_size;
	uint64_t nsze;		/* logical blocks */
	/* Ring setup; NULL: ucmd_queue_init_engine(engine, ...). */
	int (*ring_init)(void *arg, unsigned entries, struct ucmd_ring *ring,
			 struct io_uring_params *p);
	void *ring_arg;
};

enum { DIR_READ, DIR_WRITE, NR_DIRS };

struct bench_dir_result {
	uint64_t ios, bytes;
	struct hist slat;	/* prepare → submit call returned (ns) */
	struct hist clat;	/* submit call returned → CQE reaped; sync: the whole call */
};

struct bench_result {
	double elapsed;		/* seconds, first start to last finish */
	struct bench_dir_result dir[NR_DIRS];
	uint64_t verify_checked, verify_errors;
	uint64_t io_errors;	/* CQEs with res != expected */
	int first_error;	/* the first bad res seen (NVMe status or -errno) */
	int error;		/* setup failure (-errno), with the reason below */
	char errmsg[160];
	/* --path block: the disk's statistics over the main phase, as fio's */
	bool have_disk;
	struct ucmd_disk_stat disk;
};

/* Allocates *out (free() it); returns 0 or r->error. */
int bench_run(const struct bench_opts *o, const struct bench_target *t,
	      struct bench_result **out);

/*
 * Write every block of [0, size) once (128 KiB passthrough writes): a RAM
 * namespace's unwritten blocks read as a zero-fill, cheaper than a copy, so
 * a read benchmark on a fresh RAM namespace would flatter the stack.
 */
int bench_fill(const struct bench_target *t, uint64_t size);

/* report.c */
void bench_report_text(FILE *f, const struct bench_opts *o, const struct bench_target *t,
		       const struct bench_result *r);
struct json_object;
struct json_object *bench_report_json(const struct bench_opts *o, const struct bench_target *t,
				      const struct bench_result *r);
double bench_iops(const struct bench_result *r);	/* both directions */

#endif
