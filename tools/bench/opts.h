/* SPDX-License-Identifier: MIT */
/* `ucmd bench` options: the job description, parsed without side effects. */
#ifndef UCMD_BENCH_OPTS_H
#define UCMD_BENCH_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum bench_rw { RW_READ, RW_WRITE, RW_RANDREAD, RW_RANDWRITE, RW_RANDRW };
enum bench_path {
	PATH_PASSTHRU,	/* NVME_URING_CMD_IO uring_cmd on ngXnY */
	PATH_BLOCK,	/* IORING_OP_READ/WRITE on nvmeXnY */
	PATH_SYNC,	/* NVME_IOCTL_IO64_CMD through ucmd_ioctl(), QD1 per thread */
};
/* Where the device comes from: the CLI's session, or a controller of our own. */
enum bench_target_kind { TARGET_SESSION, TARGET_RAM };
/* trap: thread mode whose doorbell writes trap (see ucmd_ctrl_params.db_trap) */
enum bench_ctrl_mode { CTRL_INLINE, CTRL_THREAD, CTRL_TRAP };

struct bench_opts {
	enum bench_rw rw;
	unsigned rwmixread;		/* percent of reads for randrw */
	uint32_t bs;			/* bytes, a multiple of the LBA size */
	unsigned iodepth;
	unsigned batch_submit;		/* SQEs per submit call */
	unsigned batch_complete;	/* CQEs waited for per reap */
	uint64_t size;			/* bytes of the device the job covers */
	double runtime;			/* seconds; 0: one pass over size */
	uint64_t ops;			/* stop after this many ops per thread; 0: no limit */
	unsigned threads;
	enum bench_path path;
	bool fixedbufs, vectored, iopoll, sqpoll, noplug, verify;
	bool json;
	bool progress;			/* allowed; shown only on a terminal */
	enum bench_target_kind target;
	enum bench_ctrl_mode ctrl_mode;	/* TARGET_RAM only */
	uint32_t lba_size;		/* TARGET_RAM only: 512 or 4096 */
	uint64_t seed;
	/* writes carry this FDP placement identifier (DTYPE 2); -1: none */
	int32_t plid;
};

void bench_opts_default(struct bench_opts *o);
/*
 * Parse argv (argv[0] is the command name; getopt state is reset). Returns
 * 0, 1 when --help was asked (usage already printed), or -EINVAL with a
 * one-line reason in err.
 */
int bench_opts_parse(struct bench_opts *o, int argc, char **argv, char *err, size_t errlen);
void bench_usage(FILE *f);

const char *bench_rw_name(enum bench_rw rw);
const char *bench_path_name(enum bench_path p);

/* Helpers, exported for tests: sizes with k/m/g (binary) suffixes, times with s/ms. */
int bench_parse_size(const char *s, uint64_t *out);
int bench_parse_time(const char *s, double *out);

#endif
