/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the engine tests. */
#ifndef RINGUTIL_H
#define RINGUTIL_H

#include "ucmd/ucmd.h"

struct cqe_copy {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
	uint64_t big[2];
};

/* Ring on engine e with flags; asserts success. */
void ring_setup(struct ucmd_engine *e, struct ucmd_ring *ring, unsigned entries, unsigned flags);
/* Reap exactly n CQEs (waiting as needed) into out, in ring order. */
void reap(struct ucmd_ring *ring, struct cqe_copy *out, unsigned n);
/* Submit what is queued, then reap one CQE; returns its res. */
int32_t submit_one(struct ucmd_ring *ring, struct cqe_copy *out);

#endif
