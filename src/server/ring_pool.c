/* SPDX-License-Identifier: MIT */
/*
 * The ring workers: the daemon's threads that serve its clients' rings
 * (ring.c), one per online CPU (srv_daemon.pool_workers to say otherwise)
 * for every ring of every client, instead of a thread per ring.
 *
 * Why: with a thread per ring, two clients on two CPUs were four threads
 * polling each other (two fio processes under `ucmd exec` summed to half
 * of one), and a ring's thread could serve only its own ring while the
 * CPU it held was the one the other ring's client needed. Here a worker
 * takes whichever ring has work: each loop tries every ring's lock
 * (pthread_mutex_trylock) and makes one pass over each it gets; a ring
 * another worker is in is skipped, never waited for.
 *
 * Polling and sleep. After a pass that did work a ring asks to be looked
 * at again for its poll time (srv_ring_idle: SQPOLL within its budget,
 * else SRV_BUSY_POLL_US), but only of the worker that did it: a second
 * worker woken for the same doorbell does not poll on beside it. A worker
 * with nothing to poll sleeps; the last one awake (pool.active reaching
 * 0) first sets IORING_SQ_NEED_WAKEUP on every ring and makes one more
 * pass over each, as Linux's SQPOLL thread does (a ring it finds locked
 * its holder passes over again: serve, relook), then sleeps in poll() on
 * every live ring's doorbell and owner eventfd; the others sleep on their
 * own eventfd only (a doorbell wakes one worker, not all). A worker whose
 * pass found more rings with SQEs waiting than workers awake wakes a
 * sleeping one: two busy clients get two workers, one client one.
 *
 * A crowded machine (more threads runnable than CPUs, crowd.c). There a
 * worker polling beside its client holds a CPU another thread wants: one
 * fio job under exec was fio on one CPU and its worker polling on the
 * other, and two jobs on two CPUs were four busy threads. So then no
 * second worker is woken (one serves every ring in turn), and the poll
 * after work (SRV_IDLE_BUSY; a SQPOLL ring's budget is kept) yields at
 * each empty look and sleeps after POOL_CROWDED_POLLS of them, by the
 * same way to sleep as ever (NEED_WAKEUP, the look before sleeping): the
 * client rings the doorbell for its next batch.
 *
 * A stuck pass. A pass may block where the client decides (its memory
 * behind a file system that does not answer, a registration holding the
 * engine ring's lock). Only that ring waits: the watchdog thread counts a
 * worker in one pass for over SRV_STALL_MS as gone and starts a spare
 * while fewer than the wanted number are left, so the other rings are
 * served; a worker back from such a pass serves again. Spares stay until
 * the pool stops (there are never more workers than stuck rings plus the
 * wanted number).
 *
 * Removal. srv_pool_remove takes a ring off the list and bumps the list's
 * generation; each worker checks it before each ring it touches and takes
 * a fresh copy of the list (which the remover waits for: seen_gen) unless
 * it is in a pass of another ring, after which it checks before touching
 * any. So on return no worker is in or will start a pass of the ring, and
 * the control thread drains it itself (ring.c): a ring's end never holds
 * up a worker.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "server/crowd.h"
#include "server/efd.h"
#include "server/ring_pool.h"

/* idle polls that only pause before each further one yields the CPU */
#define POOL_SPIN_PAUSES	256u
/* an idle poll reads the clock once in this many loops */
#define POOL_CLOCK_EVERY	8u
/* An SQPOLL ring's nap (SRV_IDLE_NAP): off the CPU, short enough to take the next SQE nearly at once. */
#define POOL_NAP_NS		20000
/* empty looks, each after a sched_yield, before a crowded machine's worker sleeps */
#define POOL_CROWDED_POLLS	4u
#define POOL_MAX_BASE		64u

struct pworker {
	struct srv_pool *p;
	pthread_t thread;
	int efd;			/* wakes this worker: the list changed, the pool stops */
	/* under p->lock */
	unsigned seen_gen;		/* the generation of the list it holds a copy of */
	bool active;			/* counted in p->active: awake, looking at rings */
	bool waking;			/* written to wake it, not yet awake */
	bool stuck;			/* the watchdog's: in one pass too long */
	atomic_bool stuck_flag;		/* stuck, for the worker to see without the lock */
	/* the ring it is in a pass of and since when (us, 0: none) */
	_Atomic(struct srv_ring *) cur;
	_Atomic uint64_t since;
	/* its own copy of the list and poll set, touched only by itself */
	struct srv_ring **l;
	unsigned n, cap;
	struct pollfd *pfd;
	struct srv_ring **pfd_ring;
};

struct srv_pool {
	struct srv_daemon *d;
	unsigned refs;			/* under d->lock: its rings and removers at work */
	pthread_mutex_t lock;
	pthread_cond_t acked;		/* a worker took a fresh list */
	struct srv_ring **rings;
	unsigned nr, cap;
	atomic_uint gen;
	struct pworker **w;
	unsigned nr_w, cap_w;
	unsigned base;			/* workers wanted, stuck ones not counted */
	unsigned stall_ms;		/* a pass this long is stuck (SRV_STALL_MS) */
	unsigned active, nr_stuck;
	atomic_bool stop;
	pthread_t wd;
	bool wd_live;
	int wd_efd;
	struct srv_crowd crowd;
	/* for tests (srv_pool_stats) */
	atomic_ulong helper_wakes, empty_polls, crowded_sleeps;
};

_Atomic(srv_pool_hook_fn *) srv_pool_test_hook;

static void hook(enum srv_pool_at at, struct pworker *w, struct srv_ring *r)
{
	srv_pool_hook_fn *fn = atomic_load_explicit(&srv_pool_test_hook, memory_order_acquire);

	if (fn)
		fn(at, r, w->efd);
}

static void efd_write(int fd)
{
	uint64_t one = 1;

	/* a full counter (EAGAIN) already says "wake up" */
	if (write(fd, &one, sizeof(one)) < 0)
		return;
}

static void efd_read(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return;
}

/* A fresh copy of the list if it changed; under no lock of a ring. */
static void list_refresh(struct pworker *w)
{
	struct srv_pool *p = w->p;

	if (atomic_load(&p->gen) == w->seen_gen)
		return;
	pthread_mutex_lock(&p->lock);
	if (w->cap < p->nr || !w->pfd) {
		unsigned cap = p->nr > w->cap ? p->nr : w->cap ? w->cap : 1;
		struct srv_ring **l = realloc(w->l, cap * sizeof(*l));
		struct pollfd *pfd = realloc(w->pfd, (2 * cap + 1) * sizeof(*pfd));
		struct srv_ring **pr = realloc(w->pfd_ring, (2 * cap + 1) * sizeof(*pr));

		if (l)
			w->l = l;
		if (pfd)
			w->pfd = pfd;
		if (pr)
			w->pfd_ring = pr;
		if (!l || !pfd || !pr) {
			/* no memory: the remover waits for us; try again in a while */
			pthread_mutex_unlock(&p->lock);
			usleep(1000);
			return;
		}
		w->cap = cap;
	}
	if (p->nr)
		memcpy(w->l, p->rings, p->nr * sizeof(*w->l));
	w->n = p->nr;
	w->seen_gen = atomic_load(&p->gen);
	pthread_cond_broadcast(&p->acked);
	pthread_mutex_unlock(&p->lock);
}

/*
 * p->active counts the workers whose ->active is set, whoever changes it:
 * under p->lock, and only through here.
 */
static void active_set_locked(struct pworker *w, bool on)
{
	if (w->active == on)
		return;
	w->active = on;
	/* read without the lock by wake_helper, as a hint */
	__atomic_store_n(&w->p->active, on ? w->p->active + 1 : w->p->active - 1, __ATOMIC_RELAXED);
}

/*
 * Back from a pass the watchdog counted as stuck: a worker again, awake if
 * it is in its loop (awake), not if in the look before its sleep.
 */
static void rejoin(struct pworker *w, bool awake)
{
	struct srv_pool *p = w->p;

	pthread_mutex_lock(&p->lock);
	if (w->stuck) {
		w->stuck = false;
		p->nr_stuck--;
		if (awake)
			active_set_locked(w, true);
	}
	atomic_store(&w->stuck_flag, false);
	pthread_mutex_unlock(&p->lock);
}

/*
 * One pass over r if no one else is in one; how much it did. awake: from
 * the worker's loop, not from the look before its sleep.
 */
static unsigned serve(struct pworker *w, struct srv_ring *r, uint64_t now, bool awake)
{
	unsigned did;

	if (pthread_mutex_trylock(&r->lock)) {
		if (awake)
			return 0;
		/*
		 * The look before sleeping, which must see every SQE published
		 * before the client could see our NEED_WAKEUP, finds the ring
		 * locked. The holder may be a worker in its own look before
		 * sleeping, whose pass began before our NEED_WAKEUP, after which
		 * a worker woken late cleared the flag again: the client then
		 * rang no doorbell, and that pass took nothing, and both went to
		 * sleep (server_bounce under TSan: a CQE that never came). So the
		 * holder is asked to look again (relook), and it does after its
		 * unlock. Ordering: our relook store, a fence, then a trylock
		 * that fails reading the lock held; the holder's unlock, a
		 * fence, then its relook load. Our load of the lock word did not
		 * see that unlock, so our fence precedes the holder's, and its
		 * load sees our store (or a later holder's pass cleared it,
		 * after our NEED_WAKEUP). The second trylock covers a holder
		 * that let go in between.
		 */
		atomic_store(&r->relook, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (pthread_mutex_trylock(&r->lock))
			return 0;
	}
	/* this pass is the look asked for: it reads the tail after the asker's NEED_WAKEUP */
	if (atomic_load_explicit(&r->relook, memory_order_relaxed))
		atomic_store(&r->relook, false);
	atomic_store(&w->cur, r);
	atomic_store_explicit(&w->since, now ? now : 1, memory_order_relaxed);
	did = srv_ring_serve(r, now);
	if (did)
		__atomic_store_n(&r->last_worker, w, __ATOMIC_RELAXED);
	atomic_store_explicit(&w->since, 0, memory_order_relaxed);
	atomic_store(&w->cur, NULL);
	if (!awake)
		hook(SRV_POOL_AT_LOOKED, w, r);
	pthread_mutex_unlock(&r->lock);
	/* a sleeper found the ring locked during our pass: we look again (counts as work) */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->relook, memory_order_relaxed) && atomic_exchange(&r->relook, false))
		did++;
	/* the watchdog may mark a pass that just ended: seen after the next one then */
	if (atomic_load(&w->stuck_flag))
		rejoin(w, awake);
	return did;
}

/* Is the list this worker holds still the pool's? (seq_cst: pairs with the remover's) */
static bool list_current(const struct pworker *w)
{
	return atomic_load(&w->p->gen) == w->seen_gen;
}

/*
 * More rings with SQEs waiting than workers awake: wake a sleeping one.
 * The counts are hints; a wake-up too many costs a worker one loop.
 */
static void wake_helper(struct pworker *w, uint64_t now)
{
	struct srv_pool *p = w->p;
	unsigned pending = 0;

	for (unsigned i = 0; i < w->n; i++)
		pending += !srv_ring_done(w->l[i]) && srv_ring_pending(w->l[i]);
	if (pending <= __atomic_load_n(&p->active, __ATOMIC_RELAXED))
		return;
	/*
	 * A crowded machine has no CPU for a second worker: it would take
	 * one from a client (two fio jobs on two CPUs were four busy threads).
	 * This one serves every ring in turn; the wake-ups that keep a ring
	 * from waiting forever (NEED_WAKEUP, the watchdog) do not pass here.
	 */
	if (srv_crowded(&p->crowd, now))
		return;
	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->nr_w; i++) {
		struct pworker *o = p->w[i];

		if (!o->active && !o->stuck && !o->waking) {
			o->waking = true;
			efd_write(o->efd);
			atomic_fetch_add_explicit(&p->helper_wakes, 1, memory_order_relaxed);
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
}

static void set_active(struct pworker *w, bool on)
{
	struct srv_pool *p = w->p;

	pthread_mutex_lock(&p->lock);
	active_set_locked(w, on);
	w->waking = false;
	pthread_mutex_unlock(&p->lock);
}

/*
 * Nothing to poll: sleep until a doorbell, an owner eventfd, our own
 * eventfd, or the shortest timeout a ring asks for.
 */
static void worker_sleep(struct pworker *w)
{
	struct srv_pool *p = w->p;
	unsigned nfd = 0;
	int timeout = -1, n;
	bool last;

	pthread_mutex_lock(&p->lock);
	active_set_locked(w, false);
	last = !p->active;
	pthread_mutex_unlock(&p->lock);
	if (last) {
		unsigned did = 0;

		/* the engine's tail load is seq_cst: pairs with the client's tail store then flag load */
		for (unsigned i = 0; i < w->n; i++)
			srv_ring_need_wakeup(w->l[i], true);
		/*
		 * A ring locked now is in a pass of a worker, which looks at
		 * it again after (serve: relook), or in the control thread's
		 * hands, which writes its owner eventfd when done
		 * (srv_ring_unlock).
		 */
		for (unsigned i = 0; i < w->n && list_current(w); i++)
			if (!srv_ring_done(w->l[i]))
				did += serve(w, w->l[i], srv_now_us(), false);
		if (did || !list_current(w)) {
			set_active(w, true);
			return;
		}
	}
	w->pfd[nfd++] = (struct pollfd){ .fd = w->efd, .events = POLLIN };
	/*
	 * Only the last to sleep watches the rings: the others wait for
	 * their own eventfd (wake_helper, the watchdog, the list), so a
	 * doorbell wakes one worker, not every one.
	 */
	for (unsigned i = 0; last && i < w->n; i++) {
		struct srv_ring *r = w->l[i];
		int t;

		/* a ring that stops is drained by its control thread, not looked at here */
		if (srv_ring_done(r))
			continue;
		w->pfd_ring[nfd] = r;
		w->pfd[nfd++] = (struct pollfd){ .fd = r->sq_efd, .events = POLLIN };
		w->pfd_ring[nfd] = r;
		w->pfd[nfd++] = (struct pollfd){ .fd = r->owner_efd, .events = POLLIN };
		t = srv_ring_sleep_ms(r);
		if (t >= 0 && (timeout < 0 || t < timeout))
			timeout = t;
	}
	if (list_current(w) && !atomic_load(&p->stop)) {
		hook(SRV_POOL_AT_SLEEP, w, NULL);
		n = poll(w->pfd, nfd, timeout);
		if (n > 0) {
			if (w->pfd[0].revents)
				efd_read(w->efd);
			for (unsigned i = 1; i < nfd; i += 2) {
				struct srv_ring *r = w->pfd_ring[i];

				if (!(w->pfd[i].revents | w->pfd[i + 1].revents))
					continue;
				__atomic_fetch_add(&r->ctl->wakeups, 1, __ATOMIC_RELAXED);
				if (w->pfd[i].revents) {
					/*
					 * The bell after the drain (proto.h): set
					 * again, its writer's write comes after
					 * this drain and wakes a later poll; a
					 * client that found it set wrote nothing,
					 * and its SQEs are seen by our passes
					 * after this clear (their tail and limit
					 * loads are seq_cst, as this store).
					 * Cleared first, a write drained here
					 * would leave it set with nothing to wake
					 * us.
					 */
					srv_efd_drain(r->sq_efd);
					__atomic_store_n(&r->ctl->sq_bell, 0, __ATOMIC_SEQ_CST);
				}
				if (w->pfd[i + 1].revents)
					efd_read(r->owner_efd);
			}
		}
		hook(SRV_POOL_AT_WOKEN, w, NULL);
	}
	set_active(w, true);
	{
		uint64_t now = srv_now_us();

		for (unsigned i = 0; i < w->n; i++) {
			srv_ring_need_wakeup(w->l[i], false);
			srv_ring_woken(w->l[i], now);
		}
	}
	hook(SRV_POOL_AT_AWAKE, w, NULL);
}

static void *worker_main(void *arg)
{
	struct pworker *w = arg;
	struct srv_pool *p = w->p;
	unsigned start = 0, spins = 0, crowded = 0;
	uint64_t now = 0;
	bool clock_due = true;

	/* a nap is as long as asked, not the default 50 us slack longer */
	(void)prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0);
	while (!atomic_load(&p->stop)) {
		enum srv_idle want = SRV_IDLE_SLEEP;
		unsigned did = 0;

		list_refresh(w);
		/*
		 * A clock read costs as much as a pause here: while pausing,
		 * once in POOL_CLOCK_EVERY loops; after anything else (work,
		 * a sleep, a nap, a yield, which may have lasted a time
		 * slice) at once.
		 */
		if (clock_due || !(spins % POOL_CLOCK_EVERY)) {
			now = srv_now_us();
			clock_due = false;
		}
		for (unsigned i = 0; i < w->n; i++) {
			struct srv_ring *r = w->l[(start + i) % w->n];
			const void *last;
			enum srv_idle idle;

			if (!list_current(w))
				break;
			if (srv_ring_done(r))
				continue;
			/*
			 * A ring whose last pass found nothing and left
			 * nothing alive waits only for SQEs: a look at its
			 * tail, not a pass (two mutexes, the engine's reap
			 * and commit), so that the client's next batch is
			 * seen within a few loads.
			 */
			if (!srv_ring_quiet(r))
				did += serve(w, r, now, true);
			/* a ring polls on only for the worker that last did its work */
			last = __atomic_load_n(&r->last_worker, __ATOMIC_RELAXED);
			if (last && last != w)
				continue;
			idle = srv_ring_idle(r, now);
			if (idle > want)
				want = idle;
		}
		start++;
		if (!list_current(w))
			continue;
		if (did) {
			spins = 0;
			crowded = 0;
			clock_due = true;
			wake_helper(w, now);
			continue;
		}
		clock_due = true;	/* unless only a pause follows */
		if (want >= SRV_IDLE_BUSY)
			atomic_fetch_add_explicit(&p->empty_polls, 1, memory_order_relaxed);
		if (want == SRV_IDLE_BUSY && srv_crowded(&p->crowd, now)) {
			/*
			 * Crowded: the busy poll holds a CPU that a client (ours
			 * or not) wants. Yield at each look, and sleep after a
			 * few that found nothing: the client then rings the
			 * doorbell, a wake-up per batch instead of a CPU per
			 * client.
			 */
			if (++crowded <= POOL_CROWDED_POLLS) {
				sched_yield();
				continue;
			}
			atomic_fetch_add_explicit(&p->crowded_sleeps, 1, memory_order_relaxed);
			want = SRV_IDLE_SLEEP;
		}
		if (want == SRV_IDLE_SLEEP) {
			worker_sleep(w);
			spins = 0;
			crowded = 0;
		} else if (want == SRV_IDLE_NAP) {
			struct timespec nap = { .tv_nsec = POOL_NAP_NS };

			/*
			 * Every ring polling is a SQPOLL one whose client
			 * leaves CQEs unreaped: it is off the CPU, perhaps
			 * waiting for ours.
			 */
			nanosleep(&nap, NULL);
		} else if (++spins < POOL_SPIN_PAUSES) {
			clock_due = false;
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		} else {
			/*
			 * With more runnable threads than CPUs the client we
			 * wait for may need this CPU, and spinning on would
			 * keep it off for a time slice per batch.
			 */
			sched_yield();
		}
	}
	return NULL;
}

/* A new worker, awake; under p->lock. */
static int worker_start(struct srv_pool *p)
{
	struct pworker *w;
	int ret;

	if (p->nr_w == p->cap_w) {
		unsigned cap = p->cap_w ? 2 * p->cap_w : 4;
		struct pworker **a = realloc(p->w, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		p->w = a;
		p->cap_w = cap;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->p = p;
	w->seen_gen = atomic_load(&p->gen) - 1;	/* takes the list first thing */
	atomic_init(&w->stuck_flag, false);
	atomic_init(&w->cur, NULL);
	atomic_init(&w->since, 0);
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0) {
		free(w);
		return -errno;
	}
	ret = -pthread_create(&w->thread, NULL, worker_main, w);
	if (ret) {
		close(w->efd);
		free(w);
		return ret;
	}
	p->w[p->nr_w++] = w;
	active_set_locked(w, true);
	return 0;
}

/*
 * The watchdog: a worker in one pass for over SRV_STALL_MS counts as gone
 * (the ring's client holds it); a spare replaces it while fewer than base
 * are left, else a sleeping one is woken if none is awake.
 */
static void *watchdog_main(void *arg)
{
	struct srv_pool *p = arg;
	struct pollfd pfd = { .fd = p->wd_efd, .events = POLLIN };

	while (!atomic_load(&p->stop)) {
		uint64_t now;
		bool marked = false;

		if (poll(&pfd, 1, (int)p->stall_ms / 2) > 0)
			efd_read(p->wd_efd);
		now = srv_now_us();
		pthread_mutex_lock(&p->lock);
		for (unsigned i = 0; i < p->nr_w; i++) {
			struct pworker *w = p->w[i];
			uint64_t since = atomic_load_explicit(&w->since, memory_order_relaxed);

			if (!since || w->stuck || now - since < p->stall_ms * 1000ull)
				continue;
			w->stuck = true;
			active_set_locked(w, false);
			p->nr_stuck++;
			atomic_store(&w->stuck_flag, true);
			marked = true;
		}
		if (marked && p->nr_w - p->nr_stuck < p->base) {
			(void)worker_start(p);
		} else if (marked && !p->active) {
			for (unsigned i = 0; i < p->nr_w; i++) {
				if (!p->w[i]->stuck) {
					p->w[i]->waking = true;
					efd_write(p->w[i]->efd);
					break;
				}
			}
		}
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

static void pool_free(struct srv_pool *p)
{
	atomic_store(&p->stop, true);
	if (p->wd_live) {
		efd_write(p->wd_efd);
		pthread_join(p->wd, NULL);
	}
	for (unsigned i = 0; i < p->nr_w; i++) {
		efd_write(p->w[i]->efd);
		pthread_join(p->w[i]->thread, NULL);
		close(p->w[i]->efd);
		free(p->w[i]->l);
		free(p->w[i]->pfd);
		free(p->w[i]->pfd_ring);
		free(p->w[i]);
	}
	if (p->wd_efd >= 0)
		close(p->wd_efd);
	srv_crowd_fini(&p->crowd);
	free(p->w);
	free(p->rings);
	pthread_cond_destroy(&p->acked);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static struct srv_pool *pool_new(struct srv_daemon *d)
{
	struct srv_pool *p = calloc(1, sizeof(*p));
	long ncpu;

	if (!p)
		return NULL;
	p->d = d;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->acked, NULL);
	atomic_init(&p->gen, 1);
	atomic_init(&p->stop, false);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	p->base = d->pool_workers ? d->pool_workers : ncpu > 0 ? (unsigned)ncpu : 1u;
	p->stall_ms = d->pool_stall_ms ? d->pool_stall_ms : SRV_STALL_MS;
	if (p->base > POOL_MAX_BASE)
		p->base = POOL_MAX_BASE;
	srv_crowd_init(&p->crowd, ncpu > 0 ? (unsigned)ncpu : 1u);
	p->wd_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->wd_efd < 0)
		goto fail;
	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->base; i++)
		if (worker_start(p))
			break;
	pthread_mutex_unlock(&p->lock);
	if (!p->nr_w)
		goto fail;
	if (pthread_create(&p->wd, NULL, watchdog_main, p))
		goto fail;
	p->wd_live = true;
	return p;
fail:
	pool_free(p);
	return NULL;
}

int srv_pool_add(struct srv_daemon *d, struct srv_ring *r)
{
	struct srv_pool *p;
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	p = d->pool;
	if (!p) {
		p = pool_new(d);
		if (!p) {
			pthread_mutex_unlock(&d->lock);
			return -EAGAIN;
		}
		d->pool = p;
	}
	pthread_mutex_lock(&p->lock);
	if (p->nr == p->cap) {
		unsigned cap = p->cap ? 2 * p->cap : 16;
		struct srv_ring **a = realloc(p->rings, cap * sizeof(*a));

		if (a) {
			p->rings = a;
			p->cap = cap;
		} else {
			ret = -ENOMEM;
		}
	}
	if (!ret) {
		p->rings[p->nr++] = r;
		atomic_fetch_add(&p->gen, 1);
		p->refs++;
		/* a sleeping worker must poll the new ring's eventfds */
		for (unsigned i = 0; i < p->nr_w; i++)
			efd_write(p->w[i]->efd);
	}
	pthread_mutex_unlock(&p->lock);
	if (!p->refs) {
		d->pool = NULL;
		pthread_mutex_unlock(&d->lock);
		pool_free(p);
		return ret;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* Has every worker let go of r? Under p->lock. */
static bool let_go(const struct srv_pool *p, const struct srv_ring *r, unsigned gen)
{
	for (unsigned i = 0; i < p->nr_w; i++) {
		const struct pworker *w = p->w[i];
		struct srv_ring *cur = atomic_load(&w->cur);

		/* in a pass of another ring: it checks the list before touching any other */
		if ((int)(w->seen_gen - gen) < 0 && (!cur || cur == r))
			return false;
	}
	return true;
}

void srv_pool_remove(struct srv_daemon *d, struct srv_ring *r)
{
	struct srv_pool *p;
	unsigned gen = 0;
	bool found = false;

	pthread_mutex_lock(&d->lock);
	p = d->pool;
	if (p) {
		pthread_mutex_lock(&p->lock);
		for (unsigned i = 0; i < p->nr; i++) {
			if (p->rings[i] == r) {
				p->rings[i] = p->rings[--p->nr];
				found = true;
				break;
			}
		}
		if (found) {
			gen = atomic_fetch_add(&p->gen, 1) + 1;
			/* the ring's ref is now the remover's, until the workers let go */
			for (unsigned i = 0; i < p->nr_w; i++)
				efd_write(p->w[i]->efd);
		}
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&d->lock);
	if (!found)
		return;
	pthread_mutex_lock(&p->lock);
	while (!let_go(p, r, gen))
		pthread_cond_wait(&p->acked, &p->lock);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_lock(&d->lock);
	if (!--p->refs) {
		/* the last ring: the workers stop */
		d->pool = NULL;
		pthread_mutex_unlock(&d->lock);
		pool_free(p);
		return;
	}
	pthread_mutex_unlock(&d->lock);
}

void srv_pool_stats(struct srv_daemon *d, struct srv_pool_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&d->lock);
	if (d->pool) {
		st->helper_wakes = atomic_load(&d->pool->helper_wakes);
		st->empty_polls = atomic_load(&d->pool->empty_polls);
		st->crowded_sleeps = atomic_load(&d->pool->crowded_sleeps);
	}
	pthread_mutex_unlock(&d->lock);
}

unsigned srv_pool_nr_workers(struct srv_daemon *d)
{
	unsigned n = 0;

	pthread_mutex_lock(&d->lock);
	if (d->pool) {
		pthread_mutex_lock(&d->pool->lock);
		n = d->pool->nr_w;
		pthread_mutex_unlock(&d->pool->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return n;
}
