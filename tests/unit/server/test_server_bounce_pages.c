/* SPDX-License-Identifier: MIT */
/*
 * The bounce area's data pages (src/server/bounce_area.c) belong to the
 * ring's pass, without a lock: allocations only on the pass (an allocation
 * anywhere else is a bug, caught by the assertion), and pages given back
 * on another thread (a read completed on the controller's thread) reach
 * the pass's next allocation. Run under TSan in the threaded suite.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "srv_fixture.h"
#include "server/bounce_area.h"

#define BP 4096u

static struct srv_bounce *area_new(void)
{
	struct ucmdd_bounce_rep rep;
	struct srv_bounce *b;

	/* no client: nothing here copies to one */
	assert_int_equal(srv_bounce_create(NULL, 0, &b, &rep), 0);
	assert_int_equal(rep.data_len, (uint64_t)SRV_BOUNCE_PAGES * BP);
	return b;
}

/* Every page taken, one page an allocation, on the pass; how many. */
static unsigned fill(struct srv_bounce *b, void **got)
{
	unsigned n = 0;

	while (n < SRV_BOUNCE_PAGES && (got[n] = srv_bounce_alloc(b, 0x10000u + n * BP, BP)))
		n++;
	return n;
}

static void *put_off_pass(void *arg)
{
	void **what = arg;

	/* no srv_bounce_enter: this thread is not the area's pass */
	srv_bounce_put(what[0], what[1]);
	return NULL;
}

/*
 * A full area: a page given back on another thread is the next
 * allocation's, and only after it was given back.
 */
static void test_put_off_pass_reaches_pass(void **state)
{
	struct srv_bounce *b = area_new();
	void *got[SRV_BOUNCE_PAGES + 1];
	void *what[2];
	pthread_t th;

	(void)state;
	srv_bounce_enter(b, 0);
	assert_int_equal(fill(b, got), SRV_BOUNCE_PAGES);
	assert_null(srv_bounce_alloc(b, 0x10000u, BP));
	what[0] = b;
	what[1] = got[77];
	assert_int_equal(pthread_create(&th, NULL, put_off_pass, what), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_ptr_equal(srv_bounce_alloc(b, 0x20000u, BP), got[77]);
	assert_null(srv_bounce_alloc(b, 0x10000u, BP));
	/* on the pass itself: back at once */
	srv_bounce_put(b, got[5]);
	assert_ptr_equal(srv_bounce_alloc(b, 0x30000u, BP), got[5]);
	srv_bounce_leave();
	srv_bounce_free(b);
}

/*
 * An allocation off the pass breaks the invariant the missing lock rests
 * on: the assertion stops it (builds without NDEBUG, as every build of
 * this tree). The old allocator took a lock and allowed it.
 */
static void test_alloc_off_pass_asserts(void **state)
{
	struct srv_bounce *b = area_new();
	int st;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* no core dump, no sanitizer report to wade through: only the signal counts */
		signal(SIGABRT, SIG_DFL);
		(void)srv_bounce_alloc(b, 0x10000u, BP);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
	srv_bounce_free(b);
}

#define RACE_ROUNDS 3000u
/* The byte an allocation is filled with: its first page's number in the process. */
#define TAG(p) ((unsigned char)((uintptr_t)(p) / BP * 7u + 1u))
#define RACE_Q 64u

/* The controller's thread: gives back what the pass hands it, after checking it. */
struct remote {
	struct srv_bounce *b;
	void *q[RACE_Q];
	unsigned head, tail;	/* q's: tail written by the pass, head by the remote */
	int stop;
	unsigned long bad, done;
};

static void *remote_puts(void *arg)
{
	struct remote *r = arg;

	for (;;) {
		unsigned t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

		if (r->head == t) {
			if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) &&
			    t == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))
				return NULL;
			sched_yield();
			continue;
		}
		while (r->head != t) {
			unsigned char *p = r->q[r->head % RACE_Q];

			/* still the bytes its owner wrote: nobody else got these pages */
			if (p[0] != TAG(p) || p[BP - 1] != TAG(p))
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			srv_bounce_put(r->b, p);
			__atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
			r->done++;
		}
	}
}

/*
 * The pass allocates and frees while another thread gives back half of
 * what it allocated: no page is ever in two live allocations (each holds
 * its own byte until given back), and every page comes back.
 */
static void test_pass_races_remote_puts(void **state)
{
	struct srv_bounce *b = area_new();
	struct remote r = { .b = b };
	void *got[SRV_BOUNCE_PAGES + 1];
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, remote_puts, &r), 0);
	srv_bounce_enter(b, 0);
	for (unsigned k = 0; k < RACE_ROUNDS; k++) {
		unsigned span = 1 + k % 3;
		unsigned char *p = srv_bounce_alloc(b, 0x10000u, span * BP);

		if (!p) {
			sched_yield();
			continue;
		}
		memset(p, TAG(p), span * BP);
		if (k % 2 && r.tail - __atomic_load_n(&r.head, __ATOMIC_ACQUIRE) < RACE_Q) {
			r.q[r.tail % RACE_Q] = p;
			__atomic_store_n(&r.tail, r.tail + 1, __ATOMIC_RELEASE);
		} else {
			assert_int_equal(p[span * BP - 1], TAG(p));
			srv_bounce_put(b, p);
		}
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.bad, 0);
	assert_true(r.done > 0);
	/* all of it back: the whole area, one page at a time */
	assert_int_equal(fill(b, got), SRV_BOUNCE_PAGES);
	srv_bounce_leave();
	srv_bounce_free(b);
}

/*
 * Read records are made without a lock (srv_bounce_post), by whichever
 * threads complete reads, at once. MAKERS threads make SRV_BOUNCE_RECS
 * records between them while this thread, as the client does, follows the
 * shared tail and reads each record below it, and publishes CQ tails as
 * completions do: the tail never moves back, every record below it is
 * whole, each maker's records are in its order, none is lost or made
 * twice, the next is refused (-ENOSPC) until the client's done frees
 * slots, and the slots freed take the next round.
 */
#define MAKERS 4u
#define PER_MAKER (SRV_BOUNCE_RECS / MAKERS)
#define MAKER_ROUNDS 200u

struct maker {
	struct srv_bounce *b;
	void *p;
	unsigned id, round;
	int bad;
	unsigned *finished;
};

static uint64_t rec_addr(unsigned id, unsigned round, unsigned i)
{
	return (uint64_t)(id + 1) << 40 | (uint64_t)round << 32 | i;
}

static void *make_recs(void *arg)
{
	struct maker *m = arg;

	for (unsigned i = 0; i < PER_MAKER; i++)
		if (srv_bounce_post(m->b, m->p, rec_addr(m->id, m->round, i), BP - m->id))
			m->bad++;
	__atomic_fetch_add(m->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The records below the shared tail, as the client reads them: whole, each maker's in order. */
static void check_recs(const struct ucmdd_bounce_rec *recs, unsigned from, unsigned to,
		       unsigned round)
{
	unsigned next[MAKERS] = { 0 };

	for (unsigned k = from; k != to; k++) {
		const struct ucmdd_bounce_rec *r = &recs[k % SRV_BOUNCE_RECS];
		unsigned id = (unsigned)(r->addr >> 40) - 1;

		assert_true(id < MAKERS);
		assert_int_equal(r->len, BP - id);
		assert_int_equal(r->addr, rec_addr(id, round, next[id]));
		next[id]++;
	}
}

static void make_round(struct srv_bounce *b, void *p, struct ucmdd_bounce_ctl *ctl,
		       const struct ucmdd_bounce_rec *recs_view, unsigned round)
{
	struct maker m[MAKERS];
	pthread_t th[MAKERS];
	unsigned base = round * SRV_BOUNCE_RECS, seen = base, cq = 0, ktail = 0, finished = 0;
	unsigned recs;
	bool waiting;

	for (unsigned i = 0; i < MAKERS; i++) {
		m[i] = (struct maker){ .b = b, .p = p, .id = i, .round = round, .finished = &finished };
		assert_int_equal(pthread_create(&th[i], NULL, make_recs, &m[i]), 0);
	}
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) != MAKERS) {
		unsigned t = __atomic_load_n(&ctl->tail, __ATOMIC_ACQUIRE);

		/* never back, never past what was made */
		assert_true(t - base >= seen - base && t - base <= SRV_BOUNCE_RECS);
		check_recs(recs_view, base, t, round);
		seen = t;
		srv_bounce_cq_publish(b, &ktail, ++cq);
	}
	for (unsigned i = 0; i < MAKERS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(m[i].bad, 0);
	}
	/* all of them shown, to the client and to the pass */
	assert_int_equal(__atomic_load_n(&ctl->tail, __ATOMIC_ACQUIRE), base + SRV_BOUNCE_RECS);
	srv_bounce_state(b, &recs, &waiting, &cq);
	assert_int_equal(recs, base + SRV_BOUNCE_RECS);
	assert_true(waiting);
	check_recs(recs_view, base, base + SRV_BOUNCE_RECS, round);
	/* every slot holds a record not yet copied */
	assert_int_equal(srv_bounce_post(b, p, 0x1000, BP), -ENOSPC);
	/* the client copied them all: the pass takes that in, the slots are free again */
	__atomic_store_n(&ctl->done, base + SRV_BOUNCE_RECS, __ATOMIC_RELEASE);
	assert_true(srv_bounce_poll(b, false));
}

static void test_concurrent_makers(void **state)
{
	struct ucmdd_bounce_rep rep;
	struct srv_bounce *b;
	struct ucmdd_bounce_ctl *ctl;
	void *mem;

	(void)state;
	assert_int_equal(srv_bounce_create(NULL, 0, &b, &rep), 0);
	/* the client's own mapping of the area */
	mem = mmap(NULL, rep.size, PROT_READ | PROT_WRITE, MAP_SHARED, srv_bounce_fd(b), 0);
	assert_true(mem != MAP_FAILED);
	ctl = mem;
	srv_bounce_enter(b, 0);
	/* rounds enough for makers to be preempted between their index and their tail */
	for (unsigned round = 0; round < MAKER_ROUNDS; round++) {
		void *p = srv_bounce_alloc(b, 0x10000u, BP);

		assert_non_null(p);
		make_round(b, p, ctl, (const struct ucmdd_bounce_rec *)((char *)mem + rep.recs_off),
			   round);
	}
	srv_bounce_leave();
	munmap(mem, rep.size);
	srv_bounce_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_off_pass_reaches_pass),
		cmocka_unit_test(test_alloc_off_pass_asserts),
		cmocka_unit_test(test_pass_races_remote_puts),
		cmocka_unit_test(test_concurrent_makers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
