/* SPDX-License-Identifier: MIT */
/*
 * race: the snapshot guarantee through shared memory. Run it as a user whom
 * the policy lets read and not write. The region [slba, slba + count) holds
 * the pattern of --seed (written before, by a user who may). The client
 * submits one-block NVMe Reads of that region, each buffer filled with a
 * marker first, while a thread rewrites the NVMe opcode of every SQE slot
 * in the shared SQ array between Read and Write as fast as it can: after
 * the client published the tail, while the daemon copies it, and after.
 * The daemon copies each SQE once; what it judged is what it executes.
 * So every command either reads (res 0: the copy said Read) or is refused
 * (-EACCES: the copy said Write, judged and denied); and no Write may reach
 * the namespace: afterwards every block of the region must still hold the
 * pattern, none the marker (a "flipped write" that executed with the
 * client's buffer) and none anything else (one that executed with a bounce).
 *
 * The racing thread races with the daemon's copy on purpose, as a hostile
 * client does.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dc.h"

#define RACE_ENTRIES 8

struct racer {
	struct ucmd_ring *ring;
	atomic_bool stop;
	unsigned long flips;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	volatile uint8_t *sqes = (volatile uint8_t *)r->ring->sq.sqes;
	unsigned n = *r->ring->sq.kring_entries;
	uint8_t op = NVME_OP_WRITE;

	/* struct nvme_uring_cmd's opcode is the first byte of the SQE's cmd */
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		for (unsigned i = 0; i < n; i++)
			sqes[(size_t)i * 128 + offsetof(struct io_uring_sqe, cmd)] = op;
		op = op == NVME_OP_WRITE ? NVME_OP_READ : NVME_OP_WRITE;
		r->flips++;
	}
	return NULL;
}

int dc_race(const struct dc_opts *o)
{
	struct dc c;
	struct racer r = { 0 };
	pthread_t th;
	uint8_t *bufs[RACE_ENTRIES], *want;
	uint64_t reads = 0, denied = 0, other = 0, marker = 0, corrupt = 0;
	char nb[32];
	int ret, first_other = 0;

	ret = dc_open(&c, o, RACE_ENTRIES);
	if (ret)
		dc_die("race: connecting: %s", dc_res_name(ret, nb, sizeof(nb)));
	if (o->slba + o->count > c.nsze)
		dc_die("race: region past the namespace");
	for (unsigned i = 0; i < RACE_ENTRIES; i++)
		if (!(bufs[i] = dc_buf(&c, c.lba)))
			dc_die("race: out of memory");
	want = malloc(c.lba);
	if (!want)
		dc_die("race: out of memory");

	r.ring = &c.ring;
	if (pthread_create(&th, NULL, race, &r))
		dc_die("race: pthread_create");
	for (uint64_t n = 0; n < o->iters; n++) {
		/* a batch: fill the SQ, then reap all of it */
		unsigned k = 0;
		for (; k < RACE_ENTRIES; k++) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&c.ring);
			if (!sqe)
				break;
			dc_marker(bufs[k], c.lba);
			dc_prep_io(&c, sqe, NVME_OP_READ, o->slba + (n * RACE_ENTRIES + k) % o->count,
				   1, bufs[k]);
			sqe->user_data = k;
		}
		ret = ucmd_submit_and_wait(&c.ring, k);
		if (ret < 0)
			dc_die("race: submit: %s", dc_res_name(ret, nb, sizeof(nb)));
		for (unsigned got = 0; got < k; got++) {
			struct io_uring_cqe *cqe;
			ret = ucmd_wait_cqe(&c.ring, &cqe);
			if (ret < 0)
				dc_die("race: wait: %s", dc_res_name(ret, nb, sizeof(nb)));
			if (cqe->res == 0)
				reads++;
			else if (cqe->res == -EACCES)
				denied++;
			else if (!other++)
				first_other = cqe->res;
			ucmd_cqe_seen(&c.ring, cqe);
		}
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);

	/* the racer is gone: read the region back, block by block */
	for (uint64_t b = 0; b < o->count; b++) {
		uint64_t lba = o->slba + b;
		memset(bufs[0], 0, c.lba);
		dc_prep_io(&c, ucmd_get_sqe(&c.ring), NVME_OP_READ, lba, 1, bufs[0]);
		ret = dc_submit_one(&c);
		if (ret)
			dc_die("race: reading back block %llu: %s", (unsigned long long)lba,
			       dc_res_name(ret, nb, sizeof(nb)));
		dc_pattern(want, c.lba, o->seed, lba);
		if (dc_is_marker(bufs[0], c.lba))
			marker++;
		else if (memcmp(bufs[0], want, c.lba))
			corrupt++;
	}
	printf("race: %llu reads, %llu denied, %llu other (first %s), %lu flips\n",
	       (unsigned long long)reads, (unsigned long long)denied,
	       (unsigned long long)other, dc_res_name(first_other, nb, sizeof(nb)), r.flips);
	printf("corrupted-blocks %llu\n", (unsigned long long)corrupt);
	printf("flipped-writes-executed %llu\n", (unsigned long long)marker);
	free(want);
	for (unsigned i = 0; i < RACE_ENTRIES; i++)
		dc_buf_free(&c, bufs[i]);
	dc_close(&c);
	return marker || corrupt || other ? 1 : 0;
}
