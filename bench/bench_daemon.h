/* SPDX-License-Identifier: MIT */
/* bench_daemon's pieces: the randread loop every ucmd peer shares, ucmdd's process. */
#ifndef BENCH_DAEMON_H
#define BENCH_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ucmd/ucmd.h"

#include "ucmd/daemon.h"

enum rr_buf {
	RR_MALLOC,	/* page-aligned malloc: the daemon bounces (copies) them */
	RR_ALLOC,	/* ucmd_buf_alloc(): memory the daemon maps, no copy */
	RR_ALLOC_FIXED,	/* the same, registered (IORING_URING_CMD_FIXED) */
};

/*
 * 4 KiB random reads at queue depth qd, submitted and reaped in batches of
 * batch, on the generic namespace device ng of engine e (NVMe Read through
 * NVME_URING_CMD_IO), over the first `size` bytes. One loop for every ucmd
 * peer, in-process or through the daemon, so that only the path differs.
 */
struct rr;
struct rr *rr_new(struct ucmd_engine *e, const char *ng, uint64_t size, unsigned qd,
		  unsigned batch, enum rr_buf buf);
/* Ops done in about `seconds` (or exactly ops when ops != 0); exits on a bad CQE. */
int64_t rr_run(struct rr *r, double seconds, uint64_t ops, double *elapsed);
void rr_free(struct rr *r);

/* ucmdd, started by the bench: a directory on tmpfs, its socket, its pid. */
struct daemon_proc {
	char dir[64];
	char sock[96];
	pid_t pid;
};
/* fork/exec ucmdd --ctrl ctrl_dir --socket dir/ucmdd.sock --foreground; wait for the socket. */
/* ucmdd serving ctrl_dir as nvme0 and a RAM controller of ram_bytes as nvme1. */
int daemon_proc_start(struct daemon_proc *d, const char *ucmdd, const char *ctrl_dir,
		      uint64_t ram_bytes);
/* The same, also exporting both over NVMe/TCP at nvme_tcp (ADDR:PORT; NULL: not). */
int daemon_proc_start_tcp(struct daemon_proc *d, const char *ucmdd, const char *ctrl_dir,
			  uint64_t ram_bytes, const char *nvme_tcp);
/*
 * A new directory /dev/shm/PREFIX.XXXXXX in d->dir (tmpfs: the controllers'
 * files cost no disk), removed at exit, ucmdd stopped first if it still
 * runs: d must outlive main (static). 0 or -errno.
 */
int daemon_proc_dir(struct daemon_proc *d, const char *prefix);
/* ucmdd's RAM controller (nvme1) of size bytes, every block written once. 0 or -errno. */
int daemon_proc_fill_ram(struct ucmd_engine *de, uint64_t size);
/* CPU time (user + system, seconds) the daemon has used so far. */
double daemon_proc_cpu(const struct daemon_proc *d);
/* SIGTERM and wait: its exit status (0 is a clean stop), or -1. */
int daemon_proc_stop(struct daemon_proc *d);

/* The options of a bench that starts ucmdd, beside table.h's. */
struct daemon_opts {
	char ucmdd[PATH_MAX];	/* --ucmdd PATH, else $UCMDD, else ../src/server/ucmdd next to the bench */
	const char *only;	/* --only CASE: that case alone (to profile it); the bench checks it */
};

/* Their getopt_long entries; daemon_opt() handles these values of ch. */
#define DAEMON_LONGOPTS \
	{ "ucmdd", required_argument, NULL, 'u' }, \
	{ "only", required_argument, NULL, 'o' }

/* The default ucmdd: $UCMDD, else the build's (build/bench/X -> build/src/server/ucmdd). */
void daemon_opts_default(struct daemon_opts *o);
/* 1 when ch is one of DAEMON_LONGOPTS (arg taken), 0 when it is not. */
int daemon_opt(struct daemon_opts *o, int ch, const char *arg);

#endif
