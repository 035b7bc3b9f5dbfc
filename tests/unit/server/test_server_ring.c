/* SPDX-License-Identifier: MIT */
/*
 * ring.c end to end in one process: srv_ring_create, the test maps the
 * memfd as a client would and drives the shared ring by hand (Linux's
 * layout, the control page, the two eventfds): NVMe I/O, link chains,
 * garbage in the ring, a CQ that is not reaped, registration, teardown
 * with requests in flight.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "server/crowd.h"
#include "server/ctl.h"
#include "server/ring_pool.h"
#include "srv_fixture.h"

struct cring {
	struct ucmdd_queue_init_rep rep;
	int id, memfd, sq_efd, cq_efd;
	char *mem;
	unsigned *sq_head, *sq_tail, *sq_flags, *sq_dropped, *sq_array, sq_mask, sq_entries;
	unsigned *cq_head, *cq_tail, *cq_overflow, cq_mask, cq_entries;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	struct ucmdd_ring_ctl *ctl;
	unsigned tail;		/* ours */
	bool big;
};

struct rt {
	struct sfx s;
	struct cring r;
};

static int setup(void **state)
{
	struct rt *t = calloc(1, sizeof(*t));

	sfx_setup(&t->s, NULL);
	*state = t;
	return 0;
}

/* The controller on its own thread: completions reach the proxy from another thread. */
static int setup_thread(void **state)
{
	struct rt *t = calloc(1, sizeof(*t));
	struct fx_opts o = { .mode = UCMD_CTRL_THREAD };

	sfx_setup(&t->s, &o);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct rt *t = *state;

	if (t->r.mem) {
		munmap(t->r.mem, t->r.rep.mmap_size);
		close(t->r.memfd);
		close(t->r.sq_efd);
		close(t->r.cq_efd);
	}
	sfx_teardown(&t->s);
	free(t);
	return 0;
}

/* relay_fd: UCMDD_QI_RELAY's memfd (with that flag), else -1 */
static int cring_open_cr(struct srv_client *c, struct cring *r, unsigned entries,
			 unsigned flags, unsigned sq_thread_idle, unsigned qi_flags, int relay_fd)
{
	struct ucmdd_queue_init req = { .entries = entries, .flags = qi_flags };
	int fds[3];
	const struct io_uring_params *p;

	memset(r, 0, sizeof(*r));
	req.p.flags = flags;
	req.p.sq_thread_idle = sq_thread_idle;
	r->id = srv_ring_create_relay(c, &req, &r->rep, fds, relay_fd);
	if (r->id < 0)
		return r->id;
	r->memfd = fds[0];
	r->sq_efd = fds[1];
	r->cq_efd = fds[2];
	r->mem = mmap(NULL, r->rep.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	assert_true(r->mem != MAP_FAILED);
	p = &r->rep.p;
	r->sq_head = (unsigned *)(r->mem + p->sq_off.head);
	r->sq_tail = (unsigned *)(r->mem + p->sq_off.tail);
	r->sq_flags = (unsigned *)(r->mem + p->sq_off.flags);
	r->sq_dropped = (unsigned *)(r->mem + p->sq_off.dropped);
	r->sq_array = (unsigned *)(r->mem + p->sq_off.array);
	r->sq_mask = *(unsigned *)(r->mem + p->sq_off.ring_mask);
	r->sq_entries = *(unsigned *)(r->mem + p->sq_off.ring_entries);
	r->cq_head = (unsigned *)(r->mem + p->cq_off.head);
	r->cq_tail = (unsigned *)(r->mem + p->cq_off.tail);
	r->cq_overflow = (unsigned *)(r->mem + p->cq_off.overflow);
	r->cq_mask = *(unsigned *)(r->mem + p->cq_off.ring_mask);
	r->cq_entries = *(unsigned *)(r->mem + p->cq_off.ring_entries);
	r->cqes = (struct io_uring_cqe *)(r->mem + p->cq_off.cqes);
	r->sqes = (struct io_uring_sqe *)(r->mem + r->rep.sqes_off);
	r->ctl = (struct ucmdd_ring_ctl *)(r->mem + r->rep.ctl_off);
	r->big = flags & IORING_SETUP_SQE128;
	r->tail = *r->sq_tail;
	return 0;
}

static int cring_open_c(struct srv_client *c, struct cring *r, unsigned entries,
			unsigned flags, unsigned sq_thread_idle, unsigned qi_flags)
{
	return cring_open_cr(c, r, entries, flags, sq_thread_idle, qi_flags, -1);
}

static int cring_open_qi(struct sfx *s, struct cring *r, unsigned entries, unsigned flags,
			 unsigned sq_thread_idle, unsigned qi_flags)
{
	return cring_open_c(&s->c, r, entries, flags, sq_thread_idle, qi_flags);
}

static void cring_close(struct cring *r)
{
	munmap(r->mem, r->rep.mmap_size);
	close(r->memfd);
	close(r->sq_efd);
	close(r->cq_efd);
	memset(r, 0, sizeof(*r));
}

static int cring_open_idle(struct sfx *s, struct cring *r, unsigned entries, unsigned flags,
			   unsigned sq_thread_idle)
{
	return cring_open_qi(s, r, entries, flags, sq_thread_idle, 0);
}

static int cring_open(struct sfx *s, struct cring *r, unsigned entries, unsigned flags)
{
	return cring_open_idle(s, r, entries, flags, 0);
}

static struct io_uring_sqe *sqe_at(struct cring *r, unsigned i)
{
	return &r->sqes[(size_t)(i & r->sq_mask) << (r->big ? 1 : 0)];
}

/* The next SQE, cleared; published by publish(). */
static struct io_uring_sqe *get_sqe(struct cring *r)
{
	struct io_uring_sqe *sqe;

	while (r->tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) >= r->sq_entries)
		usleep(100);
	sqe = sqe_at(r, r->tail);
	memset(sqe, 0, r->big ? 128 : 64);
	r->sq_array[r->tail & r->sq_mask] = r->tail & r->sq_mask;
	r->tail++;
	return sqe;
}

/* Publish and submit everything, as a client's io_uring_enter(to_submit = all) does. */
static void publish(struct cring *r)
{
	uint64_t one = 1;

	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_SEQ_CST);
	__atomic_store_n(&r->ctl->sq_limit, r->tail, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(r->sq_flags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP)
		assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
}

static unsigned cq_ready(struct cring *r)
{
	return __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) - *r->cq_head;
}

/* Wait for a CQE as a client sleeping on the cq eventfd does; a copy of it. */
static struct io_uring_cqe wait_cqe(struct cring *r, uint64_t *big0)
{
	struct pollfd pfd = { .fd = r->cq_efd, .events = POLLIN };
	struct io_uring_cqe c;
	uint64_t v;

	while (!cq_ready(r)) {
		__atomic_store_n(&r->ctl->cq_waiting, 1, __ATOMIC_SEQ_CST);
		if (!cq_ready(r))
			assert_true(poll(&pfd, 1, 10000) == 1);
		__atomic_store_n(&r->ctl->cq_waiting, 0, __ATOMIC_SEQ_CST);
		if (read(r->cq_efd, &v, sizeof(v)) < 0)
			v = 0;
	}
	struct io_uring_cqe *cqe = &r->cqes[(size_t)(*r->cq_head & r->cq_mask) << (r->big ? 1 : 0)];
	c = *cqe;
	if (big0)
		*big0 = r->big ? cqe->big_cqe[0] : 0;
	__atomic_store_n(r->cq_head, *r->cq_head + 1, __ATOMIC_RELEASE);
	return c;
}

static void prep_nvme(struct cring *r, int fd, uint8_t opc, struct sfx *s, uint64_t slba,
		      void *buf, unsigned len, uint64_t ud)
{
	struct io_uring_sqe *sqe = get_sqe(r);
	struct nvme_uring_cmd u;

	fx_rw_cmd(&u, opc, s->fx.nsid, slba, len / s->fx.lbs, buf, len);
	ucmd_prep_nvme_cmd(sqe, fd, NVME_URING_CMD_IO, &u);
	sqe->user_data = ud;
}

static void test_nvme_io(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4 * t->s.fx.lbs;
	char *w[4], *rd[4];
	int fds0 = sfx_nr_fds();

	assert_int_equal(cring_open(&t->s, r, 16, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	assert_int_equal(r->sq_entries, 16);
	assert_int_equal(r->ctl->state, UCMDD_RING_LIVE);
	/* sealed: the client cannot shrink the daemon's mapping */
	assert_true(ftruncate(r->memfd, 4096) < 0);
	for (int i = 0; i < 4; i++) {
		w[i] = fx_alloc(len);
		rd[i] = fx_alloc(len);
		fx_fill(w[i], len, 20 + (unsigned)i);
		prep_nvme(r, t->s.ng, 0x01, &t->s, (uint64_t)i * 4, w[i], len, 100 + (unsigned)i);
	}
	publish(r);
	for (int i = 0; i < 4; i++) {
		struct io_uring_cqe c = wait_cqe(r, NULL);

		assert_int_equal(c.res, 0);
		assert_true(c.user_data >= 100 && c.user_data < 104);
	}
	for (int i = 0; i < 4; i++)
		prep_nvme(r, t->s.ng, 0x02, &t->s, (uint64_t)i * 4, rd[i], len, 200 + (unsigned)i);
	publish(r);
	for (int i = 0; i < 4; i++) {
		uint64_t big = 1;
		struct io_uring_cqe c = wait_cqe(r, &big);

		assert_int_equal(c.res, 0);
		assert_int_equal(big, 0);	/* the NVMe result: DW0 of a read */
	}
	for (int i = 0; i < 4; i++) {
		assert_memory_equal(rd[i], w[i], len);
		free(w[i]);
		free(rd[i]);
	}
	/* CQE_SKIP_SUCCESS: only the failure is posted */
	struct io_uring_sqe *sqe = get_sqe(r);
	ucmd_prep_nop(sqe);
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
	sqe->user_data = 1;
	sqe = get_sqe(r);
	ucmd_prep_fsync(sqe, 50, 0);
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
	sqe->user_data = 2;
	publish(r);
	struct io_uring_cqe c = wait_cqe(r, NULL);
	assert_int_equal(c.user_data, 2);
	assert_int_equal(c.res, -EBADF);

	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r->id), 0);
	assert_int_equal(r->ctl->state, UCMDD_RING_DEAD);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r->id), -EBADF);
	munmap(r->mem, r->rep.mmap_size);
	close(r->memfd);
	close(r->sq_efd);
	close(r->cq_efd);
	r->mem = NULL;
	/* no fd of the ring is left in the daemon */
	assert_int_equal(sfx_nr_fds(), fds0);
}

/*
 * Reads published together come back together: their copies back go out
 * in one process_vm_writev. One buffer the client made read-only fails
 * that copy; only its CQE says -EFAULT, the others' data is there.
 */
/*
 * A ring without SQPOLL: what is published but not submitted (sq_limit)
 * stays in the SQ, as Linux leaves it until io_uring_enter; submitting it
 * takes it, and a limit past the tail takes no more than was published.
 */
static void test_submit_limit(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	uint64_t one = 1;

	assert_int_equal(cring_open(&t->s, r, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	get_sqe(r)->user_data = 1;	/* a NOP each */
	get_sqe(r)->user_data = 2;
	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_SEQ_CST);
	/* published only: a pass or a wake-up takes nothing */
	assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
	usleep(20000);
	assert_int_equal(__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(cq_ready(r), 0);
	/* submit one of the two */
	__atomic_store_n(&r->ctl->sq_limit, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(wait_cqe(r, NULL).user_data, 1);
	usleep(20000);
	assert_int_equal(__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE), 1);
	assert_int_equal(cq_ready(r), 0);
	/* a limit far past the tail: the second, and nothing invented */
	__atomic_store_n(&r->ctl->sq_limit, 1000, __ATOMIC_SEQ_CST);
	assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(wait_cqe(r, NULL).user_data, 2);
	usleep(20000);
	assert_int_equal(__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE), 2);
	assert_int_equal(cq_ready(r), 0);
}

/*
 * UCMDD_QI_SUBMIT_COPY: the memfd holds the program's SQ after the control
 * page (the daemon never reads it), and the ring's SQ is taken as far as
 * its tail, which only the client's submit moves: no sq_limit. Not with
 * SQPOLL (no submit to copy in) or the supervisor's layout.
 */
static void test_submit_copy_ring(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	struct cring bad;
	uint64_t one = 1;

	assert_int_equal(cring_open_qi(&t->s, &bad, 8, IORING_SETUP_SQPOLL, 0,
				       UCMDD_QI_SUBMIT_COPY), -EINVAL);
	assert_int_equal(cring_open_qi(&t->s, &bad, 8, 0, 0,
				       UCMDD_QI_SUBMIT_COPY | UCMDD_QI_SQES_AT_OFF), -EINVAL);
	assert_int_equal(cring_open_qi(&t->s, r, 5, IORING_SETUP_SQE128 | IORING_SETUP_CQE32, 0,
				       UCMDD_QI_SUBMIT_COPY), 0);
	assert_int_equal(r->sq_entries, 8);
	assert_int_equal(r->rep.ctl_off % 4096, 0);
	assert_true(r->rep.ctl_off + ucmdd_psq_len(8, 128) <= r->rep.mmap_size);
	get_sqe(r)->user_data = 1;	/* a NOP */
	get_sqe(r)->user_data = 2;
	/* the tail alone submits (sq_limit stays 0) */
	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(r->sq_flags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP)
		assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(wait_cqe(r, NULL).user_data, 1);
	assert_int_equal(wait_cqe(r, NULL).user_data, 2);
	assert_int_equal(__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE), 2);
	assert_int_equal(r->ctl->sq_limit, 0);
}

/*
 * UCMDD_QI_SUBMIT_COPY on a ring without an SQ array: no array told of,
 * and the words UCMDD_PSQ_NOARRAY_OFF past the ring's SQ head and tail
 * (where the client puts the program's head and tail, proto.h) are none of
 * the layout's, lie before the CQEs (in what such a program maps), and
 * stay as written while the proxy takes SQEs (at tail & mask) round the SQ.
 */
static void test_submit_copy_no_sqarray(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	const struct io_uring_params *p;
	uint64_t one = 1;
	unsigned *w[2];

	assert_int_equal(cring_open_qi(&t->s, r, 8, IORING_SETUP_NO_SQARRAY, 0,
				       UCMDD_QI_SUBMIT_COPY), 0);
	p = &r->rep.p;
	assert_int_equal(p->sq_off.array, 0);
	for (int k = 0; k < 2; k++) {
		uint32_t off = (k ? p->sq_off.tail : p->sq_off.head) + UCMDD_PSQ_NOARRAY_OFF;
		const uint32_t words[] = { p->sq_off.head, p->sq_off.tail, p->sq_off.ring_mask,
					   p->sq_off.ring_entries, p->sq_off.flags,
					   p->sq_off.dropped, p->cq_off.head, p->cq_off.tail,
					   p->cq_off.ring_mask, p->cq_off.ring_entries,
					   p->cq_off.overflow, p->cq_off.flags };

		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			assert_int_not_equal(words[i], off);
		assert_true(off + 4 <= p->cq_off.cqes);
		w[k] = (unsigned *)(r->mem + off);
		*w[k] = 0xdead0000u + (unsigned)k;
	}
	for (unsigned i = 0; i < 3 * r->sq_entries; i++) {
		struct io_uring_sqe *sqe = sqe_at(r, r->tail);

		memset(sqe, 0, sizeof(*sqe));	/* a NOP */
		sqe->user_data = 100 + i;
		r->tail++;
		__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(r->sq_flags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP)
			assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
		assert_int_equal(wait_cqe(r, NULL).user_data, 100 + i);
	}
	assert_int_equal(*w[0], 0xdead0000u);
	assert_int_equal(*w[1], 0xdead0001u);
}

static void test_read_copyback_batch(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4 * t->s.fx.lbs;
	char *w = fx_alloc(len), *rd[4];

	assert_true(len <= 4096);
	assert_int_equal(cring_open(&t->s, r, 16, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	fx_fill(w, len, 77);
	prep_nvme(r, t->s.ng, 0x01, &t->s, 0, w, len, 1);
	publish(r);
	assert_int_equal(wait_cqe(r, NULL).res, 0);
	for (int i = 0; i < 4; i++) {
		rd[i] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(rd[i] != MAP_FAILED);
	}
	assert_int_equal(mprotect(rd[2], 4096, PROT_READ), 0);
	for (int i = 0; i < 4; i++)
		prep_nvme(r, t->s.ng, 0x02, &t->s, 0, rd[i], len, 10 + (unsigned)i);
	publish(r);
	for (int i = 0; i < 4; i++) {
		struct io_uring_cqe c = wait_cqe(r, NULL);

		assert_int_equal(c.res, c.user_data == 12 ? -EFAULT : 0);
	}
	for (int i = 0; i < 4; i++) {
		if (i != 2)
			assert_memory_equal(rd[i], w, len);
		else
			assert_true(memcmp(rd[i], w, len) != 0);
		munmap(rd[i], 4096);
	}
	free(w);
}

/*
 * Reads bounced into one mapping of the client's, taken in one pass: the
 * mapping's protection is asked once for all of their copies, not once
 * per read (each query is a system call).
 */
static void test_copyback_query_per_pass(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4 * t->s.fx.lbs;
	char *w = fx_alloc(len), *rd;
	unsigned long q;

	assert_true(len <= 4096);
	assert_int_equal(cring_open(&t->s, r, 16, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	if (t->s.c.mm.maps_fd < 0)
		skip();	/* Linux before 6.11: nothing is asked */
	fx_fill(w, len, 91);
	prep_nvme(r, t->s.ng, 0x01, &t->s, 0, w, len, 1);
	publish(r);
	assert_int_equal(wait_cqe(r, NULL).res, 0);
	rd = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(rd != MAP_FAILED);
	q = atomic_load(&t->s.c.mm.queries);
	for (unsigned i = 0; i < 8; i++)
		prep_nvme(r, t->s.ng, 0x02, &t->s, 0, rd + i * 4096, len, 10 + i);
	publish(r);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(wait_cqe(r, NULL).res, 0);
	/* one pass takes all eight; a second at most if the proxy looked mid-publish */
	assert_in_range(atomic_load(&t->s.c.mm.queries) - q, 1, 2);
	for (unsigned i = 0; i < 8; i++)
		assert_memory_equal(rd + i * 4096, w, len);
	munmap(rd, 8 * 4096);
	free(w);
}

static void test_chain_failure(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	struct io_uring_sqe *sqe;
	int want[3] = { -ECANCELED, -EBADF, -ECANCELED };

	assert_int_equal(cring_open(&t->s, r, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	sqe = get_sqe(r);
	ucmd_prep_nop(sqe);
	sqe->flags = IOSQE_IO_LINK;
	sqe->user_data = 0;
	sqe = get_sqe(r);
	ucmd_prep_fsync(sqe, 33, 0);		/* not the client's */
	sqe->flags = IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = get_sqe(r);
	ucmd_prep_nop(sqe);
	sqe->user_data = 2;
	/* and a chain that works after it */
	sqe = get_sqe(r);
	ucmd_prep_nop(sqe);
	sqe->flags = IOSQE_IO_LINK;
	sqe->user_data = 3;
	sqe = get_sqe(r);
	ucmd_prep_fsync(sqe, t->s.bdev, 0);
	sqe->user_data = 4;
	publish(r);
	for (int i = 0; i < 5; i++) {
		struct io_uring_cqe c = wait_cqe(r, NULL);

		if (c.user_data < 3)
			assert_int_equal(c.res, want[c.user_data]);
		else
			assert_int_equal(c.res, 0);
	}
}

/* Garbage in the shared ring costs the client only: dropped SQEs, no crash. */
static void test_garbage(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r, r2;
	struct io_uring_sqe *sqe;
	unsigned n = 0;

	assert_int_equal(cring_open(&t->s, r, 8, 0), 0);
	/* an SQ array entry outside the SQE array */
	sqe = get_sqe(r);
	ucmd_prep_nop(sqe);
	r->sq_array[(r->tail - 1) & r->sq_mask] = 9999;
	sqe = get_sqe(r);
	ucmd_prep_nop(sqe);
	sqe->user_data = 5;
	/* and the daemon's own SQ head scribbled over */
	__atomic_store_n(r->sq_head, 777, __ATOMIC_RELAXED);
	publish(r);
	struct io_uring_cqe c = wait_cqe(r, NULL);
	assert_int_equal(c.user_data, 5);
	assert_int_equal(__atomic_load_n(r->sq_dropped, __ATOMIC_ACQUIRE), 1);
	/* the daemon keeps its own head and tail: they are back */
	while (__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) != r->tail)
		usleep(100);

	/* a tail three rings ahead: zeroed SQEs are NOPs, taken a ring's worth at a time */
	for (unsigned i = 0; i < r->sq_entries; i++) {
		memset(sqe_at(r, i), 0, 64);
		r->sq_array[i] = i;
	}
	r->tail += 3 * r->sq_entries;
	publish(r);
	while (n < 3 * r->sq_entries) {
		c = wait_cqe(r, NULL);
		assert_int_equal(c.res, 0);
		n++;
	}
	/* a tail that went backwards: 4 billion SQEs ahead; the ring is the client's to wreck */
	r->tail -= 2;
	publish(r);
	/* other rings of the client go on */
	assert_int_equal(cring_open(&t->s, &r2, 4, 0), 0);
	sqe = get_sqe(&r2);
	ucmd_prep_nop(sqe);
	sqe->user_data = 9;
	publish(&r2);
	c = wait_cqe(&r2, NULL);
	assert_int_equal(c.user_data, 9);
	/* and the wrecked one stops when told */
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r->id), 0);
	assert_int_equal(r->ctl->state, UCMDD_RING_DEAD);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r2.id), 0);
	munmap(r2.mem, r2.rep.mmap_size);
	close(r2.memfd);
	close(r2.sq_efd);
	close(r2.cq_efd);
}

/* A CQ nobody reaps: overflow, then no more SQEs taken; all delivered once reaped. */
static void test_overflow_backpressure(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	unsigned total, head;

	assert_int_equal(cring_open(&t->s, r, 4, 0), 0);
	assert_int_equal(r->cq_entries, 8);
	/* one at a time until a CQE finds the CQ full */
	for (total = 0; !(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW);
	     total++) {
		struct io_uring_sqe *sqe = get_sqe(r);

		ucmd_prep_nop(sqe);
		sqe->user_data = total;
		publish(r);
		while (__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) != r->tail ||
		       (cq_ready(r) < r->cq_entries && cq_ready(r) != total + 1))
			usleep(100);
		if (total + 1 > r->cq_entries)
			while (!(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) &
				 IORING_SQ_CQ_OVERFLOW))
				usleep(100);
	}
	assert_int_equal(total, r->cq_entries + 1);
	/* backpressure: what comes now waits in the SQ */
	for (unsigned i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = get_sqe(r);

		ucmd_prep_nop(sqe);
		sqe->user_data = total + i;
	}
	publish(r);
	usleep(20000);
	head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
	assert_int_equal(r->tail - head, 4);
	assert_int_equal(cq_ready(r), 8);
	total += 4;
	/* reaping brings everything, in order, nothing lost */
	for (unsigned i = 0; i < total; i++) {
		struct io_uring_cqe c = wait_cqe(r, NULL);

		assert_int_equal(c.user_data, i);
		assert_int_equal(c.res, 0);
	}
	assert_int_equal(*r->cq_overflow, 0);
	assert_false(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW);
}

static int reg(struct sfx *s, struct cring *r, uint32_t op, const void *arg, unsigned nr,
	       int fd_in, void **payload, size_t *plen)
{
	struct ucmdd_register req = { .ring_id = (uint32_t)r->id, .opcode = op,
				      .arg = (uint64_t)(uintptr_t)arg, .nr = nr };
	void *p = NULL;
	size_t l = 0;
	int ret = srv_ring_register(&s->c, &req, fd_in, payload ? payload : &p,
				    plen ? plen : &l);

	if (!payload)
		free(p);
	return ret;
}

static void test_register(void **state)
{
	struct rt *t = *state;
	struct sfx *s = &t->s;
	struct cring *r = &t->r;
	unsigned lbs = s->fx.lbs;
	char *buf = fx_alloc(8 * lbs), *rd = fx_alloc(lbs);
	struct iovec iov = { buf, 8 * lbs };
	int files[3] = { -1, s->ng, s->null };
	int bad[1] = { 40 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe c;
	struct nvme_uring_cmd u;
	void *payload = NULL;
	size_t plen = 0;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint64_t v = 0;

	assert_int_equal(cring_open(s, r, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	assert_int_equal(reg(s, r, IORING_REGISTER_FILES, bad, 1, -1, NULL, NULL), -EBADF);
	assert_int_equal(reg(s, r, IORING_REGISTER_FILES, (void *)0x1000, 1, -1, NULL, NULL),
			 -EFAULT);
	assert_int_equal(reg(s, r, IORING_REGISTER_FILES, files, 3, -1, NULL, NULL), 0);
	assert_int_equal(reg(s, r, IORING_REGISTER_FILES, files, 3, -1, NULL, NULL), -EBUSY);
	assert_int_equal(reg(s, r, IORING_REGISTER_BUFFERS, &iov, 1, -1, NULL, NULL), 0);
	assert_int_equal(reg(s, r, IORING_REGISTER_EVENTFD, NULL, 1, s->c.sock, NULL, NULL),
			 -EBADF);
	assert_int_equal(reg(s, r, IORING_REGISTER_EVENTFD, NULL, 1, r->memfd, NULL, NULL),
			 -EINVAL);
	assert_int_equal(reg(s, r, IORING_REGISTER_EVENTFD, NULL, 1, efd, NULL, NULL), 0);

	/* fixed file 1, fixed buffer 0: a write from the buffer, a read into rd */
	fx_fill(buf, 8 * lbs, 4);
	fx_rw_cmd(&u, 0x01, s->fx.nsid, 300, 1, buf + 2 * lbs, lbs);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, 1, NVME_URING_CMD_IO, &u);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->user_data = 1;
	publish(r);
	c = wait_cqe(r, NULL);
	assert_int_equal(c.res, 0);
	/* signalled right after the CQ tail moved */
	assert_int_equal(poll(&(struct pollfd){ .fd = efd, .events = POLLIN }, 1, 10000), 1);
	assert_true(read(efd, &v, sizeof(v)) == sizeof(v) && v >= 1);
	fx_rw_cmd(&u, 0x02, s->fx.nsid, 300, 1, rd, lbs);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, 1, NVME_URING_CMD_IO, &u);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = 2;
	publish(r);
	c = wait_cqe(r, NULL);
	assert_int_equal(c.res, 0);
	assert_memory_equal(rd, buf + 2 * lbs, lbs);
	/* an empty fixed slot */
	sqe = get_sqe(r);
	ucmd_prep_fsync(sqe, 0, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = 3;
	publish(r);
	c = wait_cqe(r, NULL);
	assert_int_equal(c.res, -EBADF);
	/* update slot 0 to nvme0n1 */
	struct io_uring_files_update up = { .offset = 0, .fds = (uint64_t)(uintptr_t)&s->bdev };
	assert_int_equal(reg(s, r, IORING_REGISTER_FILES_UPDATE, &up, 1, -1, NULL, NULL), 1);
	sqe = get_sqe(r);
	ucmd_prep_fsync(sqe, 0, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = 4;
	publish(r);
	c = wait_cqe(r, NULL);
	assert_int_equal(c.res, 0);

	/* probe: what the engine runs */
	assert_int_equal(reg(s, r, IORING_REGISTER_PROBE, NULL, 256, -1, &payload, &plen), 0);
	assert_int_equal(plen, sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op));
	assert_true(ucmd_opcode_supported(payload, IORING_OP_URING_CMD));
	assert_false(ucmd_opcode_supported(payload, IORING_OP_SENDMSG));
	free(payload);
	int id = reg(s, r, IORING_REGISTER_PERSONALITY, NULL, 0, -1, NULL, NULL);
	assert_true(id > 0);
	assert_int_equal(reg(s, r, IORING_UNREGISTER_PERSONALITY, NULL, (unsigned)id, -1, NULL,
			     NULL), 0);
	assert_int_equal(reg(s, r, IORING_REGISTER_RING_FDS, NULL, 1, -1, NULL, NULL), -EINVAL);
	assert_int_equal(reg(s, r, 200, NULL, 0, -1, NULL, NULL), -EINVAL);
	assert_int_equal(reg(s, r, IORING_UNREGISTER_BUFFERS, NULL, 0, -1, NULL, NULL), 0);
	assert_int_equal(reg(s, r, IORING_UNREGISTER_BUFFERS, NULL, 0, -1, NULL, NULL), -ENXIO);
	assert_int_equal(reg(s, r, IORING_UNREGISTER_FILES, NULL, 0, -1, NULL, NULL), 0);
	assert_int_equal(reg(s, r, IORING_UNREGISTER_EVENTFD, NULL, 0, -1, NULL, NULL), 0);
	assert_int_equal(reg(s, r, IORING_UNREGISTER_EVENTFD, NULL, 0, -1, NULL, NULL), -ENXIO);
	struct ucmdd_register bogus = { .ring_id = 9 };
	void *p;
	size_t l;
	assert_int_equal(srv_ring_register(&s->c, &bogus, -1, &p, &l), -EBADF);
	close(efd);
	free(buf);
	free(rd);
}

/*
 * A registered file is the file registered (the table holds its own
 * reference), never whatever the client's number names later: a client
 * that registers a namespace, closes the fd and opens the null device at
 * the same number still reads the namespace through the fixed file.
 */
static void test_fixed_file_number_reused(void **state)
{
	struct rt *t = *state;
	struct sfx *s = &t->s;
	struct cring *r = &t->r;
	unsigned lbs = s->fx.lbs;
	char *w = fx_alloc(lbs), *rd = fx_alloc(lbs);
	int cfd = 10, efd, efd2, files[1] = { 10 };
	struct io_uring_sqe *sqe;
	struct nvme_uring_cmd u;

	assert_int_equal(cring_open(s, r, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	efd = ucmd_open(s->fx.e, "ng0n1", O_RDWR);
	assert_true(efd >= 0);
	sfx_install(s, efd, cfd);
	assert_int_equal(reg(s, r, IORING_REGISTER_FILES, files, 1, -1, NULL, NULL), 0);
	assert_int_equal(close_fd(&s->c.files, cfd), 0);
	ucmd_close(s->fx.e, efd);
	efd2 = ucmd_open(s->fx.e, "null", O_RDWR);
	assert_true(efd2 >= 0);
	sfx_install(s, efd2, cfd);
	fx_fill(w, lbs, 21);
	fx_rw_cmd(&u, 0x01, s->fx.nsid, 77, 1, w, lbs);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, 0, NVME_URING_CMD_IO, &u);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = 1;
	publish(r);
	assert_int_equal(wait_cqe(r, NULL).res, 0);
	fx_rw_cmd(&u, 0x02, s->fx.nsid, 77, 1, rd, lbs);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, 0, NVME_URING_CMD_IO, &u);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = 2;
	publish(r);
	assert_int_equal(wait_cqe(r, NULL).res, 0);
	assert_memory_equal(rd, w, lbs);
	assert_int_equal(reg(s, r, IORING_UNREGISTER_FILES, NULL, 0, -1, NULL, NULL), 0);
	assert_int_equal(close_fd(&s->c.files, cfd), 0);
	ucmd_close(s->fx.e, efd2);
	free(w);
	free(rd);
}

/* Teardown with requests in flight: cancelled or waited for, posted, ring dead. */
static void test_exit_inflight(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	struct __kernel_timespec ts = { .tv_sec = 30 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe c;

	assert_int_equal(cring_open(&t->s, r, 8, 0), 0);
	sqe = get_sqe(r);
	ucmd_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 77;
	/* a cancel by the client's user_data that finds nothing */
	sqe = get_sqe(r);
	ucmd_prep_cancel64(sqe, 12345, 0);
	sqe->user_data = 78;
	publish(r);
	c = wait_cqe(r, NULL);
	assert_int_equal(c.user_data, 78);
	assert_int_equal(c.res, -ENOENT);
	/* a cancel by user_data that finds the TIMEOUT */
	sqe = get_sqe(r);
	ucmd_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 79;
	sqe = get_sqe(r);
	ucmd_prep_cancel64(sqe, 79, 0);
	sqe->user_data = 80;
	publish(r);
	for (int i = 0; i < 2; i++) {
		c = wait_cqe(r, NULL);
		assert_int_equal(c.res, c.user_data == 79 ? -ECANCELED : 0);
	}
	/* the client goes away with the 30 s TIMEOUT in flight */
	atomic_store(&t->s.c.dead, true);
	srv_rings_destroy_all(&t->s.c);
	assert_int_equal(r->ctl->state, UCMDD_RING_DEAD);
	atomic_store(&t->s.c.dead, false);
}

/* A live client's ring destroyed: what was in flight is posted first. */
static void test_destroy_posts(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	struct __kernel_timespec ts = { .tv_sec = 30 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe c;

	assert_int_equal(cring_open(&t->s, r, 8, 0), 0);
	sqe = get_sqe(r);
	ucmd_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 5;
	publish(r);
	while (__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) != r->tail)
		usleep(100);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r->id), 0);
	assert_int_equal(cq_ready(r), 1);
	c = wait_cqe(r, NULL);
	assert_int_equal(c.user_data, 5);
	assert_int_equal(c.res, -ECANCELED);
}

/*
 * A client asleep on the control page's futex (cq_fwaiting): the worker
 * wakes it after posting (the word bumped, FUTEX_WAKE), and so does the
 * ring's end (-ENOTCONN for the client). A FUTEX_WAIT of 10 s that runs out
 * means nobody woke it.
 */
static void test_cq_futex_wake(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	struct timespec ts = { .tv_sec = 10 };
	uint32_t seq;
	long n;

	assert_int_equal(cring_open(&t->s, r, 8, 0), 0);
	assert_true(r->ctl->features & UCMDD_CTL_CQ_FUTEX);
	__atomic_store_n(&r->ctl->cq_fwaiting, 1, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&r->ctl->cq_futex, __ATOMIC_SEQ_CST);
	ucmd_prep_nop(get_sqe(r));
	publish(r);
	/* woken, or the word moved before the wait began (EAGAIN): never the timeout */
	n = syscall(SYS_futex, &r->ctl->cq_futex, FUTEX_WAIT, seq, &ts, NULL, 0);
	assert_true(n == 0 || errno == EAGAIN);
	assert_int_equal(cq_ready(r), 1);
	assert_int_not_equal(__atomic_load_n(&r->ctl->cq_futex, __ATOMIC_SEQ_CST), seq);
	/* the end: the ring marked dead, then the sleeper woken */
	seq = __atomic_load_n(&r->ctl->cq_futex, __ATOMIC_SEQ_CST);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r->id), 0);
	assert_int_equal(r->ctl->state, UCMDD_RING_DEAD);
	assert_int_not_equal(__atomic_load_n(&r->ctl->cq_futex, __ATOMIC_SEQ_CST), seq);
}

static unsigned long ring_passes(struct sfx *s, struct cring *r)
{
	struct srv_ring *sr = srv_ring_get(&s->c, (uint32_t)r->id);
	unsigned long n;

	pthread_mutex_lock(&sr->lock);
	n = sr->passes;
	pthread_mutex_unlock(&sr->lock);
	return n;
}

/*
 * A polling worker with nothing in flight looks at the SQ tail, not the
 * whole ring: through 50 ms of a SQPOLL ring's 100 ms poll after its last
 * work, a few passes (the one that did the work, the one that found
 * nothing, perhaps the look before a sleep), never one per loop. The next
 * SQE is still taken without a doorbell.
 */
static void test_poll_looks_at_tail(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	unsigned long p0, p1;

	assert_int_equal(cring_open_idle(&t->s, r, 8, IORING_SETUP_SQPOLL, 100), 0);
	ucmd_prep_nop(get_sqe(r));
	publish(r);
	(void)wait_cqe(r, NULL);
	p0 = ring_passes(&t->s, r);
	usleep(50000);
	p1 = ring_passes(&t->s, r);
	assert_true(p1 - p0 <= 8);
	/* still seen: the tail the worker watches (or a doorbell, if it slept) */
	ucmd_prep_nop(get_sqe(r));
	publish(r);
	(void)wait_cqe(r, NULL);
	assert_true(ring_passes(&t->s, r) > p1);
}

static bool need_wakeup(struct cring *r);

/*
 * Without SQPOLL, the engine takes SQEs only up to the client's submit
 * (sq_limit): SQEs published (the tail stored) but not submitted give a
 * polling worker nothing to do, and it does not pass over the ring for
 * them. 100 times: a NOP submitted and reaped (the worker then polls for
 * SRV_BUSY_POLL_US), another only published, 2 ms counted, then
 * submitted. Per window, the pass after the work and the look before the
 * sleep; not one pass per loop of the poll (the machine is told it is not
 * crowded, so the worker polls rather than yields). Each NOP still
 * completes once submitted.
 */
static void test_poll_looks_at_limit(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	unsigned long passes = 0;
	uint64_t one = 1;

	atomic_store(&srv_crowd_test_running, 1);
	assert_int_equal(cring_open(&t->s, r, 8, 0), 0);
	for (int i = 0; i < 100; i++) {
		unsigned long p0;

		ucmd_prep_nop(get_sqe(r));
		publish(r);
		(void)wait_cqe(r, NULL);
		ucmd_prep_nop(get_sqe(r));
		__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_SEQ_CST);	/* published only */
		p0 = ring_passes(&t->s, r);
		usleep(2000);
		passes += ring_passes(&t->s, r) - p0;
		assert_int_equal(cq_ready(r), 0);
		__atomic_store_n(&r->ctl->sq_limit, r->tail, __ATOMIC_SEQ_CST);
		if (need_wakeup(r))
			assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
		(void)wait_cqe(r, NULL);
	}
	print_message("passes over a ring with SQEs published, not submitted: %lu in 100 windows\n",
		      passes);
	assert_true(passes <= 300);
}

static bool need_wakeup(struct cring *r)
{
	return __atomic_load_n(r->sq_flags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP;
}

/*
 * Publish a NOP and wait until its CQE is posted, spinning as a running
 * client does (spin) or sleeping between looks; leave it unreaped.
 */
static void nop_posted(struct cring *r, uint64_t ud, bool spin)
{
	get_sqe(r)->user_data = ud;
	publish(r);
	for (unsigned long i = 0; !cq_ready(r); i++) {
		if (spin) {
			assert_true(i < 10000000000ul);
			continue;
		}
		assert_true(i < 100000);	/* 10 s */
		usleep(100);
	}
}

#define MAX_TIDS 256

/* This process's threads, sorted as /proc lists them; how many. */
static unsigned list_tids(pid_t *tids)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) && n < MAX_TIDS)
		if (e->d_name[0] != '.')
			tids[n++] = (pid_t)atoi(e->d_name);
	closedir(d);
	return n;
}

/* The voluntary context switches of the threads in tids (each a sleep). */
static long nvcsw(const pid_t *tids, unsigned n)
{
	long sum = 0;

	for (unsigned i = 0; i < n; i++) {
		char path[64], line[128];
		long v;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tids[i]);
		f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
				sum += v;
		fclose(f);
	}
	return sum;
}

/*
 * An SQPOLL ring's thread polls for sq_thread_idle after its last work, so
 * a client that reaps and submits again needs no wake-up per I/O; but not
 * on while its client leaves CQEs unreaped: that client is off the CPU
 * (fio spinning on its CQ, on the thread's own CPU, is), and a poll that
 * only yields keeps it off. The thread naps instead, giving the CPU away
 * (a voluntary switch each), and takes the next submission. Counted over rounds: a round whose threads are held off the
 * CPU by a busy machine may see neither.
 */
static void test_sqpoll_unreaped_naps(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	pid_t before[MAX_TIDS], after[MAX_TIDS], ring_tids[MAX_TIDS];
	unsigned nb = list_tids(before), na, nr = 0, napped = 0, polled_reaped = 0;

	/* 100 ms: the longest sq_thread_idle the daemon grants */
	assert_int_equal(cring_open_idle(&t->s, r, 8,
					 IORING_SETUP_SQPOLL | IORING_SETUP_SQE128 |
						 IORING_SETUP_CQE32,
					 100),
			 0);
	na = list_tids(after);
	for (unsigned i = 0; i < na; i++) {
		bool old = false;

		for (unsigned j = 0; j < nb; j++)
			old |= after[i] == before[j];
		if (!old)
			ring_tids[nr++] = after[i];
	}
	assert_int_not_equal(nr, 0);
	/*
	 * Until a round has shown each (at most 40): a machine busy enough to
	 * hold the threads off the CPU through one round's 20 ms (TSan, a
	 * loaded CI) rarely does so through many, and a daemon without the
	 * poll or the nap shows neither in any round
	 */
	for (unsigned round = 0; round < 40 && !(napped && polled_reaped); round++) {
		long v0;

		/* reaped at once: the thread keeps polling, no wake-up needed */
		nop_posted(r, 2 * round, true);
		assert_int_equal(wait_cqe(r, NULL).user_data, 2 * round);
		usleep(20000);
		polled_reaped += !need_wakeup(r);
		/* left unreaped: the thread naps, well within sq_thread_idle */
		nop_posted(r, 2 * round + 1, false);
		v0 = nvcsw(ring_tids, nr);
		usleep(20000);
		napped += nvcsw(ring_tids, nr) - v0 >= 10;
		assert_int_equal(wait_cqe(r, NULL).user_data, 2 * round + 1);
		/* and takes the next submission */
		get_sqe(r)->user_data = 100 + round;
		publish(r);
		assert_int_equal(wait_cqe(r, NULL).user_data, 100 + round);
	}
	assert_int_not_equal(napped, 0);
	assert_int_not_equal(polled_reaped, 0);
}

/*
 * A sleeping proxy learns of completions found on other threads (the
 * controller's, the timer's): the engine ring's owner wake-up.
 */
static void test_remote_completion(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	struct __kernel_timespec ts = { .tv_nsec = 5 * 1000 * 1000 };
	unsigned len = t->s.fx.lbs;
	char *w = fx_alloc(8 * len), *rd = fx_alloc(8 * len);
	struct io_uring_sqe *sqe;
	struct io_uring_cqe c;

	assert_int_equal(cring_open(&t->s, r, 16, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	sqe = get_sqe(r);
	ucmd_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 1;
	publish(r);
	c = wait_cqe(r, NULL);
	assert_int_equal(c.res, -ETIME);
	for (int round = 0; round < 20; round++) {
		fx_fill(w, 8 * len, (unsigned)round);
		for (unsigned i = 0; i < 8; i++)
			prep_nvme(r, t->s.ng, 0x01, &t->s, i, w + i * len, len, i);
		publish(r);
		for (unsigned i = 0; i < 8; i++)
			assert_int_equal(wait_cqe(r, NULL).res, 0);
		for (unsigned i = 0; i < 8; i++)
			prep_nvme(r, t->s.ng, 0x02, &t->s, i, rd + i * len, len, i);
		publish(r);
		for (unsigned i = 0; i < 8; i++)
			assert_int_equal(wait_cqe(r, NULL).res, 0);
		assert_memory_equal(rd, w, 8 * len);
		/* let the proxy fall asleep now and then */
		if (round % 4 == 0)
			usleep(5000);
	}
	free(w);
	free(rd);
}

/* A NOP through r and back. */
static void nop_roundtrip(struct cring *r, uint64_t ud)
{
	get_sqe(r)->user_data = ud;
	publish(r);
	assert_int_equal(wait_cqe(r, NULL).user_data, ud);
}

/* Wait up to 5 s for the pool to have started n workers. */
static void wait_workers(struct sfx *s, unsigned n)
{
	for (unsigned i = 0; srv_pool_nr_workers(&s->d) < n; i++) {
		assert_true(i < 5000);
		usleep(1000);
	}
}

/*
 * One worker serves several rings: each gets its SQEs taken and its CQEs
 * posted, with the worker asleep now and then, and no thread per ring.
 */
static void test_pool_one_worker_rings(void **state)
{
	struct rt *t = *state;
	struct cring b;

	t->s.d.pool_workers = 1;
	/*
	 * No spare: a preemption of the worker mid-pass (a loaded machine, a
	 * sanitizer build) longer than the watchdog's 20 ms would start one,
	 * as it should, and this test counts workers.
	 */
	t->s.d.pool_stall_ms = 60000;
	assert_int_equal(cring_open(&t->s, &t->r, 8, 0), 0);
	assert_int_equal(cring_open(&t->s, &b, 8, 0), 0);
	for (unsigned i = 0; i < 200; i++) {
		get_sqe(&t->r)->user_data = i;
		get_sqe(&b)->user_data = 1000 + i;
		publish(&t->r);
		publish(&b);
		assert_int_equal(wait_cqe(&t->r, NULL).user_data, i);
		assert_int_equal(wait_cqe(&b, NULL).user_data, 1000 + i);
		/* let the worker fall asleep now and then */
		if (i % 50 == 0)
			usleep(2000);
	}
	assert_int_equal(srv_pool_nr_workers(&t->s.d), 1);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)b.id), 0);
	cring_close(&b);
	/* the other ring is served on */
	nop_roundtrip(&t->r, 7);
}

/*
 * A pass that blocks (here on the engine ring's lock, held by the test, as
 * a client's memory that does not answer would block it) holds up only its
 * own ring: the watchdog starts a spare worker and the other ring is
 * served; once the pass ends, both are served again. With one worker and
 * no watchdog the other ring would wait as long as the stuck one.
 */
static void test_pool_stuck_pass(void **state)
{
	struct rt *t = *state;
	struct cring b;
	struct srv_ring *sa;

	t->s.d.pool_workers = 1;
	/* long enough that only the held lock, not a preemption, makes a pass stuck */
	t->s.d.pool_stall_ms = 500;
	assert_int_equal(cring_open(&t->s, &t->r, 8, 0), 0);
	assert_int_equal(cring_open(&t->s, &b, 8, 0), 0);
	nop_roundtrip(&t->r, 1);
	nop_roundtrip(&b, 2);
	assert_int_equal(srv_pool_nr_workers(&t->s.d), 1);
	sa = srv_ring_get(&t->s.c, (uint32_t)t->r.id);
	assert_non_null(sa);
	mutex_lock(&sa->ctx->uring_lock);
	get_sqe(&t->r)->user_data = 3;
	publish(&t->r);
	wait_workers(&t->s, 2);
	for (unsigned i = 0; i < 20; i++)
		nop_roundtrip(&b, 100 + i);
	assert_int_equal(cq_ready(&t->r), 0);
	mutex_unlock(&sa->ctx->uring_lock);
	assert_int_equal(wait_cqe(&t->r, NULL).user_data, 3);
	for (unsigned i = 0; i < 20; i++) {
		nop_roundtrip(&t->r, 200 + i);
		nop_roundtrip(&b, 300 + i);
	}
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)b.id), 0);
	cring_close(&b);
}

/*
 * A client killed while its ring, served by the same worker as another
 * client's, has a request in flight: the worker leaves its ring alone, the
 * other client's ring is served on, and the teardown (on the destroying
 * thread) cancels the request, posts its CQE and marks the ring dead.
 */
static void test_pool_client_killed(void **state)
{
	struct rt *t = *state;
	struct __kernel_timespec ts = { .tv_sec = 30 };
	struct srv_client c2;
	struct cring b;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe c;

	t->s.d.pool_workers = 1;
	t->s.d.pool_stall_ms = 60000;	/* no spare for a preempted pass: workers are counted */
	sfx_client_init(&t->s, &c2);
	assert_int_equal(cring_open(&t->s, &t->r, 8, 0), 0);
	assert_int_equal(cring_open_c(&c2, &b, 8, 0, 0, 0), 0);
	sqe = get_sqe(&b);
	ucmd_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 9;
	publish(&b);
	while (__atomic_load_n(b.sq_head, __ATOMIC_ACQUIRE) != b.tail)
		usleep(100);
	nop_roundtrip(&t->r, 1);
	atomic_store(&c2.dead, true);
	for (unsigned i = 0; i < 20; i++)
		nop_roundtrip(&t->r, 10 + i);
	srv_rings_destroy_all(&c2);
	assert_int_equal(__atomic_load_n(&b.ctl->state, __ATOMIC_ACQUIRE), UCMDD_RING_DEAD);
	assert_int_equal(cq_ready(&b), 1);
	c = wait_cqe(&b, NULL);
	assert_int_equal(c.user_data, 9);
	assert_int_equal(c.res, -ECANCELED);
	for (unsigned i = 0; i < 20; i++)
		nop_roundtrip(&t->r, 100 + i);
	assert_int_equal(srv_pool_nr_workers(&t->s.d), 1);
	sfx_client_free(&c2);
	cring_close(&b);
}

/* One CQE of r's, expected with this user_data and res. */
static void expect_cqe(struct cring *r, uint64_t ud, int res)
{
	struct io_uring_cqe c = wait_cqe(r, NULL);

	assert_int_equal(c.user_data, ud);
	assert_int_equal(c.res, res);
}

/*
 * A forked child's relay ring (UCMDD_QI_RELAY, ring_relay.c): when its
 * client dies, what it holds is posted into the ring it serves, named by
 * its memfd: the CQEs it did not reap, a TIMEOUT cancelled then, and an SQE
 * submitted and never taken (the ring held all it may) -ECANCELED; never
 * the client's own (UCMDD_RELAY_OWN_UD). The child's register on that ring
 * (UCMDD_REG_SHARED): the probe and an eventfd, signalled for the ring's
 * CQEs; files EOPNOTSUPP; a memfd no ring has EBADF.
 */
static void test_relay(void **state)
{
	struct rt *t = *state;
	struct __kernel_timespec ts = { .tv_sec = 30 };
	struct ucmdd_register reg = { .flags = UCMDD_REG_SHARED };
	struct pollfd pfd = { .events = POLLIN };
	struct srv_client c2;
	struct cring b;
	struct io_uring_sqe *sqe;
	void *pl;
	size_t len;
	int other;

	sfx_client_init(&t->s, &c2);
	/* both in the daemon's list, as accepted clients are */
	t->s.c.next = &c2;
	c2.next = NULL;
	t->s.d.clients = &t->s.c;
	assert_int_equal(cring_open(&t->s, &t->r, 8, 0), 0);
	other = memfd_create("none", MFD_CLOEXEC);
	assert_true(other >= 0);
	assert_int_equal(cring_open_cr(&c2, &b, 2, 0, 0, UCMDD_QI_RELAY, -1), -EBADF);
	assert_int_equal(cring_open_cr(&c2, &b, 2, 0, 0, UCMDD_QI_RELAY, other), -EBADF);
	assert_int_equal(cring_open_cr(&c2, &b, 2, IORING_SETUP_SQPOLL, 0, UCMDD_QI_RELAY,
				       t->r.memfd), -EINVAL);
	assert_int_equal(cring_open_cr(&c2, &b, 2, 0, 0, UCMDD_QI_RELAY, t->r.memfd), 0);
	/* a NOP completed and not reaped, the client's own, then a TIMEOUT alive */
	get_sqe(&b)->user_data = 10;
	get_sqe(&b)->user_data = UCMDD_RELAY_OWN_UD;
	publish(&b);
	while (cq_ready(&b) != 2)
		usleep(100);
	/* 2 entries: 4 alive at most; the fourth TIMEOUT fills it, the NOP is never taken */
	for (unsigned i = 0; i < 4; i++) {
		sqe = get_sqe(&b);
		ucmd_prep_timeout(sqe, &ts, 0, 0);
		sqe->user_data = 20 + i;
		publish(&b);
		while (__atomic_load_n(b.sq_head, __ATOMIC_ACQUIRE) != b.tail)
			usleep(100);
	}
	get_sqe(&b)->user_data = 30;
	publish(&b);
	assert_int_equal(cq_ready(&t->r), 0);
	atomic_store(&c2.dead, true);
	srv_rings_destroy_all(&c2);
	expect_cqe(&t->r, 10, 0);
	/* the TIMEOUTs in the order the cancel found them */
	for (unsigned i = 0, seen = 0; i < 4; i++) {
		struct io_uring_cqe c = wait_cqe(&t->r, NULL);

		assert_true(c.user_data >= 20 && c.user_data < 24);
		assert_false(seen & (1u << (c.user_data - 20)));
		seen |= 1u << (c.user_data - 20);
		assert_int_equal(c.res, -ECANCELED);
	}
	expect_cqe(&t->r, 30, -ECANCELED);
	assert_int_equal(cq_ready(&t->r), 0);
	cring_close(&b);

	reg.opcode = IORING_REGISTER_PROBE;
	reg.nr = 256;
	assert_int_equal(srv_relay_register(&c2, &reg, t->r.memfd, -1, &pl, &len), 0);
	assert_non_null(pl);
	assert_true(len > sizeof(struct io_uring_probe));
	free(pl);
	assert_int_equal(srv_relay_register(&c2, &reg, other, -1, &pl, &len), -EBADF);
	pfd.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	reg.opcode = IORING_REGISTER_EVENTFD;
	reg.nr = 1;
	assert_int_equal(srv_relay_register(&c2, &reg, t->r.memfd, pfd.fd, &pl, &len), 0);
	nop_roundtrip(&t->r, 40);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	reg.opcode = IORING_UNREGISTER_EVENTFD;
	reg.nr = 0;
	assert_int_equal(srv_relay_register(&c2, &reg, t->r.memfd, -1, &pl, &len), 0);
	reg.opcode = IORING_REGISTER_FILES;
	reg.nr = 1;
	assert_int_equal(srv_relay_register(&c2, &reg, t->r.memfd, -1, &pl, &len), -EOPNOTSUPP);
	close(pfd.fd);
	close(other);
	t->s.d.clients = NULL;
	t->s.c.next = NULL;
	sfx_client_free(&c2);
}

/*
 * test_pool_relook's replay: which worker is which, and where each waits
 * for the test (under m; the workers wait unbounded, the test 10 s).
 */
static struct {
	pthread_mutex_t m;
	pthread_cond_t cv;
	struct srv_ring *ring;
	bool watch, armed;
	pthread_t x, y, seen[2];	/* seen: workers about to poll while watched */
	unsigned nr_seen;
	bool have_x, have_y, y_cleared, y_sleeps;
	bool x_go, y_go, y_go2;
} hk = { .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* A worker's own eventfd emptied: nothing but the rings' eventfds can wake it. */
static void hk_drain(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return;
}

static void hk_pause(bool *go)
{
	pthread_cond_broadcast(&hk.cv);
	while (!*go)
		pthread_cond_wait(&hk.cv, &hk.m);
}

/*
 * Y: the first worker back from poll, held before it counts as awake.
 * X: the other, held in its look before sleeping, in a pass of the ring
 * done, its lock held. Y then goes on, clears NEED_WAKEUP (after X set
 * it) and is held again; then it goes to sleep.
 */
static void hk_hook(enum srv_pool_at at, struct srv_ring *r, int efd)
{
	pthread_t me = pthread_self();

	pthread_mutex_lock(&hk.m);
	if (hk.watch && at == SRV_POOL_AT_SLEEP && hk.nr_seen < 2 &&
	    (!hk.nr_seen || !pthread_equal(me, hk.seen[0]))) {
		hk.seen[hk.nr_seen++] = me;
		pthread_cond_broadcast(&hk.cv);
	}
	if (hk.armed) {
		switch (at) {
		case SRV_POOL_AT_WOKEN:
			if (!hk.have_y) {
				hk.y = me;
				hk.have_y = true;
				hk_pause(&hk.y_go);
			}
			break;
		case SRV_POOL_AT_LOOKED:
			if (hk.have_y && !hk.have_x && r == hk.ring && !pthread_equal(me, hk.y)) {
				hk.x = me;
				hk.have_x = true;
				hk_drain(efd);
				hk_pause(&hk.x_go);
			}
			break;
		case SRV_POOL_AT_AWAKE:
			if (hk.have_y && pthread_equal(me, hk.y) && !hk.y_cleared) {
				hk.y_cleared = true;
				hk_pause(&hk.y_go2);
			}
			break;
		case SRV_POOL_AT_SLEEP:
			if (hk.y_go2 && pthread_equal(me, hk.y) && !hk.y_sleeps) {
				hk_drain(efd);
				hk.y_sleeps = true;
				pthread_cond_broadcast(&hk.cv);
			}
			break;
		}
	}
	pthread_mutex_unlock(&hk.m);
}

/* Wait (10 s at most) until *v is at least n. */
static void hk_wait_n(const unsigned *v, unsigned n)
{
	struct timespec end;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 10;
	pthread_mutex_lock(&hk.m);
	while (*v < n && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&hk.cv, &hk.m, &end);
	pthread_mutex_unlock(&hk.m);
	assert_true(*v >= n);
}

/* Wait (10 s at most) for a worker to reach where *flag says. */
static void hk_wait(const bool *flag)
{
	struct timespec end;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 10;
	pthread_mutex_lock(&hk.m);
	while (!*flag && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&hk.cv, &hk.m, &end);
	pthread_mutex_unlock(&hk.m);
	assert_true(*flag);
}

static void hk_release(bool *go)
{
	pthread_mutex_lock(&hk.m);
	*go = true;
	pthread_cond_broadcast(&hk.cv);
	pthread_mutex_unlock(&hk.m);
}

static int teardown_hook(void **state)
{
	pthread_mutex_lock(&hk.m);
	hk.watch = hk.armed = false;
	hk.x_go = hk.y_go = hk.y_go2 = true;
	pthread_cond_broadcast(&hk.cv);
	pthread_mutex_unlock(&hk.m);
	atomic_store(&srv_pool_test_hook, NULL);
	return teardown(state);
}

static void efd_empty(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) > 0)
		;
}

/*
 * A lost wake-up between two workers going to sleep at once (seen as a
 * CQE that never came in server_bounce under TSan), replayed step by
 * step: X, the last awake, sets NEED_WAKEUP and makes its look before
 * sleeping, a pass of the ring that finds nothing; Y, back from poll
 * late, clears NEED_WAKEUP; the client publishes a NOP, sees no
 * NEED_WAKEUP and rings no doorbell; Y, now the last awake, sets the flag
 * and looks, but finds the ring locked (X's pass) and skips it. Both
 * sleep: nothing takes the NOP. The fix: Y's look asks X to look again
 * after its pass, and X takes the NOP.
 */
static void test_pool_relook(void **state)
{
	struct rt *t = *state;
	struct cring b, c;
	struct srv_ring *sr, *sb, *sc;

	t->s.d.pool_workers = 2;
	t->s.d.pool_stall_ms = 60000;	/* the watchdog wakes no one meanwhile */
	atomic_store(&srv_pool_test_hook, hk_hook);
	assert_int_equal(cring_open(&t->s, &t->r, 8, 0), 0);
	sr = srv_ring_get(&t->s.c, (uint32_t)t->r.id);
	assert_non_null(sr);
	nop_roundtrip(&t->r, 1);
	/*
	 * Both workers about to poll from now on (each checks just before
	 * that its list is current: it holds the ring), so whichever is
	 * woken later clears the ring's NEED_WAKEUP too. A second ring's
	 * list wakes both.
	 */
	pthread_mutex_lock(&hk.m);
	hk.watch = true;
	pthread_mutex_unlock(&hk.m);
	assert_int_equal(cring_open(&t->s, &b, 8, 0), 0);
	sb = srv_ring_get(&t->s.c, (uint32_t)b.id);
	assert_non_null(sb);
	hk_wait_n(&hk.nr_seen, 2);
	pthread_mutex_lock(&hk.m);
	hk.ring = sr;
	hk.armed = true;
	pthread_mutex_unlock(&hk.m);
	/* a third ring: its list wakes every worker again, now to be held */
	assert_int_equal(cring_open(&t->s, &c, 8, 0), 0);
	sc = srv_ring_get(&t->s.c, (uint32_t)c.id);
	assert_non_null(sc);
	hk_wait(&hk.have_y);
	hk_wait(&hk.have_x);
	assert_true(__atomic_load_n(t->r.sq_flags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP);
	hk_release(&hk.y_go);
	hk_wait(&hk.y_cleared);
	assert_false(__atomic_load_n(t->r.sq_flags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP);
	/* no stale count wakes a sleeper: only a doorbell could */
	for (struct srv_ring **p = (struct srv_ring *[]){ sr, sb, sc, NULL }; *p; p++) {
		efd_empty((*p)->sq_efd);
		efd_empty((*p)->owner_efd);
	}
	get_sqe(&t->r)->user_data = 2;
	publish(&t->r);
	hk_release(&hk.y_go2);
	hk_wait(&hk.y_sleeps);
	hk_release(&hk.x_go);
	assert_int_equal(wait_cqe(&t->r, NULL).user_data, 2);
	nop_roundtrip(&b, 3);
	nop_roundtrip(&c, 4);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)b.id), 0);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)c.id), 0);
	cring_close(&b);
	cring_close(&c);
}

/* The runnable count a crowded machine's /proc/loadavg gives, forced; 0 again after. */
static int teardown_crowd(void **state)
{
	atomic_store(&srv_crowd_test_running, 0);
	return teardown(state);
}

static void test_crowd_parse(void **state)
{
	(void)state;
	assert_int_equal(srv_crowd_parse("0.50 0.40 0.30 3/412 12345\n"), 3);
	assert_int_equal(srv_crowd_parse("12.09 3.89 1.46 17/1024 9"), 17);
	assert_int_equal(srv_crowd_parse("0.50 0.40 0.30 x/412 1"), -EINVAL);
	assert_int_equal(srv_crowd_parse("0.50 0.40"), -EINVAL);
	assert_int_equal(srv_crowd_parse(""), -EINVAL);
}

struct busy_client {
	struct cring *r;
	unsigned rounds;
};

/* Four NOPs in flight at a time, so that the ring often has SQEs waiting. */
static void *busy_client_main(void *arg)
{
	struct busy_client *b = arg;

	for (unsigned i = 0; i < b->rounds; i++) {
		for (unsigned k = 0; k < 4; k++)
			get_sqe(b->r)->user_data = 4 * i + k;
		publish(b->r);
		for (unsigned k = 0; k < 4; k++)
			assert_int_equal(wait_cqe(b->r, NULL).user_data, 4 * i + k);
	}
	return NULL;
}

/*
 * On a crowded machine one worker serves two busy clients in turn: a
 * second would take a CPU from a client (two fio jobs on two CPUs were
 * four busy threads). Without the check every round that finds both rings
 * with SQEs waiting and one worker awake woke the other (2,000 rounds of
 * 4 NOPs per client: helper_wakes 8 to 15 in the normal build).
 */
static void test_pool_crowded_one_worker(void **state)
{
	struct rt *t = *state;
	struct cring b;
	struct busy_client ca = { &t->r, 2000 }, cb = { &b, 2000 };
	struct srv_pool_stats st;
	pthread_t ta, tb;

	t->s.d.pool_workers = 2;
	t->s.d.pool_stall_ms = 60000;	/* no spare either */
	atomic_store(&srv_crowd_test_running, 64);
	assert_int_equal(cring_open(&t->s, &t->r, 16, 0), 0);
	assert_int_equal(cring_open(&t->s, &b, 16, 0), 0);
	assert_int_equal(pthread_create(&ta, NULL, busy_client_main, &ca), 0);
	assert_int_equal(pthread_create(&tb, NULL, busy_client_main, &cb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	srv_pool_stats(&t->s.d, &st);
	assert_int_equal(st.helper_wakes, 0);
	assert_int_equal(srv_pool_nr_workers(&t->s.d), 2);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)b.id), 0);
	cring_close(&b);
}

/*
 * On a crowded machine a worker gives up the CPU soon after its client
 * goes quiet: a few looks, each after a sched_yield, then sleep, where it
 * polled SRV_BUSY_POLL_US (hundreds of empty looks) before. The client,
 * idle but connected, is still served after each such sleep: its next
 * SQE rings the doorbell. Counted in looks, not time: without the cut,
 * 200 gaps cost about 55,000 empty looks in the normal build (about 1,000
 * with it).
 */
static void test_pool_crowded_sleeps(void **state)
{
	struct rt *t = *state;
	struct srv_pool_stats st;
	const unsigned gaps = 200;

	t->s.d.pool_workers = 1;
	t->s.d.pool_stall_ms = 60000;
	atomic_store(&srv_crowd_test_running, 64);
	assert_int_equal(cring_open(&t->s, &t->r, 8, 0), 0);
	for (unsigned i = 0; i < gaps; i++) {
		nop_roundtrip(&t->r, i);
		usleep(1000);
	}
	srv_pool_stats(&t->s.d, &st);
	/* at most a few looks after each pass with work and each wake-up, whatever the timing */
	assert_true(st.empty_polls <= 12ul * gaps);
	nop_roundtrip(&t->r, gaps);
}

/*
 * publish() as a client with the bell rings (proto.h, UCMDD_CTL_SQ_BELL):
 * only if it was clear. Whether it wrote the doorbell.
 */
static bool publish_bell(struct cring *r)
{
	uint64_t one = 1;

	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_SEQ_CST);
	__atomic_store_n(&r->ctl->sq_limit, r->tail, __ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(r->sq_flags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP) ||
	    __atomic_exchange_n(&r->ctl->sq_bell, 1, __ATOMIC_SEQ_CST))
		return false;
	assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
	return true;
}

/*
 * The daemon clears the bell after it empties the doorbell it woke for
 * (else a client that rang once would never ring again), and offers it.
 */
static void test_sq_bell_cleared(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;

	t->s.d.pool_workers = 1;
	assert_int_equal(cring_open(&t->s, r, 8, 0), 0);
	assert_true(r->ctl->features & UCMDD_CTL_SQ_BELL);
	nop_roundtrip(r, 1);
	for (unsigned i = 0; !need_wakeup(r); i++) {
		assert_true(i < 100000);	/* 10 s */
		usleep(100);
	}
	get_sqe(r)->user_data = 2;
	/* rings: the bell was clear (and NEED_WAKEUP stays set until a worker wakes) */
	assert_true(publish_bell(r));
	assert_int_equal(wait_cqe(r, NULL).user_data, 2);
	/* the clear follows the drain, which may follow a look that took the NOP */
	for (unsigned i = 0; __atomic_load_n(&r->ctl->sq_bell, __ATOMIC_SEQ_CST); i++) {
		assert_true(i < 100000);	/* 10 s */
		usleep(100);
	}
	/* and the next sleep is rung for again */
	for (unsigned i = 0; !need_wakeup(r); i++) {
		assert_true(i < 100000);
		usleep(100);
	}
	get_sqe(r)->user_data = 3;
	assert_true(publish_bell(r));
	assert_int_equal(wait_cqe(r, NULL).user_data, 3);
}

struct bell_client {
	struct cring *r;
	unsigned rounds;
};

/* One NOP at a time through the bell, a pause now and then so that the workers sleep. */
static void *bell_client_main(void *arg)
{
	struct bell_client *b = arg;

	for (unsigned i = 0; i < b->rounds; i++) {
		get_sqe(b->r)->user_data = i;
		(void)publish_bell(b->r);
		/* a lost wake-up is a CQE that never comes: wait_cqe's 10 s poll fails */
		assert_int_equal(wait_cqe(b->r, NULL).user_data, i);
		if (!(i % 16))
			usleep(200);
	}
	return NULL;
}

/*
 * Two clients that ring only when the bell is clear, on a crowded machine
 * (the workers sleep after a few empty looks), two workers: every NOP is
 * taken, none waits for a wake-up that never comes. A daemon that never
 * clears the bell fails here (the second sleep is never rung for). The
 * order of drain and clear (proto.h) is not replayed: its window is a
 * write between two instructions, and 5 runs with it the wrong way round
 * passed.
 */
static void test_sq_bell_clients(void **state)
{
	struct rt *t = *state;
	struct cring b;
	struct bell_client ca = { &t->r, 3000 }, cb = { &b, 3000 };
	pthread_t ta, tb;

	t->s.d.pool_workers = 2;
	t->s.d.pool_stall_ms = 60000;
	atomic_store(&srv_crowd_test_running, 64);
	assert_int_equal(cring_open(&t->s, &t->r, 16, 0), 0);
	assert_int_equal(cring_open(&t->s, &b, 16, 0), 0);
	assert_int_equal(pthread_create(&ta, NULL, bell_client_main, &ca), 0);
	assert_int_equal(pthread_create(&tb, NULL, bell_client_main, &cb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)b.id), 0);
	cring_close(&b);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Random SQEs, SQ indexes and tails. The client is this process, so the
 * addresses stay inside a scratch area (or are plainly invalid) and the
 * iovecs in it point back into it; the NVMe opcodes are ones that cannot
 * take the namespace away. The daemon must neither crash nor leak
 * (sfx_teardown checks the bounce and shadow counts), and stop cleanly.
 */
static void test_random_garbage(void **state)
{
	struct rt *t = *state;
	struct cring *r = &t->r;
	const size_t scratch_len = 1 << 20;
	char *scratch = fx_alloc(scratch_len);
	struct iovec *cells = (struct iovec *)(void *)scratch;
	const uint8_t nvme_ops[] = { 0x00, 0x01, 0x02, 0x06, 0x02, 0x0a };
	const uint8_t ops[] = { IORING_OP_NOP, IORING_OP_READ, IORING_OP_WRITE, IORING_OP_READV,
				IORING_OP_WRITEV, IORING_OP_READ_FIXED, IORING_OP_FSYNC,
				IORING_OP_TIMEOUT, IORING_OP_LINK_TIMEOUT, IORING_OP_ASYNC_CANCEL,
				IORING_OP_URING_CMD, IORING_OP_URING_CMD, IORING_OP_URING_CMD,
				IORING_OP_SEND, 0xee };
	int fds[] = { t->s.ng, t->s.dev, t->s.bdev, t->s.null, 17, -1 };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int fds0 = sfx_nr_fds();
	static const struct __kernel_timespec short_ts = { .tv_nsec = 1000 * 1000 };

	for (size_t i = 0; i < scratch_len / sizeof(*cells); i++) {
		cells[i].iov_base = scratch + (i * 4096 + 512) % scratch_len;
		cells[i].iov_len = 512;
	}
	assert_int_equal(cring_open(&t->s, r, 32, IORING_SETUP_SQE128 | IORING_SETUP_CQE32), 0);
	for (int round = 0; round < 300; round++) {
		unsigned n = (unsigned)(rnd(&x) % 8) + 1;

		for (unsigned i = 0; i < n; i++) {
			struct io_uring_sqe *sqe;
			struct nvme_uring_cmd *u;

			/* a full SQ waits on a backed-up CQ: reap it all then */
			publish(r);
			while (r->tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) >= r->sq_entries) {
				__atomic_store_n(r->cq_head, __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE),
						 __ATOMIC_RELEASE);
				usleep(100);
			}
			sqe = get_sqe(r);
			u = (struct nvme_uring_cmd *)(void *)sqe->cmd;
			uint64_t v = rnd(&x);
			uint64_t addr = (v & 7) == 0 ? 0x1000 : (v & 7) == 1 ? UCMD_TASK_SIZE - 64
				     : (uint64_t)(uintptr_t)(scratch + (rnd(&x) % (scratch_len / 2)));

			sqe->opcode = ops[rnd(&x) % sizeof(ops)];
			sqe->flags = (uint8_t)(rnd(&x) % 4 == 0 ? rnd(&x) & 0x7f : 0);
			sqe->fd = fds[rnd(&x) % 6];
			sqe->addr = addr;
			sqe->len = (uint32_t)(rnd(&x) % 3 == 0 ? rnd(&x) % 8 : rnd(&x) % 65536);
			sqe->off = rnd(&x) % (1 << 20);
			sqe->user_data = rnd(&x);
			/*
			 * Timeouts short: a ring holds at most 2 x entries requests,
			 * and endless ones would (rightly) keep it full for good.
			 */
			if ((sqe->opcode == IORING_OP_TIMEOUT ||
			     sqe->opcode == IORING_OP_LINK_TIMEOUT) && addr > 0x1000 &&
			    addr < UCMD_TASK_SIZE - 64)
				sqe->addr = (uint64_t)(uintptr_t)&short_ts;
			if (sqe->opcode == IORING_OP_URING_CMD) {
				sqe->cmd_op = (uint32_t)(rnd(&x) % 5 == 0 ? rnd(&x)
					      : 0xC0484E80u + (rnd(&x) % 4));
				sqe->cmd_op = (uint32_t)(rnd(&x) % 2 ? NVME_URING_CMD_IO
					      : rnd(&x) % 2 ? NVME_URING_CMD_IO_VEC
					      : rnd(&x) % 2 ? NVME_URING_CMD_ADMIN : sqe->cmd_op);
				u->opcode = nvme_ops[rnd(&x) % sizeof(nvme_ops)];
				u->nsid = rnd(&x) % 4 ? t->s.fx.nsid : (uint32_t)rnd(&x);
				u->addr = addr;
				u->data_len = (uint32_t)(rnd(&x) % 2 ? rnd(&x) % 8 : rnd(&x) % 65536);
				u->metadata = rnd(&x) % 4 ? 0 : addr + 4096;
				u->metadata_len = (uint32_t)(rnd(&x) % 64);
				u->cdw10 = (uint32_t)(rnd(&x) % 64);
				u->cdw12 = (uint32_t)(rnd(&x) % 8);
				sqe->uring_cmd_flags = rnd(&x) % 8 == 0 ? 1 : 0;
			}
			if (rnd(&x) % 16 == 0)
				r->sq_array[(r->tail - 1) & r->sq_mask] = (unsigned)rnd(&x);
		}
		publish(r);
		/* reap what is there, never waiting: a client that does not keep up */
		while (cq_ready(r) && rnd(&x) % 4)
			__atomic_store_n(r->cq_head, *r->cq_head + 1, __ATOMIC_RELEASE);
		if (round % 50 == 49) {
			/* the tail moved by the client to anywhere */
			r->tail += (unsigned)rnd(&x) % (4 * r->sq_entries);
			publish(r);
		}
	}
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r->id), 0);
	assert_int_equal(r->ctl->state, UCMDD_RING_DEAD);
	munmap(r->mem, r->rep.mmap_size);
	close(r->memfd);
	close(r->sq_efd);
	close(r->cq_efd);
	r->mem = NULL;
	assert_int_equal(sfx_nr_fds(), fds0);
	free(scratch);
}

static void test_setup_errors(void **state)
{
	struct rt *t = *state;
	struct cring r;

	assert_int_equal(cring_open(&t->s, &r, 0, 0), -EINVAL);
	assert_int_equal(cring_open(&t->s, &r, SRV_MAX_ENTRIES + 1, 0), -EINVAL);
	assert_int_equal(cring_open(&t->s, &r, 8, 1u << 30), -EINVAL);
	assert_int_equal(cring_open(&t->s, &r, 8, IORING_SETUP_SQ_AFF), -EINVAL);
	assert_int_equal(cring_open(&t->s, &r, SRV_MAX_ENTRIES + 1, IORING_SETUP_CLAMP), 0);
	assert_int_equal(r.sq_entries, SRV_MAX_ENTRIES);
	munmap(r.mem, r.rep.mmap_size);
	close(r.memfd);
	close(r.sq_efd);
	close(r.cq_efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nvme_io, setup, teardown),
		cmocka_unit_test_setup_teardown(test_submit_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_submit_copy_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_submit_copy_no_sqarray, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sqpoll_unreaped_naps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_copyback_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copyback_query_per_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overflow_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fixed_file_number_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_inflight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_posts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cq_futex_wake, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poll_looks_at_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poll_looks_at_limit, setup, teardown_crowd),
		cmocka_unit_test_setup_teardown(test_remote_completion, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_pool_one_worker_rings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_stuck_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_client_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_relook, setup, teardown_hook),
		cmocka_unit_test_setup_teardown(test_relay, setup, teardown),
		cmocka_unit_test(test_crowd_parse),
		cmocka_unit_test_setup_teardown(test_pool_crowded_one_worker, setup, teardown_crowd),
		cmocka_unit_test_setup_teardown(test_pool_crowded_sleeps, setup, teardown_crowd),
		cmocka_unit_test_setup_teardown(test_sq_bell_cleared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sq_bell_clients, setup, teardown_crowd),
		cmocka_unit_test_setup_teardown(test_random_garbage, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_setup_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
