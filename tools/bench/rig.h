/* SPDX-License-Identifier: MIT */
/*
 * A controller of the bench's own: volatile, one RAM namespace, attached
 * through the host driver on a fresh engine. bench/compare uses it, and
 * `ucmd bench --target ram`, so that numbers do not depend on a file store.
 */
#ifndef UCMD_BENCH_RIG_H
#define UCMD_BENCH_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "job.h"

struct bench_rig_params {
	bool thread_mode;	/* UCMD_CTRL_THREAD: a doorbell wakes the controller thread */
	bool db_trap;		/* with thread_mode: a doorbell write waits for the pass in progress */
	uint64_t bytes;		/* namespace size */
	uint32_t lba_size;	/* 512 or 4096 */
	unsigned nr_io_queues, nr_poll_queues;
	unsigned queue_depth;
	bool fdp;		/* FDP in endurance group 1 (default configuration) */
};

struct bench_rig;

int  bench_rig_open(const struct bench_rig_params *p, struct bench_rig **out,
		    struct bench_target *t);
void bench_rig_close(struct bench_rig *r);
/* Controller counters (doorbells, wakeups), for the plugging comparison. */
void bench_rig_stats(struct bench_rig *r, uint64_t *doorbells, uint64_t *wakeups,
		     uint64_t *commands);

#endif
