/* SPDX-License-Identifier: MIT */
/*
 * A ring's read bounce area (src/server/bounce_area.c, UCMDD_RING_BOUNCE)
 * end to end in one process: the test is the client, maps the ring and the
 * area, and does by hand what the client library does (claim, copy out,
 * done). Reads into plain memory complete in the area and their CQEs wait
 * for the copy; a client that never claims gets its data through its
 * /proc/PID/mem within about a millisecond; a bad buffer is -EFAULT; a
 * full area bounces the old way; a ring destroyed with data unclaimed
 * still delivers it; lies in the shared words hurt only the liar.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "server/bounce_area.h"
#include "server/ctl.h"
#include "srv_fixture.h"

struct cring {
	struct ucmdd_queue_init_rep rep;
	int id, memfd, sq_efd, cq_efd;
	char *mem;
	unsigned *sq_head, *sq_tail, *sq_flags, *sq_array, sq_mask, sq_entries;
	unsigned *cq_head, *cq_tail, cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	struct ucmdd_ring_ctl *ctl;
	unsigned tail;
	/* the bounce area */
	struct ucmdd_bounce_rep brep;
	char *bmem;
	struct ucmdd_bounce_ctl *bctl;
	struct ucmdd_bounce_rec *recs;
	unsigned char *data;
	struct ucmdd_bounce_wrec *wrecs;
	unsigned char *wdata;
};

struct bt {
	struct sfx s;
	struct cring r;
};

/* setup flags the next cring_open adds (IORING_SETUP_*) */
static unsigned cring_flags;

static int setup(void **state)
{
	struct bt *t = calloc(1, sizeof(*t));

	srv_bounce_wait_ns = SRV_BOUNCE_WAIT_NS;
	cring_flags = 0;

	sfx_setup(&t->s, NULL);
	*state = t;
	return 0;
}

static int setup_thread(void **state)
{
	struct bt *t = calloc(1, sizeof(*t));
	struct fx_opts o = { .mode = UCMD_CTRL_THREAD };

	srv_bounce_wait_ns = SRV_BOUNCE_WAIT_NS;
	cring_flags = 0;
	sfx_setup(&t->s, &o);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct bt *t = *state;

	srv_rings_destroy_all(&t->s.c);
	if (t->r.mem) {
		munmap(t->r.mem, t->r.rep.mmap_size);
		close(t->r.memfd);
		close(t->r.sq_efd);
		close(t->r.cq_efd);
	}
	if (t->r.bmem)
		munmap(t->r.bmem, t->r.brep.size);
	sfx_teardown(&t->s);
	free(t);
	return 0;
}

/* A ring of 64 entries (SQE128/CQE32, as NVMe passthrough needs) and its area. */
static void cring_open(struct sfx *s, struct cring *r)
{
	struct ucmdd_queue_init req = { .entries = 64 };
	const struct io_uring_params *p;
	int fds[3], bfd = -1;

	memset(r, 0, sizeof(*r));
	req.p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | cring_flags;
	r->id = srv_ring_create(&s->c, &req, &r->rep, fds);
	assert_true(r->id >= 0);
	r->memfd = fds[0];
	r->sq_efd = fds[1];
	r->cq_efd = fds[2];
	r->mem = mmap(NULL, r->rep.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	assert_true(r->mem != MAP_FAILED);
	p = &r->rep.p;
	r->sq_head = (unsigned *)(r->mem + p->sq_off.head);
	r->sq_tail = (unsigned *)(r->mem + p->sq_off.tail);
	r->sq_flags = (unsigned *)(r->mem + p->sq_off.flags);
	r->sq_array = (unsigned *)(r->mem + p->sq_off.array);
	r->sq_mask = *(unsigned *)(r->mem + p->sq_off.ring_mask);
	r->sq_entries = *(unsigned *)(r->mem + p->sq_off.ring_entries);
	r->cq_head = (unsigned *)(r->mem + p->cq_off.head);
	r->cq_tail = (unsigned *)(r->mem + p->cq_off.tail);
	r->cq_mask = *(unsigned *)(r->mem + p->cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(r->mem + p->cq_off.cqes);
	r->sqes = (struct io_uring_sqe *)(r->mem + r->rep.sqes_off);
	r->ctl = (struct ucmdd_ring_ctl *)(r->mem + r->rep.ctl_off);
	r->tail = *r->sq_tail;

	assert_int_equal(srv_ring_bounce(&s->c, (uint32_t)r->id, &r->brep, &bfd), 0);
	assert_true(bfd >= 0);
	/* sealed: a client cannot shrink it under the daemon's mapping */
	assert_true(ftruncate(bfd, 4096) < 0);
	r->bmem = mmap(NULL, r->brep.size, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
	assert_true(r->bmem != MAP_FAILED);
	close(bfd);
	r->bctl = (struct ucmdd_bounce_ctl *)r->bmem;
	r->recs = (struct ucmdd_bounce_rec *)(r->bmem + r->brep.recs_off);
	r->data = (unsigned char *)r->bmem + r->brep.data_off;
	assert_true(r->brep.nr_wrecs >= 64 && r->brep.wdata_len >= 65536);
	r->wrecs = (struct ucmdd_bounce_wrec *)(r->bmem + r->brep.wrecs_off);
	r->wdata = (unsigned char *)r->bmem + r->brep.wdata_off;
	/* one area per ring */
	assert_int_equal(srv_ring_bounce(&s->c, (uint32_t)r->id, &r->brep, &bfd), -EEXIST);
}

static struct io_uring_sqe *get_sqe(struct cring *r)
{
	struct io_uring_sqe *sqe;

	while (r->tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) >= r->sq_entries)
		usleep(100);
	sqe = &r->sqes[(size_t)(r->tail & r->sq_mask) << 1];
	memset(sqe, 0, 128);
	r->sq_array[r->tail & r->sq_mask] = r->tail & r->sq_mask;
	r->tail++;
	return sqe;
}

static void doorbell(struct cring *r)
{
	uint64_t one = 1;

	if (__atomic_load_n(r->sq_flags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP)
		assert_int_equal(write(r->sq_efd, &one, sizeof(one)), sizeof(one));
}

static void publish(struct cring *r)
{
	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_SEQ_CST);
	__atomic_store_n(&r->ctl->sq_limit, r->tail, __ATOMIC_SEQ_CST);
	doorbell(r);
}

static unsigned cq_ready(struct cring *r)
{
	return __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) - *r->cq_head;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Wait until the daemon published n records in all (bounded). */
static void wait_recs(struct cring *r, unsigned n)
{
	uint64_t end = now_ms() + 10000;

	while (__atomic_load_n(&r->bctl->tail, __ATOMIC_ACQUIRE) < n && now_ms() < end)
		usleep(50);
	assert_true(__atomic_load_n(&r->bctl->tail, __ATOMIC_ACQUIRE) >= n);
}

/* What the client library does on entering: claim, copy out, done, doorbell. */
static unsigned client_copy(struct cring *r)
{
	unsigned claim = __atomic_load_n(&r->bctl->claim, __ATOMIC_ACQUIRE);
	unsigned tail = __atomic_load_n(&r->bctl->tail, __ATOMIC_ACQUIRE);

	if (claim == tail || !__atomic_compare_exchange_n(&r->bctl->claim, &claim, tail, false,
							   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return 0;
	for (unsigned i = claim; i != tail; i++) {
		struct ucmdd_bounce_rec *rec = &r->recs[i & (r->brep.nr_recs - 1)];

		assert_true(rec->off + rec->len <= r->brep.data_len);
		memcpy((void *)(uintptr_t)rec->addr, r->data + rec->off, rec->len);
	}
	__atomic_store_n(&r->bctl->done, tail, __ATOMIC_SEQ_CST);
	doorbell(r);
	return tail - claim;
}

/* The next CQE (bounded wait, copying out meanwhile when copy). */
static struct io_uring_cqe next_cqe(struct cring *r, bool copy)
{
	uint64_t end = now_ms() + 10000;
	struct io_uring_cqe c;

	while (!cq_ready(r) && now_ms() < end) {
		if (copy)
			client_copy(r);
		usleep(20);
	}
	assert_true(cq_ready(r) > 0);
	c = r->cqes[(size_t)(*r->cq_head & r->cq_mask) << 1];
	__atomic_store_n(r->cq_head, *r->cq_head + 1, __ATOMIC_RELEASE);
	return c;
}

static void prep_rw(struct cring *r, struct sfx *s, uint8_t opc, uint64_t slba, void *buf,
		    unsigned len, uint64_t ud)
{
	struct nvme_uring_cmd u;
	struct io_uring_sqe *sqe = get_sqe(r);

	fx_rw_cmd(&u, opc, s->fx.nsid, slba, len / s->fx.lbs, buf, len);
	ucmd_prep_nvme_cmd(sqe, s->ng, NVME_URING_CMD_IO, &u);
	sqe->user_data = ud;
}

static char *pages(size_t n)
{
	char *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* Write len bytes of pattern seed at slba (from plain memory: the old path) */
static char *write_pattern(struct bt *t, uint64_t slba, unsigned len, int seed)
{
	char *w = pages((len + 4095) / 4096);

	fx_fill(w, len, seed);
	prep_rw(&t->r, &t->s, 0x01, slba, w, len, 1);
	publish(&t->r);
	assert_int_equal(next_cqe(&t->r, true).res, 0);
	return w;
}

/*
 * Reads into plain memory: the data waits in the area, the daemon writes
 * nothing into the buffers, and no CQE shows until the client copied.
 */
static void test_fast_path(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, n = 8, recs0;
	char *w, *rd;

	/* however loaded the machine, the daemon does not take them over meanwhile */
	srv_bounce_wait_ns = 60000000000ull;
	cring_open(&t->s, r);
	w = write_pattern(t, 0, len, 41);
	rd = pages(n);
	memset(rd, 0xee, (size_t)n * 4096);
	recs0 = r->bctl->tail;
	for (unsigned i = 0; i < n; i++)
		prep_rw(r, &t->s, 0x02, 0, rd + (size_t)i * 4096, len, 100 + i);
	publish(r);
	wait_recs(r, recs0 + n);
	/* the data is in the area, not yet in the buffers, and no CQE shows */
	usleep(2000);
	assert_int_equal(cq_ready(r), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal((unsigned char)rd[(size_t)i * 4096], 0xee);
	assert_int_equal(client_copy(r), n);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe c = next_cqe(r, true);

		assert_int_equal(c.res, 0);
		assert_in_range(c.user_data, 100, 100 + n - 1);
		assert_memory_equal(rd + (c.user_data - 100) * 4096, w, len);
	}
	munmap(rd, (size_t)n * 4096);
	munmap(w, 4096);
}

/* Until IORING_SQ_TASKRUN is as on (bounded), or fail. */
static void wait_taskrun(struct cring *r, bool on)
{
	uint64_t end = now_ms() + 10000;

	while (!!(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_TASKRUN) != on &&
	       now_ms() < end)
		usleep(50);
	assert_int_equal(!!(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_TASKRUN),
			 on);
}

/*
 * IORING_SETUP_COOP_TASKRUN | TASKRUN_FLAG: while a read's data waits in
 * the area for the client's enter (its CQE hidden until then), the SQ
 * flags say IORING_SQ_TASKRUN, as Linux's do for task work waiting for
 * the task; once copied, the CQE shows and the flag is gone. A ring
 * without TASKRUN_FLAG never has it.
 */
static void test_taskrun_flag(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, recs0;
	char *w, *rd;

	srv_bounce_wait_ns = 60000000000ull;
	cring_flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
	cring_open(&t->s, r);
	w = write_pattern(t, 16, len, 43);
	wait_taskrun(r, false);
	rd = pages(1);
	recs0 = r->bctl->tail;
	prep_rw(r, &t->s, 0x02, 16, rd, len, 300);
	publish(r);
	wait_recs(r, recs0 + 1);
	wait_taskrun(r, true);
	assert_int_equal(cq_ready(r), 0);
	assert_int_equal(client_copy(r), 1);
	assert_int_equal(next_cqe(r, false).user_data, 300);
	assert_memory_equal(rd, w, len);
	wait_taskrun(r, false);
	munmap(rd, 4096);
	munmap(w, 4096);
}

static void test_no_taskrun_flag(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, recs0;
	char *rd;

	srv_bounce_wait_ns = 60000000000ull;
	cring_flags = IORING_SETUP_COOP_TASKRUN;
	cring_open(&t->s, r);
	rd = pages(1);
	recs0 = r->bctl->tail;
	prep_rw(r, &t->s, 0x02, 16, rd, len, 301);
	publish(r);
	wait_recs(r, recs0 + 1);
	usleep(2000);
	assert_false(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_TASKRUN);
	assert_int_equal(client_copy(r), 1);
	assert_int_equal(next_cqe(r, false).user_data, 301);
	munmap(rd, 4096);
}

/* A client that never claims: its data comes through /proc/PID/mem, then the CQEs. */
static void test_fallback_unclaimed(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, n = 4;
	char *w, *rd;

	cring_open(&t->s, r);
	w = write_pattern(t, 8, len, 42);
	rd = pages(n);
	for (unsigned i = 0; i < n; i++)
		prep_rw(r, &t->s, 0x02, 8, rd + (size_t)i * 4096, len, 200 + i);
	publish(r);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe c = next_cqe(r, false);

		assert_int_equal(c.res, 0);
		assert_memory_equal(rd + (c.user_data - 200) * 4096, w, len);
	}
	/* the daemon took them: claim moved without us, done did not */
	assert_int_equal(r->bctl->claim, r->bctl->tail);
	assert_int_not_equal(r->bctl->done, r->bctl->tail);
	munmap(rd, (size_t)n * 4096);
	munmap(w, 4096);
}

/* A buffer the client may not write: -EFAULT as before, never an area record. */
static void test_bad_buffer(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, recs0;
	char *w, *ro, *ok;
	struct io_uring_cqe c[2];

	cring_open(&t->s, r);
	w = write_pattern(t, 16, len, 43);
	ro = pages(1);
	ok = pages(1);
	assert_int_equal(mprotect(ro, 4096, PROT_READ), 0);
	recs0 = r->bctl->tail;
	prep_rw(r, &t->s, 0x02, 16, ro, len, 1);
	prep_rw(r, &t->s, 0x02, 16, ok, len, 2);
	/* unmapped */
	prep_rw(r, &t->s, 0x02, 16, (void *)(uintptr_t)0x1000, len, 3);
	publish(r);
	for (int i = 0; i < 3; i++) {
		struct io_uring_cqe x = next_cqe(r, true);

		if (x.user_data == 2)
			c[1] = x;
		else
			assert_int_equal(x.res, -EFAULT);
	}
	assert_int_equal(c[1].res, 0);
	assert_memory_equal(ok, w, len);
	assert_int_equal(r->bctl->tail - recs0, 1);
	munmap(ro, 4096);
	munmap(ok, 4096);
	munmap(w, 4096);
}

/* A read record (UCMDD_BOUNCE_WREC_READ) for the SQE at pos: the client says buf was writeable. */
static void rrec(struct cring *r, unsigned pos, void *buf, unsigned len, uint64_t ud)
{
	r->wrecs[pos & (r->brep.nr_wrecs - 1)] = (struct ucmdd_bounce_wrec){
		.pos = pos, .len = len, .addr = (uint64_t)(uintptr_t)buf, .user_data = ud,
		.nr = UCMDD_BOUNCE_WREC_READ
	};
}

/*
 * Read records: the client's word that a read's buffer was writeable at
 * submit is taken without asking its mappings. An honest one reads as
 * ever; a lying one (a read-only buffer) bounces in the area, and the
 * liar loses only its own read's data: the daemon's own copy, when the
 * client does not claim it, still asks the mappings and writes nothing.
 * A record that is not this request's (user_data, a range it does not
 * hold) is not taken: the read-only buffer is -EFAULT as before.
 */
static void test_read_records(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, recs0;
	char *w, *ro, *ok;
	struct io_uring_cqe c;

	cring_open(&t->s, r);
	w = write_pattern(t, 20, len, 45);
	ro = pages(1);
	ok = pages(1);
	memset(ro, 0x11, 4096);
	assert_int_equal(mprotect(ro, 4096, PROT_READ), 0);

	rrec(r, r->tail, ok, len, 31);
	prep_rw(r, &t->s, 0x02, 20, ok, len, 31);
	publish(r);
	c = next_cqe(r, true);
	assert_int_equal(c.res, 0);
	assert_memory_equal(ok, w, len);

	/* the lie: never claimed (a copy by hand would fault), the daemon's copy refused */
	recs0 = r->bctl->tail;
	rrec(r, r->tail, ro, len, 32);
	prep_rw(r, &t->s, 0x02, 20, ro, len, 32);
	publish(r);
	c = next_cqe(r, false);
	assert_int_equal(c.user_data, 32);
	assert_int_equal(c.res, 0);
	assert_int_equal(r->bctl->tail - recs0, 1);
	for (unsigned i = 0; i < len; i++)
		assert_int_equal((unsigned char)ro[i], 0x11);

	/* records that are not the request's: asked, refused, -EFAULT, no record */
	recs0 = r->bctl->tail;
	rrec(r, r->tail, ro, len, 34);			/* another user_data */
	prep_rw(r, &t->s, 0x02, 20, ro, len, 33);
	rrec(r, r->tail, ro + 512, len - 512, 35);	/* a range that does not hold the buffer */
	prep_rw(r, &t->s, 0x02, 20, ro, len, 35);
	publish(r);
	for (int i = 0; i < 2; i++)
		assert_int_equal(next_cqe(r, false).res, -EFAULT);
	assert_int_equal(r->bctl->tail, recs0);
	munmap(ro, 4096);
	munmap(ok, 4096);
	munmap(w, 4096);
}

/* A vectored read: each segment its own record, the data in order. */
static void test_vectored(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 8192;
	char *w, *a, *b;
	struct iovec iov[2];
	struct nvme_uring_cmd u;
	struct io_uring_sqe *sqe;

	cring_open(&t->s, r);
	w = write_pattern(t, 32, len, 44);
	a = pages(1);
	b = pages(2);
	/* the second segment starts mid-page: its bounce keeps the offset */
	iov[0] = (struct iovec){ a, 4096 };
	iov[1] = (struct iovec){ b + 512, 4096 };
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 32, len / t->s.fx.lbs, (void *)iov, 2);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, t->s.ng, NVME_URING_CMD_IO_VEC, &u);
	sqe->user_data = 9;
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	assert_memory_equal(a, w, 4096);
	assert_memory_equal(b + 512, w + 4096, 4096);
	munmap(a, 4096);
	munmap(b, 8192);
	munmap(w, len);
}

/*
 * More reads than the area holds, none claimed: the rest bounce the old
 * way; every one gets its data.
 */
static void test_area_full(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 65536, n = 40, recs0;
	char *w, *rd;

	cring_open(&t->s, r);
	w = write_pattern(t, 0, len, 45);
	rd = pages((size_t)n * 16);
	recs0 = r->bctl->tail;
	for (unsigned i = 0; i < n; i++)
		prep_rw(r, &t->s, 0x02, 0, rd + (size_t)i * len, len, 300 + i);
	publish(r);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe c = next_cqe(r, true);

		assert_int_equal(c.res, 0);
		assert_memory_equal(rd + (c.user_data - 300) * len, w, len);
	}
	/* at most SRV_BOUNCE_PAGES / 16 went through the area at once */
	assert_true(r->bctl->tail - recs0 < n);
	munmap(rd, (size_t)n * len);
	munmap(w, len);
}

/* The ring destroyed with data unclaimed: it still reaches the buffers. */
static void test_exit_unclaimed(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, recs0;
	char *w, *rd;

	cring_open(&t->s, r);
	w = write_pattern(t, 40, len, 46);
	rd = pages(1);
	recs0 = r->bctl->tail;
	prep_rw(r, &t->s, 0x02, 40, rd, len, 7);
	publish(r);
	wait_recs(r, recs0 + 1);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r->id), 0);
	assert_memory_equal(rd, w, len);
	assert_int_equal(cq_ready(r), 1);
	munmap(rd, 4096);
	munmap(w, 4096);
}

/*
 * Garbage in the shared words and records: the daemon goes on from its own
 * records. Done far ahead is not believed; the data still reaches the
 * buffers (the daemon takes the records it was not told of). A claim the
 * client moved and never completes stalls only its own CQEs, and the ring
 * still ends.
 */
static void test_lies(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096;
	char *w, *rd;

	cring_open(&t->s, r);
	w = write_pattern(t, 48, len, 47);
	rd = pages(4);
	for (unsigned round = 0; round < 3; round++) {
		memset(rd, 0, 4 * 4096);
		for (unsigned i = 0; i < 4; i++)
			prep_rw(r, &t->s, 0x02, 48, rd + (size_t)i * 4096, len, i);
		publish(r);
		__atomic_store_n(&r->bctl->done, r->bctl->tail + 1000 * (round + 1), __ATOMIC_SEQ_CST);
		memset(r->recs, 0xff, 4096);
		__atomic_store_n(&r->bctl->tail, 0x7fffffffu, __ATOMIC_SEQ_CST);
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(next_cqe(r, false).res, 0);
		for (unsigned i = 0; i < 4; i++)
			assert_memory_equal(rd + (size_t)i * 4096, w, len);
	}
	/* a claim that never completes */
	__atomic_store_n(&r->bctl->claim, 0xdeadbeefu, __ATOMIC_SEQ_CST);
	prep_rw(r, &t->s, 0x02, 48, rd, len, 9);
	publish(r);
	usleep(20000);
	assert_int_equal(cq_ready(r), 0);
	assert_int_equal(srv_ring_destroy(&t->s.c, (uint32_t)r->id), 0);
	assert_int_equal(r->ctl->state, UCMDD_RING_DEAD);
	munmap(rd, 4 * 4096);
	munmap(w, 4096);
}

/*
 * A Write linked behind a Read into the same plain buffer sends what the
 * Read brought, as on Linux, though the client has not copied it out yet.
 */
static void test_linked_read_write(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096;
	char *w, *buf, *back;

	srv_bounce_wait_ns = 60000000000ull;
	cring_open(&t->s, r);
	w = write_pattern(t, 56, len, 48);
	buf = pages(1);
	back = pages(1);
	memset(buf, 0x5a, len);
	prep_rw(r, &t->s, 0x02, 56, buf, len, 1);
	r->sqes[(size_t)((r->tail - 1) & r->sq_mask) << 1].flags |= IOSQE_IO_LINK;
	prep_rw(r, &t->s, 0x01, 64, buf, len, 2);
	publish(r);
	for (int i = 0; i < 2; i++)
		assert_int_equal(next_cqe(r, true).res, 0);
	prep_rw(r, &t->s, 0x02, 64, back, len, 3);
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	assert_memory_equal(back, w, len);
	munmap(buf, 4096);
	munmap(back, 4096);
	munmap(w, 4096);
}

/* Reads that fail: no record, the error in the CQE, the area's pages back. */
static void test_failed_read(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned recs0;
	char *rd;
	struct io_uring_cqe c;

	cring_open(&t->s, r);
	rd = pages(1);
	recs0 = r->bctl->tail;
	/* past the namespace's end: LBA Out of Range */
	prep_rw(r, &t->s, 0x02, (1ull << 40), rd, 4096, 5);
	publish(r);
	c = next_cqe(r, true);
	assert_true(c.res > 0);
	assert_int_equal(r->bctl->tail, recs0);
	/* many more than the area holds would now fail to find room if pages leaked */
	for (unsigned round = 0; round < 4; round++) {
		for (unsigned i = 0; i < 40; i++)
			prep_rw(r, &t->s, 0x02, (1ull << 40), rd, 4096, 6);
		publish(r);
		for (unsigned i = 0; i < 40; i++)
			assert_true(next_cqe(r, true).res > 0);
	}
	assert_int_equal(r->bctl->tail, recs0);
	munmap(rd, 4096);
}

/*
 * A read whose buffer is longer than the blocks it reads: what the device
 * does not write reaches the buffer as zeros, never as what the bounce
 * held before (the area's old data, the daemon's memory), in the area, in
 * a later segment of a vectored read, and in a bounce of the daemon's own.
 */
static void test_unwritten_zeroed(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned lbs = t->s.fx.lbs, big = (SRV_BOUNCE_SEG_PAGES + 1) * 4096;
	size_t zero_len = big;
	char *w, *rd, *a, *b, *zeros = calloc(1, zero_len);
	struct iovec iov[2];
	struct nvme_uring_cmd u;
	struct io_uring_sqe *sqe;
	unsigned recs0;

	assert_non_null(zeros);
	srv_bounce_wait_ns = 60000000000ull;
	cring_open(&t->s, r);
	w = write_pattern(t, 72, big, 49);
	/* old data everywhere in the area */
	memset(r->data, 0xa5, r->brep.data_len);
	rd = pages(2);
	memset(rd, 0xee, 8192);
	recs0 = r->bctl->tail;
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 72, 1, rd, 8192);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, t->s.ng, NVME_URING_CMD_IO, &u);
	sqe->user_data = 1;
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	assert_int_equal(r->bctl->tail - recs0, 1);
	assert_memory_equal(rd, w, lbs);
	assert_memory_equal(rd + lbs, zeros, 8192 - lbs);

	/* vectored: the first segment is the blocks read, the second none of them */
	memset(r->data, 0xa5, r->brep.data_len);
	a = pages(1);
	b = pages(1);
	memset(a, 0xee, 4096);
	memset(b, 0xee, 4096);
	/* the first ends where its page does: the PRPs' rule */
	iov[0] = (struct iovec){ a + 4096 - lbs, lbs };
	iov[1] = (struct iovec){ b, 4096 };
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 72, 1, (void *)iov, 2);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, t->s.ng, NVME_URING_CMD_IO_VEC, &u);
	sqe->user_data = 2;
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	assert_memory_equal(a + 4096 - lbs, w, lbs);
	assert_memory_equal(b, zeros, 4096);

	/*
	 * Too long for the area: the daemon's own bounce, first filled by a
	 * read of all of it, then reused (the allocator hands the freed
	 * buffer back) by one that reads a single block.
	 */
	munmap(rd, 8192);
	rd = pages(big / 4096);
	for (int pass = 0; pass < 2; pass++) {
		memset(rd, 0xee, big);
		fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 72, pass ? 1 : big / lbs, rd, big);
		sqe = get_sqe(r);
		ucmd_prep_nvme_cmd(sqe, t->s.ng, NVME_URING_CMD_IO, &u);
		sqe->user_data = 3;
		publish(r);
		assert_int_equal(next_cqe(r, true).res, 0);
	}
	assert_memory_equal(rd, w, lbs);
	assert_memory_equal(rd + lbs, zeros, big - lbs);
	munmap(rd, big);
	munmap(a, 4096);
	munmap(b, 4096);
	munmap(w, big);
	free(zeros);
}

/*
 * What the client library does when it submits a write from plain memory:
 * the data into the write area at off, the record for the SQE's position,
 * all before the SQE is published.
 */
static void wrec(struct cring *r, unsigned pos, const void *data, void *addr, unsigned len,
		 unsigned off, uint64_t ud)
{
	memcpy(r->wdata + off, data, len);
	r->wrecs[pos & (r->brep.nr_wrecs - 1)] = (struct ucmdd_bounce_wrec){
		.pos = pos, .len = len, .addr = (uint64_t)(uintptr_t)addr, .user_data = ud, .off = off
	};
}

/* Read len bytes at slba back through a buffer of its own (the area's read path). */
static void read_back(struct bt *t, uint64_t slba, char *out, unsigned len)
{
	prep_rw(&t->r, &t->s, 0x02, slba, out, len, 77);
	publish(&t->r);
	assert_int_equal(next_cqe(&t->r, true).res, 0);
}

/*
 * A write whose data the client copied into the area as it submitted it:
 * the device gets the area's copy, not what the buffer holds when the
 * daemon issues it (the buffer was changed after the submit, as a program
 * may once io_uring_enter returned). Then the daemon says the record is
 * dead (wdone) once a pass after the SQE's began.
 */
static void test_write_from_area(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 8192;
	char *buf = pages(2), *want = malloc(len), *back = pages(2);
	unsigned pos;

	cring_open(&t->s, r);
	fx_fill(want, len, 61);
	memset(buf, 0x3c, len);		/* what the buffer holds by the time the daemon looks */
	pos = r->tail;
	wrec(r, pos, want, buf, len, 4096, 501);
	prep_rw(r, &t->s, 0x01, 80, buf, len, 501);
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	read_back(t, 80, back, len);
	assert_memory_equal(back, want, len);
	/* the pass after the one that took it: the record and its data are the client's again */
	assert_true((int)(__atomic_load_n(&r->bctl->wdone, __ATOMIC_ACQUIRE) - (pos + 1)) >= 0);
	free(want);
	munmap(buf, len);
	munmap(back, len);
}

/*
 * Records that do not match their request in every way, or that lie about
 * the area, are not used: the daemon reads the client's memory as without
 * one. Each write's buffer holds the truth, its record something else.
 */
static void test_write_bad_records(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, mask;
	char *buf = pages(1), *back = pages(1), *lie = malloc(len);

	cring_open(&t->s, r);
	mask = r->brep.nr_wrecs - 1;
	memset(lie, 0xd1, len);
	for (int kind = 0; kind < 8; kind++) {
		struct ucmdd_bounce_wrec *w;
		unsigned pos = r->tail;

		fx_fill(buf, len, 70 + kind);
		wrec(r, pos, lie, buf, len, 0, 600 + kind);
		w = &r->wrecs[pos & mask];
		switch (kind) {
		case 0: w->pos = pos + r->brep.nr_wrecs; break;	/* another position's */
		case 1: w->user_data ^= 1; break;
		case 2: w->addr += 64; break;
		case 3: w->len = len / 2; break;
		case 4: w->off = (uint32_t)r->brep.wdata_len; break;	/* past the area */
		case 5: w->off = (uint32_t)r->brep.wdata_len - 100; break;	/* runs past it */
		case 6: w->off = 0xffffffffu; w->len = 0xffffffffu; break;
		case 7: memset(w, 0xff, sizeof(*w)); break;
		}
		prep_rw(r, &t->s, 0x01, 96, buf, len, 600 + kind);
		publish(r);
		assert_int_equal(next_cqe(r, true).res, 0);
		read_back(t, 96, back, len);
		assert_memory_equal(back, buf, len);
	}
	/* garbage everywhere in the write area: writes still send their buffers */
	memset(r->wrecs, 0xa7, r->brep.nr_wrecs * sizeof(*r->wrecs));
	memset(r->wdata, 0xa7, r->brep.wdata_len);
	fx_fill(buf, len, 79);
	prep_rw(r, &t->s, 0x01, 96, buf, len, 700);
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	read_back(t, 96, back, len);
	assert_memory_equal(back, buf, len);
	free(lie);
	munmap(buf, len);
	munmap(back, len);
}

/*
 * A record of several ranges (proto.h, nr): its table at off, 8-aligned,
 * and each range's data copied after it; ranges[i] is the client's range,
 * data[i] what the area holds for it. Returns the table's offset.
 */
static unsigned wrec_table(struct cring *r, unsigned pos, unsigned off, unsigned nr,
			   const struct iovec *ranges, const void *const *data, uint64_t ud)
{
	struct ucmdd_bounce_wseg *tbl = (struct ucmdd_bounce_wseg *)(r->wdata + off);
	unsigned at = off + ((nr * (unsigned)sizeof(*tbl) + 63) & ~63u);

	for (unsigned i = 0; i < nr; i++) {
		memcpy(r->wdata + at, data[i], ranges[i].iov_len);
		tbl[i] = (struct ucmdd_bounce_wseg){ .addr = (uint64_t)(uintptr_t)ranges[i].iov_base,
						     .len = (uint32_t)ranges[i].iov_len, .off = at };
		at += (unsigned)ranges[i].iov_len;
	}
	r->wrecs[pos & (r->brep.nr_wrecs - 1)] =
		(struct ucmdd_bounce_wrec){ .pos = pos, .user_data = ud, .off = off, .nr = nr };
	return off;
}

/* An NVMe vectored Write of two segments (the second mid-page) at slba. */
static void prep_wvec(struct cring *r, struct sfx *s, uint64_t slba, struct iovec *iov,
		      unsigned len, uint64_t ud)
{
	struct nvme_uring_cmd u;
	struct io_uring_sqe *sqe = get_sqe(r);

	fx_rw_cmd(&u, 0x01, s->fx.nsid, slba, len / s->fx.lbs, (void *)iov, 2);
	ucmd_prep_nvme_cmd(sqe, s->ng, NVME_URING_CMD_IO_VEC, &u);
	sqe->user_data = ud;
}

/*
 * A vectored write whose iovec array and segments the client copied into
 * the area (one record, a table of three ranges): the device gets the
 * area's copies, not what the segments hold when the daemon issues it.
 */
static void test_write_vec_from_area(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 8192;
	char *a = pages(1), *b = pages(2), *back = pages(2), *want = malloc(len);
	struct iovec iov[2], ranges[3];
	const void *data[3];
	unsigned pos;

	cring_open(&t->s, r);
	fx_fill(want, len, 62);
	memset(a, 0x3c, 4096);
	memset(b, 0x3d, 8192);
	iov[0] = (struct iovec){ a, 4096 };
	iov[1] = (struct iovec){ b + 512, 4096 };
	ranges[0] = (struct iovec){ iov, sizeof(iov) };
	ranges[1] = iov[0];
	ranges[2] = iov[1];
	data[0] = iov;
	data[1] = want;
	data[2] = want + 4096;
	pos = r->tail;
	wrec_table(r, pos, 4096, 3, ranges, data, 511);
	prep_wvec(r, &t->s, 160, iov, len, 511);
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	read_back(t, 160, back, len);
	assert_memory_equal(back, want, len);
	free(want);
	munmap(a, 4096);
	munmap(b, 8192);
	munmap(back, 8192);
}

/*
 * Tables that lie (too many ranges, off the area, misaligned, ranges that
 * do not hold the segment, another SQE's): not used, the segments' own
 * bytes reach the device; a table naming only some of the ranges serves
 * those and the rest are read from the client's memory.
 */
static void test_write_vec_bad_tables(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 8192, mask;
	char *a = pages(1), *b = pages(2), *back = pages(2), *lie = malloc(len), *truth = malloc(len);
	struct iovec iov[2], ranges[3];
	const void *data[3];

	cring_open(&t->s, r);
	mask = r->brep.nr_wrecs - 1;
	memset(lie, 0xd2, len);
	iov[0] = (struct iovec){ a, 4096 };
	iov[1] = (struct iovec){ b + 512, 4096 };
	ranges[0] = (struct iovec){ iov, sizeof(iov) };
	ranges[1] = iov[0];
	ranges[2] = iov[1];
	data[0] = iov;
	data[1] = lie;
	data[2] = lie + 4096;
	for (int kind = 0; kind < 9; kind++) {
		struct ucmdd_bounce_wrec *w;
		struct ucmdd_bounce_wseg *tbl;
		unsigned pos = r->tail;

		fx_fill(truth, len, 120 + kind);
		memcpy(a, truth, 4096);
		memcpy(b + 512, truth + 4096, 4096);
		wrec_table(r, pos, 8192, 3, ranges, data, 610 + kind);
		w = &r->wrecs[pos & mask];
		tbl = (struct ucmdd_bounce_wseg *)(r->wdata + 8192);
		switch (kind) {
		case 0: w->nr = UCMDD_BOUNCE_WSEG_MAX + 1; break;
		case 1: w->nr = 0xffffffffu; break;
		case 2: w->off = 8192 + 4; break;	/* not 8-aligned */
		case 3: w->off = (uint32_t)r->brep.wdata_len - 16; break;	/* the table runs past */
		case 4: w->user_data ^= 1; break;
		case 5:	/* every range's copy past the area */
			for (int i = 0; i < 3; i++)
				tbl[i].off = (uint32_t)r->brep.wdata_len - tbl[i].len + 1;
			break;
		case 6:	/* ranges that do not hold the segments */
			tbl[1].addr += 8;
			tbl[2].len -= 1;
			break;
		case 7:	/* lengths that wrap */
			tbl[1].len = 0xffffffffu;
			tbl[2].len = 0xffffffffu;
			break;
		case 8:	/* only the array is in the table: the segments are read from memory */
			w->nr = 1;
			break;
		}
		prep_wvec(r, &t->s, 176, iov, len, 610 + kind);
		publish(r);
		assert_int_equal(next_cqe(r, true).res, 0);
		read_back(t, 176, back, len);
		assert_memory_equal(back, truth, len);
	}
	free(lie);
	free(truth);
	munmap(a, 4096);
	munmap(b, 8192);
	munmap(back, 8192);
}

/*
 * IORING_OP_WRITEV on the block device: its iovec array (read when the
 * SQE is prepared) and its segments (when it is issued) come from one
 * record of the area.
 */
static void test_writev_from_area(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 8192;
	char *a = pages(1), *b = pages(1), *back = pages(2), *want = malloc(len);
	struct iovec iov[2], ranges[3], *liar = malloc(sizeof(iov));
	const void *data[3];
	struct io_uring_sqe *sqe;
	unsigned pos;

	cring_open(&t->s, r);
	fx_fill(want, len, 64);
	memset(a, 0x3a, 4096);
	memset(b, 0x3b, 4096);
	iov[0] = (struct iovec){ a, 4096 };
	iov[1] = (struct iovec){ b, 4096 };
	/* what the area says the array held at submit; the array in memory now names other bytes */
	memcpy(liar, iov, sizeof(iov));
	ranges[0] = (struct iovec){ liar, sizeof(iov) };
	ranges[1] = iov[0];
	ranges[2] = iov[1];
	data[0] = iov;
	data[1] = want;
	data[2] = want + 4096;
	liar[0] = (struct iovec){ b, 4096 };
	pos = r->tail;
	wrec_table(r, pos, 4096, 3, ranges, data, 531);
	sqe = get_sqe(r);
	ucmd_prep_writev(sqe, t->s.bdev, liar, 2, 192 * 4096ull);
	sqe->user_data = 531;
	publish(r);
	assert_int_equal(next_cqe(r, true).res, (int)len);
	read_back(t, 192 * 4096ull / t->s.fx.lbs, back, len);
	assert_memory_equal(back, want, len);
	free(want);
	free(liar);
	munmap(a, 4096);
	munmap(b, 4096);
	munmap(back, 8192);
}

static int setup_meta(void **state)
{
	struct bt *t = calloc(1, sizeof(*t));
	struct fx_opts o = { .lbaf = 5 };	/* 4 KiB blocks, 8 bytes of separate metadata */

	srv_bounce_wait_ns = SRV_BOUNCE_WAIT_NS;
	sfx_setup(&t->s, &o);
	*state = t;
	return 0;
}

/*
 * A Write with separate metadata: its data and its metadata are two
 * ranges of one record, and the device gets both copies from the area.
 */
static void test_write_meta_from_area(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096;
	char *buf = pages(1), *back = pages(1), *want = malloc(len);
	uint8_t meta[8], wmeta[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, mback[8];
	struct iovec ranges[2];
	const void *data[2];
	struct nvme_uring_cmd u;
	struct io_uring_sqe *sqe;
	unsigned pos;

	cring_open(&t->s, r);
	assert_int_equal(t->s.fx.lbs, 4096);
	fx_fill(want, len, 63);
	memset(buf, 0x3e, len);
	memset(meta, 0x3f, sizeof(meta));
	ranges[0] = (struct iovec){ buf, len };
	ranges[1] = (struct iovec){ meta, sizeof(meta) };
	data[0] = want;
	data[1] = wmeta;
	pos = r->tail;
	wrec_table(r, pos, 0, 2, ranges, data, 521);
	fx_rw_cmd(&u, 0x01, t->s.fx.nsid, 8, 1, buf, len);
	u.metadata = (uint64_t)(uintptr_t)meta;
	u.metadata_len = sizeof(meta);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, t->s.ng, NVME_URING_CMD_IO, &u);
	sqe->user_data = 521;
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	memset(mback, 0, sizeof(mback));
	fx_rw_cmd(&u, 0x02, t->s.fx.nsid, 8, 1, back, len);
	u.metadata = (uint64_t)(uintptr_t)mback;
	u.metadata_len = sizeof(mback);
	sqe = get_sqe(r);
	ucmd_prep_nvme_cmd(sqe, t->s.ng, NVME_URING_CMD_IO, &u);
	sqe->user_data = 522;
	publish(r);
	assert_int_equal(next_cqe(r, true).res, 0);
	assert_memory_equal(back, want, len);
	assert_memory_equal(mback, wmeta, sizeof(wmeta));
	free(want);
	munmap(buf, len);
	munmap(back, len);
}

/*
 * Reads and writes mixed in one submission, the writes from the area, the
 * reads into it: every read gets what was there before the batch (the
 * writes go to other blocks), every write lands.
 */
static void test_mixed_rw(void **state)
{
	struct bt *t = *state;
	struct cring *r = &t->r;
	unsigned len = 4096, n = 8;
	char *w, *rd = pages(n), *wb = pages(n), *back = pages(1);
	char *want = malloc((size_t)n * len);

	srv_bounce_wait_ns = 60000000000ull;
	cring_open(&t->s, r);
	w = write_pattern(t, 128, len, 81);
	for (unsigned i = 0; i < n; i++) {
		fx_fill(want + (size_t)i * len, len, 90 + i);
		memset(wb + (size_t)i * len, 0, len);
		wrec(r, r->tail, want + (size_t)i * len, wb + (size_t)i * len, len, i * len, 800 + i);
		prep_rw(r, &t->s, 0x01, 136 + i * (len / t->s.fx.lbs), wb + (size_t)i * len, len,
			800 + i);
		prep_rw(r, &t->s, 0x02, 128, rd + (size_t)i * len, len, 900 + i);
	}
	publish(r);
	for (unsigned i = 0; i < 2 * n; i++)
		assert_int_equal(next_cqe(r, true).res, 0);
	for (unsigned i = 0; i < n; i++) {
		assert_memory_equal(rd + (size_t)i * len, w, len);
		read_back(t, 136 + i * (len / t->s.fx.lbs), back, len);
		assert_memory_equal(back, want + (size_t)i * len, len);
	}
	free(want);
	munmap(w, len);
	munmap(rd, (size_t)n * len);
	munmap(wb, (size_t)n * len);
	munmap(back, len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fast_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_path, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_fallback_unclaimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_taskrun_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_taskrun_flag, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_no_taskrun_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fallback_unclaimed, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_bad_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vectored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_area_full, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_exit_unclaimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lies, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_failed_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_linked_read_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_linked_read_write, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_unwritten_zeroed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritten_zeroed, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_write_from_area, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_from_area, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_write_bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_vec_from_area, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_vec_from_area, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_write_vec_bad_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_meta_from_area, setup_meta, teardown),
		cmocka_unit_test_setup_teardown(test_writev_from_area, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_rw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_rw, setup_thread, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
