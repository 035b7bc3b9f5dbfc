/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "ringutil.h"

void ring_setup(struct ucmd_engine *e, struct ucmd_ring *ring, unsigned entries, unsigned flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	assert_int_equal(ucmd_queue_init_engine(e, entries, ring, &p), 0);
}

void reap(struct ucmd_ring *ring, struct cqe_copy *out, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		assert_int_equal(ucmd_wait_cqe(ring, &cqe), 0);
		out[i].user_data = cqe->user_data;
		out[i].res = cqe->res;
		out[i].flags = cqe->flags;
		if (ring->flags & IORING_SETUP_CQE32) {
			out[i].big[0] = cqe->big_cqe[0];
			out[i].big[1] = cqe->big_cqe[1];
		} else {
			out[i].big[0] = out[i].big[1] = 0;
		}
		ucmd_cqe_seen(ring, cqe);
	}
}

int32_t submit_one(struct ucmd_ring *ring, struct cqe_copy *out)
{
	assert_true(ucmd_submit(ring) >= 1);
	reap(ring, out, 1);
	return out->res;
}
