/* SPDX-License-Identifier: MIT */
/*
 * The daemon backend's rings. The daemon creates the ring in a memfd with
 * Linux's layout and sends it with two eventfds; we map it and fill struct
 * ucmd_ring exactly as the native backend fills it from its own memfd
 * (core/setup.c), so ucmd.h's inline helpers and ucmd_submit/ucmd_wait_cqe
 * run unchanged. Behind the ring a thread of the daemon (called the proxy
 * below: it owns the engine ring whose memory this is) consumes the SQ, as
 * a SQPOLL thread does, but ring->flags says only what the caller
 * asked for: without IORING_SETUP_SQPOLL there, ucmd_submit() calls ->enter
 * every time, which costs two loads and no system call while the proxy is
 * awake, and lets a submission to a daemon that is gone answer -ENOTCONN
 * instead of queueing SQEs nobody will read. As with SQPOLL, SQEs are
 * consumed after ucmd_submit() returns, so ucmd_get_sqe() may find the SQ
 * full until the proxy took them; but ucmd_submit() returns what it
 * published (UCMD_INT_FLAG_SQ_POLLED), as on a ring without SQPOLL.
 *
 * ->enter is then: the doorbell (write the sq eventfd when the proxy said
 * IORING_SQ_NEED_WAKEUP, or holds overflowed CQEs), and the completion
 * wait: spin up to DC_SPIN_NS on the CQ, then tell the daemon we sleep
 * (ctl->cq_fwaiting), check again, and sleep on the control page's futex,
 * looking at the socket, whose hang-up means the daemon is gone
 * (-ENOTCONN, as is ctl->state == UCMDD_RING_DEAD, set by a daemon that
 * stops), each DC_SLEEP_MAX_MS. With a signal mask to install, or a daemon
 * that predates the futex: ctl->cq_waiting, and ppoll() on the cq eventfd
 * and the socket.
 *
 * Every enter, and every look at the CQ while waiting, also copies out
 * what the daemon completed in the ring's read bounce area (bounce.c):
 * those reads' CQEs show only after that.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "ring/ring.h"
#include "core/backend.h"
#include "lib/clock.h"
#include "lib/cpu.h"

/*
 * How long a waiter polls the CQ before it sleeps: about the daemon's
 * wake-up cost (an eventfd write and a futex wake, a few microseconds), so
 * a completion that is that close costs no sleep and no system call on
 * either side; anything longer sleeps.
 */
#define DC_SPIN_NS 20000ull
/* pure spins before each further one yields the CPU */
#define DC_SPIN_PAUSES 256u
/* the wait's spin reads the clock once in this many looks */
#define DC_CLOCK_EVERY 16u
/*
 * A sleep is cut at this length and the CQ looked at again. On the cq
 * eventfd only a second thread waiting on the same ring can need it: it
 * may have drained the eventfd for a wake-up that was ours (one waiter
 * never loses a wake-up). On the futex it is how a daemon that was killed
 * before it could mark the ring dead is found gone (its socket's hang-up).
 */
#define DC_SLEEP_MAX_MS 100
/* submit's wait for the proxy to take what it submitted: a head stuck this long ends it */
#define DC_SUBMIT_STUCK_NS 1000000000ull

static struct dring *to_dr(const struct ucmd_ring *ring)
{
	return ring->backend;
}

static bool ring_dead(const struct dring *dr)
{
	return atomic_load(&dr->dc->dead) ||
	       __atomic_load_n(&dr->ctl->state, __ATOMIC_ACQUIRE) == UCMDD_RING_DEAD;
}

/* Does the mapped layout fit the memfd? The daemon's word is checked, not trusted. */
static bool layout_ok(const struct ucmdd_queue_init_rep *rep, size_t size)
{
	const struct io_sqring_offsets *so = &rep->p.sq_off;
	const struct io_cqring_offsets *co = &rep->p.cq_off;
	uint64_t sqe_sz = (rep->p.flags & IORING_SETUP_SQE128) ? 128 : 64;
	uint64_t cqe_sz = (rep->p.flags & IORING_SETUP_CQE32) ? 32 : 16;
	uint64_t sq_n = rep->p.sq_entries, cq_n = rep->p.cq_entries;
	const uint32_t words[] = { so->head, so->tail, so->ring_mask, so->ring_entries, so->flags,
				   so->dropped, co->head, co->tail, co->ring_mask,
				   co->ring_entries, co->overflow, co->flags };

	if (!sq_n || !cq_n || (sq_n & (sq_n - 1)) || (cq_n & (cq_n - 1)))
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if ((words[i] & 3) || (uint64_t)words[i] + 4 > size)
			return false;
	return !(so->array & 3) && so->array + sq_n * 4 <= size && !(co->cqes & 15) &&
	       co->cqes + cq_n * cqe_sz <= size && !(rep->sqes_off & 63) &&
	       rep->sqes_off + sq_n * sqe_sz <= size && !(rep->ctl_off & 7) &&
	       rep->ctl_off + sizeof(struct ucmdd_ring_ctl) <= size;
}

/*
 * UCMDD_QI_SUBMIT_COPY: the program's SQ after the control page, where
 * proto.h says, if the memfd holds it (the daemon's word is checked).
 */
/*
 * A word at off is clear of every word the ring's layout names, and of its
 * CQEs, below which it lies (a program told of no SQ array maps no further).
 */
static bool word_clear(const struct ucmdd_queue_init_rep *rep, uint64_t off)
{
	const struct io_sqring_offsets *so = &rep->p.sq_off;
	const struct io_cqring_offsets *co = &rep->p.cq_off;
	const uint32_t words[] = { so->head, so->tail, so->ring_mask, so->ring_entries, so->flags,
				   so->dropped, co->head, co->tail, co->ring_mask,
				   co->ring_entries, co->overflow, co->flags };

	if (off & 3 || off + 4 > co->cqes)
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (words[i] == off)
			return false;
	return true;
}

static int psq_map(struct dring *dr, const struct ucmdd_queue_init_rep *rep)
{
	uint32_t sqe_sz = (rep->p.flags & IORING_SETUP_SQE128) ? 128 : 64;
	bool no_array = rep->p.flags & IORING_SETUP_NO_SQARRAY;
	uint64_t head = rep->p.sq_off.head + (uint64_t)UCMDD_PSQ_NOARRAY_OFF;
	uint64_t tail = rep->p.sq_off.tail + (uint64_t)UCMDD_PSQ_NOARRAY_OFF;
	char *b;

	if ((rep->p.flags & IORING_SETUP_SQPOLL) || rep->ctl_off < rep->sqes_off ||
	    (rep->ctl_off & (UCMDD_PSQ_PAGE - 1)) ||
	    rep->ctl_off + ucmdd_psq_len(rep->p.sq_entries, sqe_sz) > dr->mem_len)
		return -EPROTO;
	/* no array: the head and tail in the rings the program maps (proto.h) */
	if (no_array && (head == tail || !word_clear(rep, head) || !word_clear(rep, tail)))
		return -EPROTO;
	b = (char *)dr->mem + rep->ctl_off;
	dr->psq_head = no_array ? (unsigned *)((char *)dr->mem + head)
				: (unsigned *)(b + UCMDD_PSQ_HEAD);
	dr->psq_tail = no_array ? (unsigned *)((char *)dr->mem + tail)
				: (unsigned *)(b + UCMDD_PSQ_TAIL);
	dr->psq_array = no_array ? NULL : (unsigned *)(b + UCMDD_PSQ_ARRAY);
	dr->psq_sqes = b + ucmdd_psq_sqes(rep->p.sq_entries);
	dr->psq_xlock = (uint32_t *)(b + UCMDD_PSQ_XLOCK);
	dr->psq_khead = (unsigned *)(b + UCMDD_PSQ_KHEAD);
	__atomic_store_n(dr->psq_xlock, 0, __ATOMIC_RELAXED);
	__atomic_store_n(dr->psq_khead, 0, __ATOMIC_RELAXED);
	/* the identity to start with, as the ring's own array (and liburing's mapping) */
	for (unsigned i = 0; dr->psq_array && i < rep->p.sq_entries; i++)
		dr->psq_array[i] = i;
	__atomic_store_n(dr->psq_head, 0, __ATOMIC_RELEASE);
	__atomic_store_n(dr->psq_tail, 0, __ATOMIC_RELEASE);
	return 0;
}

int dc_queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		  struct io_uring_params *p)
{
	return dc_queue_init_flags(e, entries, ring, p, 0);
}

static int queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p, unsigned qi_flags, int relay_fd);

int dc_queue_init_flags(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			struct io_uring_params *p, unsigned qi_flags)
{
	return queue_init(e, entries, ring, p, qi_flags & ~UCMDD_QI_RELAY, -1);
}

int dc_queue_init_relay(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			struct io_uring_params *p, const struct ucmd_ring *shared)
{
	return queue_init(e, entries, ring, p, UCMDD_QI_RELAY, shared->ring_fd);
}

static int queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p, unsigned qi_flags, int relay_fd)
{
	struct dclient *dc = backend_engine_priv(e);
	struct ucmdd_queue_init req = { .entries = entries, .flags = qi_flags, .p = *p };
	struct ucmdd_queue_init_rep rep;
	struct dring *dr = NULL;
	struct stat st;
	size_t len = 0;
	int fds[3] = { -1, -1, -1 };
	int ret;

	memset(ring, 0, sizeof(*ring));
	ring->ring_fd = -1;
	memset(&rep, 0, sizeof(rep));
	ret = dc_call(dc, UCMDD_QUEUE_INIT, &req, sizeof(req), relay_fd >= 0 ? &relay_fd : NULL,
		      relay_fd >= 0 ? 1 : 0, &rep, sizeof(rep), &len, fds, 3);
	if (ret < 0)
		return ret;
	dr = calloc(1, sizeof(*dr));
	if (!dr) {
		ret = -ENOMEM;
		goto fail;
	}
	dr->dc = dc;
	dr->ring_id = rep.ring_id;
	dr->sq_efd = fds[1];
	dr->cq_efd = fds[2];
	dr->mem = MAP_FAILED;
	atomic_init(&dr->waiters, 0);
	pthread_mutex_init(&dr->psq_lock, NULL);
	/* a short memfd would fault (SIGBUS) where the layout says there is memory */
	if (len != sizeof(rep) || rep.mmap_size > SIZE_MAX || fstat(fds[0], &st) ||
	    (uint64_t)st.st_size < rep.mmap_size || !layout_ok(&rep, (size_t)rep.mmap_size)) {
		ret = -EPROTO;
		goto fail;
	}
	dr->mem_len = (size_t)rep.mmap_size;
	if (rep.ctl_off < rep.sqes_off) {
		/* the SQEs far out (UCMDD_QI_SQES_AT_OFF): the hole before them is not mapped */
		size_t head = ((size_t)rep.ctl_off + sizeof(struct ucmdd_ring_ctl) + 4095) &
			      ~(size_t)4095;

		dr->mem = head <= rep.sqes_off && !(rep.sqes_off & 4095)
				  ? io_rings_map_split(fds[0], head, (size_t)rep.sqes_off,
						       dr->mem_len)
				  : MAP_FAILED;
		if (dr->mem == MAP_FAILED && head > rep.sqes_off)
			errno = EPROTO;
	} else {
		dr->mem = mmap(NULL, dr->mem_len, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_POPULATE, fds[0], 0);
	}
	if (dr->mem == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	/* several of our threads may read the cq eventfd: none may block in read() */
	if (fcntl(dr->cq_efd, F_SETFL, fcntl(dr->cq_efd, F_GETFL) | O_NONBLOCK)) {
		ret = -errno;
		goto fail;
	}
	dr->ctl = (struct ucmdd_ring_ctl *)((char *)dr->mem + rep.ctl_off);
	/* the daemon's word, read once: a daemon that predates it leaves 0 */
	dr->cq_futex = __atomic_load_n(&dr->ctl->features, __ATOMIC_RELAXED) & UCMDD_CTL_CQ_FUTEX;
	dr->sq_bell = __atomic_load_n(&dr->ctl->features, __ATOMIC_RELAXED) & UCMDD_CTL_SQ_BELL;
	if (qi_flags & UCMDD_QI_SUBMIT_COPY) {
		ret = psq_map(dr, &rep);
		if (ret)
			goto fail;
	}
	*p = rep.p;
	ring->flags = rep.p.flags;
	/* the proxy takes what is published: ucmd_submit() counts that */
	ring->int_flags = UCMD_INT_FLAG_SQ_POLLED;
	ring->features = rep.p.features;
	ring->engine = e;
	ring->ops = &daemon_backend;
	ring->backend = dr;
	ring->ring_fd = fds[0];
	ring->enter_ring_fd = ring->ring_fd;
	backend_ring_map(ring, &rep.p, dr->mem, dr->mem_len, rep.sqes_off);
	if (dr->psq_tail) {
		/* the program is told of its own SQ; the rest of the layout is the ring's */
		p->sq_off.head = (uint32_t)((char *)dr->psq_head - (char *)dr->mem);
		p->sq_off.tail = (uint32_t)((char *)dr->psq_tail - (char *)dr->mem);
		/* no SQ array: Linux tells of none (offset 0) */
		p->sq_off.array = dr->psq_array ? (uint32_t)(rep.ctl_off + UCMDD_PSQ_ARRAY) : 0;
		p->sq_off.resv2 = rep.ctl_off + ucmdd_psq_sqes(rep.p.sq_entries);
	}
	/*
	 * Reads into our plain memory complete in an area we copy out of when
	 * we enter: not for a SQPOLL ring (its owner need not enter), nor for
	 * the supervisor's rings (the memory is its child's, not ours).
	 */
	if (!(rep.p.flags & IORING_SETUP_SQPOLL) && !(qi_flags & UCMDD_QI_SQES_AT_OFF))
		dr->bounce = dc_bounce_attach(dc, dr->ring_id);
	return 0;
fail:
	if (dr && dr->mem != MAP_FAILED)
		munmap(dr->mem, dr->mem_len);
	if (dr)
		pthread_mutex_destroy(&dr->psq_lock);
	free(dr);
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	{
		struct ucmdd_ring_id id = { .ring_id = rep.ring_id };

		/* the daemon made the ring: give it back */
		dc_call(dc, UCMDD_QUEUE_EXIT, &id, sizeof(id), NULL, 0, NULL, 0, NULL, NULL, 0);
	}
	memset(ring, 0, sizeof(*ring));
	ring->ring_fd = -1;
	return ret;
}

int dc_queue_init_psq(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p)
{
	struct io_uring_params in = *p;
	int ret;

	if (!(p->flags & IORING_SETUP_SQPOLL)) {
		ret = dc_queue_init_flags(e, entries, ring, p, UCMDD_QI_SUBMIT_COPY);
		/* a ucmdd that predates the flag refuses it: the shared SQ then */
		if (ret != -EINVAL)
			return ret;
		*p = in;
	}
	return dc_queue_init_flags(e, entries, ring, p, 0);
}

void dc_queue_exit(struct ucmd_ring *ring)
{
	struct dring *dr = to_dr(ring);
	struct ucmdd_ring_id id = { .ring_id = dr->ring_id };

	/* the daemon completes or cancels what the ring holds, then answers */
	dc_call(dr->dc, UCMDD_QUEUE_EXIT, &id, sizeof(id), NULL, 0, NULL, 0, NULL, NULL, 0);
	dc_bounce_detach(dr->bounce);
	munmap(dr->mem, dr->mem_len);
	close(dr->sq_efd);
	close(dr->cq_efd);
	close(ring->ring_fd);
	pthread_mutex_destroy(&dr->psq_lock);
	free(dr);
	memset(ring, 0, sizeof(*ring));
	ring->ring_fd = -1;
}

static void doorbell(struct dring *dr)
{
	uint64_t one = 1;

	/*
	 * A doorbell written and not yet emptied wakes the daemon, whose look
	 * after emptying it sees what we published before this swap (seq_cst:
	 * after our tail store, before its clear and look; proto.h): a second
	 * write would only cost a system call. Two fio jobs on two CPUs rang
	 * for nearly every read while the daemon slept.
	 */
	if (dr->sq_bell && __atomic_exchange_n(&dr->ctl->sq_bell, 1, __ATOMIC_SEQ_CST))
		return;
	/* an eventfd write fails only at a counter of 2^64-2: the proxy is awake then */
	if (write(dr->sq_efd, &one, sizeof(one)) < 0)
		return;
}

/*
 * Wake the proxy when it sleeps and has something to do: SQEs we published
 * (the caller's seq_cst tail store pairs with its NEED_WAKEUP-then-recheck),
 * or overflowed CQEs that only it can move into the CQ we just reaped.
 */
static void kick(struct ucmd_ring *ring, unsigned to_submit, unsigned flags)
{
	unsigned sqf = __atomic_load_n(ring->sq.kflags, __ATOMIC_SEQ_CST);

	if ((flags & IORING_ENTER_SQ_WAKEUP) ||
	    ((to_submit || (sqf & IORING_SQ_CQ_OVERFLOW)) && (sqf & IORING_SQ_NEED_WAKEUP)))
		doorbell(to_dr(ring));
}

/*
 * Copy out what the daemon completed in the bounce area and show their
 * CQEs; those only the daemon can show wait for it to see done: wake it if
 * it sleeps.
 */
static void bounce_reap(struct ucmd_ring *ring)
{
	struct dring *dr = to_dr(ring);

	if (dr->bounce && dc_bounce_reap(dr->bounce, ring->cq.ktail) &&
	    (__atomic_load_n(ring->sq.kflags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP))
		doorbell(dr);
}

static unsigned cq_ready(const struct ucmd_ring *ring)
{
	return __atomic_load_n(ring->cq.ktail, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(ring->cq.khead, __ATOMIC_RELAXED);
}

/*
 * The proxy wrote the CQEs on another CPU: ask for all of their lines at
 * once, so that the caller's walk over them overlaps the misses instead of
 * paying them one after the other.
 */
static void cqes_prefetch(const struct ucmd_ring *ring)
{
	unsigned head = __atomic_load_n(ring->cq.khead, __ATOMIC_RELAXED);
	unsigned n = cq_ready(ring), shift = ucmd_cqe_shift(ring);

	if (n > ring->cq.ring_entries)
		n = ring->cq.ring_entries;
	for (unsigned i = 0; i < n; i += 4u >> shift)
		__builtin_prefetch(&ring->cq.cqes[((head + i) & ring->cq.ring_mask) << shift]);
}

static bool sq_full(const struct ucmd_ring *ring)
{
	return *ring->sq.ktail - __atomic_load_n(ring->sq.khead, __ATOMIC_ACQUIRE) >=
	       ring->sq.ring_entries;
}

/*
 * A look before a sleep for CQEs: 1 enough are there, -ENOTCONN the daemon
 * is gone, 0 sleep (the proxy kicked for overflowed CQEs, which it moves in
 * once there is room).
 */
static int cq_look(struct ucmd_ring *ring, unsigned min_complete)
{
	bounce_reap(ring);
	if (cq_ready(ring) >= min_complete)
		return 1;
	if (ring_dead(to_dr(ring)))
		return -ENOTCONN;
	kick(ring, 0, 0);
	return 0;
}

/* A sleep's length: DC_SLEEP_MAX_MS, or less to the deadline (0: none); -ETIME past it. */
static int sleep_len(uint64_t deadline, struct timespec *ts)
{
	uint64_t ns = (uint64_t)DC_SLEEP_MAX_MS * 1000000ull;

	if (deadline) {
		uint64_t now = ktime_get_ns();

		if (now >= deadline)
			return -ETIME;
		if (deadline - now < ns)
			ns = deadline - now;
	}
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
	return 0;
}

/* Sleep until woken, the deadline (0: none) or the daemon's hang-up. */
static int sleep_once(struct dring *dr, uint64_t deadline, const sigset_t *sigmask)
{
	struct pollfd pfd[2] = {
		{ .fd = dr->cq_efd, .events = POLLIN },
		/* only the hang-up: a reply to another thread's request is not ours */
		{ .fd = dr->dc->sock, .events = POLLRDHUP },
	};
	struct timespec ts;
	int n = sleep_len(deadline, &ts);

	if (n)
		return n;
	n = ppoll(pfd, 2, &ts, sigmask);
	if (n < 0)
		return errno == EINTR ? -EINTR : -errno;
	if (pfd[1].revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) {
		dc_kill(dr->dc);
		return -ENOTCONN;
	}
	return 0;
}

/*
 * Sleep on the control page's futex until the daemon bumps it from seq,
 * the deadline (0: none), DC_SLEEP_MAX_MS, or a signal. A sleep that ran
 * out looks at the socket: a daemon killed before it could mark the ring
 * dead wakes nobody, and its hang-up says it is gone.
 */
static int futex_sleep_once(struct dring *dr, uint32_t seq, uint64_t deadline)
{
	struct pollfd pfd = { .fd = dr->dc->sock, .events = POLLRDHUP };
	struct timespec ts;
	long n = sleep_len(deadline, &ts);

	if (n)
		return (int)n;
	/* shared (no FUTEX_PRIVATE_FLAG): the daemon wakes it through its own mapping */
	n = syscall(SYS_futex, &dr->ctl->cq_futex, FUTEX_WAIT, seq, &ts, NULL, 0);
	if (n == 0 || errno == EAGAIN)
		return 0;
	if (errno == EINTR)
		return -EINTR;
	if (errno != ETIMEDOUT)
		return -errno;
	if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL))) {
		dc_kill(dr->dc);
		return -ENOTCONN;
	}
	return 0;
}

/*
 * The sleep of cq_wait on the futex (a daemon that offers it, no signal
 * mask to install): no eventfd to drain, one system call per sleep, and
 * every sleeper is woken, so no wake-up needs passing on.
 */
static int cq_wait_futex(struct ucmd_ring *ring, unsigned min_complete, uint64_t deadline)
{
	struct dring *dr = to_dr(ring);
	int ret = 0;

	/* seq_cst: pairs with the daemon's CQ tail store, then its cq_fwaiting load */
	__atomic_fetch_add(&dr->ctl->cq_fwaiting, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		/* the word before the look: a bump after the look fails the wait at once */
		uint32_t seq = __atomic_load_n(&dr->ctl->cq_futex, __ATOMIC_SEQ_CST);

		ret = cq_look(ring, min_complete);
		if (ret <= 0)
			ret = ret ? ret : futex_sleep_once(dr, seq, deadline);
		if (ret)
			break;
	}
	__atomic_fetch_sub(&dr->ctl->cq_fwaiting, 1, __ATOMIC_SEQ_CST);
	if (ret > 0 || (ret && cq_ready(ring) >= min_complete))
		ret = 0;
	return ret;
}

/*
 * Wait for min_complete CQEs. CQEs that are there are returned even from a
 * daemon that is gone: it posts what was in flight before it marks the ring
 * dead.
 */
static int cq_wait(struct ucmd_ring *ring, unsigned min_complete, uint64_t deadline,
		   const sigset_t *sigmask)
{
	struct dring *dr = to_dr(ring);
	uint64_t spin_end = ktime_get_ns() + DC_SPIN_NS;
	uint64_t cnt;
	int ret = 0;

	for (unsigned spins = 0; (bounce_reap(ring), cq_ready(ring) < min_complete); spins++) {
		if (ring_dead(dr))
			return -ENOTCONN;
		/* a clock read costs as much as a pause here: every DC_CLOCK_EVERY looks */
		if (!(spins % DC_CLOCK_EVERY) && ktime_get_ns() >= spin_end)
			break;
		/*
		 * A short pure spin catches a proxy that is running; then
		 * yield: with more runnable threads than CPUs (a busy
		 * machine), the proxy that would post our CQEs may be waiting
		 * for this very CPU, and spinning on would hold it off for a
		 * whole time slice per batch.
		 */
		if (spins < DC_SPIN_PAUSES)
			cpu_relax();
		else
			sched_yield();
	}
	if (cq_ready(ring) >= min_complete) {
		cqes_prefetch(ring);
		return 0;
	}
	/* ppoll installs a signal mask atomically with the sleep; a futex cannot */
	if (!sigmask && dr->cq_futex)
		return cq_wait_futex(ring, min_complete, deadline);
	atomic_fetch_add(&dr->waiters, 1);
	/* seq_cst: pairs with the daemon's CQ tail store, then its cq_waiting load */
	__atomic_fetch_add(&dr->ctl->cq_waiting, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		/* drain first, then look: a wake-up after the look stays counted */
		while (read(dr->cq_efd, &cnt, sizeof(cnt)) > 0)
			;
		ret = cq_look(ring, min_complete);
		if (ret <= 0)
			ret = ret ? ret : sleep_once(dr, deadline, sigmask);
		if (ret)
			break;
	}
	__atomic_fetch_sub(&dr->ctl->cq_waiting, 1, __ATOMIC_SEQ_CST);
	/* a wake-up this thread drained may have been another waiter's: pass it on */
	if (atomic_fetch_sub(&dr->waiters, 1) > 1) {
		uint64_t one = 1;

		if (write(dr->cq_efd, &one, sizeof(one)) < 0)
			cnt = 0;	/* the counter is full: they are awake */
	}
	if (ret > 0 || (ret && cq_ready(ring) >= min_complete))
		ret = 0;
	return ret;
}

/*
 * One step of waiting for the proxy to move the SQ head (it takes SQEs as
 * it copies them out): 0 go on waiting, 1 stop (it takes nothing until the
 * program reaps, sq_blocked, or the head has not moved for
 * DC_SUBMIT_STUCK_NS: a ring the program damaged), -ENOTCONN the daemon is
 * gone. Spins with pauses first, then yields; kicks the proxy (nkick SQEs)
 * every 256 steps, in case it went to sleep between a kick and its look.
 */
struct head_wait {
	unsigned spins, last;
	uint64_t since;
};

static int head_wait_step(struct ucmd_ring *ring, struct head_wait *w, unsigned head,
			  unsigned nkick)
{
	struct dring *dr = to_dr(ring);
	unsigned spins = w->spins++;

	if (ring_dead(dr))
		return -ENOTCONN;
	if (__atomic_load_n(&dr->ctl->sq_blocked, __ATOMIC_ACQUIRE))
		return 1;
	if (spins < DC_SPIN_PAUSES) {
		cpu_relax();
		return 0;
	}
	if (!w->since || head != w->last) {
		w->last = head;
		w->since = ktime_get_ns();
	} else if (ktime_get_ns() - w->since > DC_SUBMIT_STUCK_NS) {
		return 1;
	}
	if (!(spins & 255))
		kick(ring, nkick, 0);
	sched_yield();
	return 0;
}

/*
 * The SQEs of positions [from, to) of the ring's SQ, published by our
 * program, go to the proxy next: writes from plain memory copy their data
 * into the bounce area now (dc_bounce_wsubmit). A chain is only within
 * one submission, as Linux's.
 */
static void bounce_writes(struct ucmd_ring *ring, unsigned from, unsigned to)
{
	struct dring *dr = to_dr(ring);
	size_t sqe_sz = (ring->flags & IORING_SETUP_SQE128) ? 128 : 64;
	unsigned mask = ring->sq.ring_mask, entries = ring->sq.ring_entries;
	bool linked = false;

	for (unsigned pos = from; pos != to; pos++) {
		unsigned idx = ring->sq.array ? __atomic_load_n(&ring->sq.array[pos & mask],
							       __ATOMIC_RELAXED)
					      : pos & mask;
		const struct io_uring_sqe *sqe;

		if (idx >= entries) {
			linked = false;
			continue;	/* the proxy drops it */
		}
		sqe = (const struct io_uring_sqe *)((const char *)ring->sq.sqes + idx * sqe_sz);
		dc_bounce_wsubmit(dr->bounce, sqe, sqe_sz, pos, linked);
		linked = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
	}
}

/*
 * A ring without SQPOLL: submit as io_uring_enter(2) does, to_submit SQEs
 * at most and no more than were published, and return once the proxy has
 * taken them (the SQ head is where Linux leaves it after enter). How many
 * were submitted, or -ENOTCONN.
 */
static int submit_limit(struct ucmd_ring *ring, unsigned to_submit)
{
	struct dring *dr = to_dr(ring);
	unsigned lim, n, want;

	/*
	 * Writes' data goes into the bounce area before the limit lets the
	 * proxy take their SQEs: one submitter at a time then.
	 */
	if (dr->bounce)
		pthread_mutex_lock(&dr->psq_lock);
	/* CAS: two threads of ours may enter one ring, as Linux's uring_lock allows */
	lim = __atomic_load_n(&dr->ctl->sq_limit, __ATOMIC_RELAXED);
	do {
		n = __atomic_load_n(ring->sq.ktail, __ATOMIC_ACQUIRE) - lim;
		if (n > ring->sq.ring_entries)
			n = 0;	/* our own tail behind the limit: nothing new */
		if (n > to_submit)
			n = to_submit;
		if (!n) {
			if (dr->bounce)
				pthread_mutex_unlock(&dr->psq_lock);
			return 0;
		}
		want = lim + n;
		if (dr->bounce)
			bounce_writes(ring, lim, want);
	} while (!__atomic_compare_exchange_n(&dr->ctl->sq_limit, &lim, want, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	if (dr->bounce)
		pthread_mutex_unlock(&dr->psq_lock);
	kick(ring, n, 0);
	/*
	 * Wait for the proxy to take them, unless it says it takes nothing
	 * until we reap (sq_blocked): they stay submitted and go in as room
	 * comes (Linux would have taken them and overflowed the CQ). They are
	 * submitted either way: a head that does not move for a second (a
	 * ring our program damaged) ends the wait, not the call.
	 */
	struct head_wait w = { 0 };
	unsigned head;

	while ((int)(want - (head = __atomic_load_n(ring->sq.khead, __ATOMIC_ACQUIRE))) > 0) {
		int ret = head_wait_step(ring, &w, head, n);

		if (ret < 0)
			return ret;
		if (ret)
			break;
	}
	return (int)n;
}

/*
 * The ring's SQ has room for how many more (the proxy frees slots as it
 * copies SQEs out): wait for at least one unless the proxy takes nothing
 * until the program reaps (sq_blocked), or its head is stuck. 0: none.
 */
static int copy_room(struct ucmd_ring *ring, unsigned etail)
{
	struct head_wait w = { 0 };

	for (;;) {
		unsigned head = __atomic_load_n(ring->sq.khead, __ATOMIC_ACQUIRE);
		unsigned room = ring->sq.ring_entries - (etail - head);
		int ret;

		/* a head the proxy never stores (a damaged ring): no room */
		if (room && room <= ring->sq.ring_entries)
			return (int)room;
		ret = head_wait_step(ring, &w, head, 1);
		if (ret)
			return ret < 0 ? ret : 0;
	}
}

/*
 * The program's SQ and the ring's are shared by every process holding the
 * ring (a forked child's submit): this process's threads take psq_lock,
 * then the processes take the lock word in the memfd, holding their pid
 * (the kernel's uring_lock). A holder found gone (killed between two
 * loads) is taken over: what it left half-copied is the program's loss,
 * as a ring it damaged.
 */
static uint32_t self_pid;	/* getpid(), once per process: a submit is on the fast path */
static pthread_once_t self_pid_once = PTHREAD_ONCE_INIT;

static void self_pid_forked(void)
{
	__atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
}

static void self_pid_hook(void)
{
	(void)pthread_atfork(NULL, NULL, self_pid_forked);
}

static uint32_t my_pid(void)
{
	uint32_t p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);

	if (!p) {
		pthread_once(&self_pid_once, self_pid_hook);
		p = (uint32_t)getpid();
		__atomic_store_n(&self_pid, p, __ATOMIC_RELAXED);
	}
	return p;
}

static void psq_lock(struct dring *dr)
{
	uint32_t me = my_pid();

	pthread_mutex_lock(&dr->psq_lock);
	for (unsigned spins = 0;; spins++) {
		uint32_t cur = 0;

		if (__atomic_compare_exchange_n(dr->psq_xlock, &cur, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		if (spins < DC_SPIN_PAUSES) {
			cpu_relax();
			continue;
		}
		if (cur && kill((pid_t)cur, 0) && errno == ESRCH)
			__atomic_compare_exchange_n(dr->psq_xlock, &cur, 0, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		sched_yield();
	}
}

static void psq_unlock(struct dring *dr)
{
	__atomic_store_n(dr->psq_xlock, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dr->psq_lock);
}

bool dc_psq_own(struct ucmd_ring *ring)
{
	return to_dr(ring)->psq_tail != NULL;
}

void dc_ring_forked(struct ucmd_ring *ring)
{
	pthread_mutex_init(&to_dr(ring)->psq_lock, NULL);
}

void dc_psq_each_sqe(struct ucmd_ring *ring, unsigned to_submit,
		     void (*fn)(const struct io_uring_sqe *sqe, unsigned pos, void *ctx), void *ctx)
{
	struct dring *dr = to_dr(ring);
	unsigned entries = ring->sq.ring_entries, mask = ring->sq.ring_mask;
	size_t sqe_sz = (ring->flags & IORING_SETUP_SQE128) ? 128 : 64;
	bool own = dr->psq_tail != NULL;
	const unsigned *array = own ? dr->psq_array : ring->sq.array;
	const char *sqes = own ? dr->psq_sqes : (const char *)ring->sq.sqes;
	unsigned head, avail;

	/* an SQPOLL ring's poller takes SQEs without an enter: nothing to look at first */
	if (!own && (ring->flags & IORING_SETUP_SQPOLL))
		return;
	if (own) {
		psq_lock(dr);
		head = __atomic_load_n(dr->psq_khead, __ATOMIC_RELAXED);
		/* acquire: the program's SQEs before its tail, as submit_copy reads them */
		avail = __atomic_load_n(dr->psq_tail, __ATOMIC_ACQUIRE) - head;
	} else {
		/*
		 * The ring's own SQ (a daemon without the program's SQ): the proxy takes nothing past sq_limit, which
		 * only submit_limit moves, so what lies between it and the
		 * program's tail is still to come. A thread of ours moving it
		 * meanwhile makes a number looked at twice, or not at all for
		 * SQEs it took: theirs looked at their own.
		 */
		head = __atomic_load_n(&dr->ctl->sq_limit, __ATOMIC_RELAXED);
		avail = __atomic_load_n(ring->sq.ktail, __ATOMIC_ACQUIRE) - head;
	}
	if (avail > entries)
		avail = entries;
	if (to_submit > avail)
		to_submit = avail;
	for (unsigned k = 0; k < to_submit; k++, head++) {
		unsigned idx = array ? __atomic_load_n(&array[head & mask], __ATOMIC_RELAXED)
				     : head & mask;

		if (idx >= entries)
			continue;
		fn((const struct io_uring_sqe *)(sqes + (size_t)idx * sqe_sz), head, ctx);
	}
	if (own)
		psq_unlock(dr);
}

/*
 * A UCMDD_QI_SUBMIT_COPY ring: what the program submits is copied from its
 * SQ into the ring's, as Linux copies it in io_uring_enter(2) (to_submit
 * at most, and no more than it published), and its head moved past them:
 * its slots are free again, and the proxy takes the copies when it comes
 * to them. No wait for the proxy, unless the ring's SQ is full. An index
 * outside the SQE array goes to the ring's SQ as it is, for the proxy to
 * count in sq dropped, as Linux does. How many were submitted; -EAGAIN when
 * none fit because the proxy takes nothing until the program reaps (as
 * Linux answers when it is out of resources), -ENOTCONN.
 */
/*
 * plain's last yes: its answer depends only on what it is keyed by (its
 * contract, client.h), and a batch is mostly one operation on one
 * descriptor, so a run of SQEs alike is asked about once.
 */
struct plain_memo {
	uint64_t key;		/* plain_key's, PLAIN_NONE before the first yes */
	uint32_t file_index;
};

#define PLAIN_NONE (1ull << 9)	/* a bit no SQE's key has */

static inline uint64_t plain_key(const struct io_uring_sqe *sqe)
{
	return (uint64_t)(uint32_t)sqe->fd << 32 |
	       (uint64_t)(sqe->flags & IOSQE_FIXED_FILE) << 8 | sqe->opcode;
}

static inline bool plain_ask(const struct dc_plain *plain, const struct io_uring_sqe *sqe,
			     struct plain_memo *m)
{
	uint64_t key = plain_key(sqe);

	if (key == m->key && sqe->file_index == m->file_index)
		return true;
	if (!plain->fn(sqe, plain->ctx))
		return false;
	m->key = key;
	m->file_index = sqe->file_index;
	return true;
}

/*
 * How many SQ positions from pos on (max at most) plain lets go as they
 * are: whole chains only (the SQEs that link to the next and the one they
 * end at, an index outside the SQE array in none), 0 when the chain at pos
 * holds one it says no to. The chain is looked at before any of it is
 * copied: the caller's other path needs it whole (a chain mixing the
 * daemon's SQEs and others fails as one).
 */
/* out of the copy loop (noinline): a chain is rare, the loop's registers are not */
static unsigned __attribute__((noinline)) plain_chain(struct ucmd_ring *ring, unsigned pos,
						      unsigned max, const struct dc_plain *plain,
						      struct plain_memo *m)
{
	struct dring *dr = to_dr(ring);
	unsigned entries = ring->sq.ring_entries, mask = ring->sq.ring_mask;
	size_t sqe_sz = (ring->flags & IORING_SETUP_SQE128) ? 128 : 64;

	for (unsigned j = 0; j < max; j++, pos++) {
		unsigned idx = dr->psq_array ? __atomic_load_n(&dr->psq_array[pos & mask],
							       __ATOMIC_RELAXED)
					     : pos & mask;
		const struct io_uring_sqe *sqe;

		if (idx >= entries)
			continue;
		sqe = (const struct io_uring_sqe *)(dr->psq_sqes + (size_t)idx * sqe_sz);
		if (!plain_ask(plain, sqe, m))
			return 0;
		if (!(sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK)))
			return j + 1;
	}
	return max;	/* a chain the submission's end ends, as Linux ends it */
}

static int submit_copy(struct ucmd_ring *ring, unsigned to_submit, dc_divert_fn divert,
		       void *dctx, struct dc_plain *plain)
{
	struct dring *dr = to_dr(ring);
	unsigned entries = ring->sq.ring_entries, mask = ring->sq.ring_mask;
	size_t sqe_sz = (ring->flags & IORING_SETUP_SQE128) ? 128 : 64;
	unsigned head, avail, etail, done = 0;
	unsigned clear = 0;		/* SQ positions from head on that plain let go */
	struct plain_memo memo = { .key = PLAIN_NONE };
	bool plinked = false;		/* the SQE before, in this submission, links to the next */
	int ret = 0;

	psq_lock(dr);
	if (plain)
		plain->walked = true;
	head = __atomic_load_n(dr->psq_khead, __ATOMIC_RELAXED);
	/* acquire: the program's SQEs before its tail */
	avail = __atomic_load_n(dr->psq_tail, __ATOMIC_ACQUIRE) - head;
	if (avail > entries)
		avail = entries;	/* a tail more than a ring ahead: a ring's worth, as Linux */
	if (to_submit > avail)
		to_submit = avail;
	etail = __atomic_load_n(ring->sq.ktail, __ATOMIC_RELAXED);
	while (done < to_submit) {
		int room = copy_room(ring, etail);
		unsigned n;

		if (room <= 0) {
			ret = room;
			break;
		}
		unsigned copied = 0, k;
		struct io_uring_sqe *last = NULL;	/* the chunk's last copy */

		n = to_submit - done < (unsigned)room ? to_submit - done : (unsigned)room;
		for (k = 0; k < n; k++, head++) {
			unsigned idx = dr->psq_array ? __atomic_load_n(&dr->psq_array[head & mask],
								       __ATOMIC_RELAXED)
						     : head & mask;
			unsigned slot = etail & mask;

			/*
			 * The first chain plain says no to stays in the program's
			 * SQ, and the rest; an SQE linking to none (most) is asked
			 * about here, a chain's whole before its first is copied.
			 */
			if (plain && !clear && idx < entries) {
				const struct io_uring_sqe *psqe =
					(const struct io_uring_sqe *)(dr->psq_sqes +
								      (size_t)idx * sqe_sz);

				clear = psqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK)
						? plain_chain(ring, head, to_submit - done - k, plain,
							      &memo)
						: plain_ask(plain, psqe, &memo);
				if (!clear) {
					plain->left = to_submit - done - k;
					break;
				}
			}
			if (clear)
				clear--;

			/* taken by the caller (the preload's forwarding): no slot of the ring's */
			if (divert && idx < entries &&
			    divert((const struct io_uring_sqe *)(dr->psq_sqes + (size_t)idx * sqe_sz),
				   head, dctx)) {
				plinked = false;
				continue;
			}
			copied++;
			if (idx < entries) {
				const struct io_uring_sqe *sqe =
					(const struct io_uring_sqe *)((char *)ring->sq.sqes +
								      slot * sqe_sz);

				memcpy((void *)sqe, dr->psq_sqes + (size_t)idx * sqe_sz, sqe_sz);
				/* its write data into the bounce area, from the copy the proxy takes */
				dc_bounce_wsubmit(dr->bounce, sqe, sqe_sz, etail, plinked);
				plinked = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
				last = (struct io_uring_sqe *)sqe;
			} else {
				slot = idx;	/* the proxy drops it and counts it */
				plinked = false;
				last = NULL;
			}
			if (ring->sq.array)
				__atomic_store_n(&ring->sq.array[etail & mask], slot,
						 __ATOMIC_RELAXED);
			etail++;
		}
		done += k;
		/*
		 * A chain still open at the end of the submission ends there, as
		 * Linux's io_submit_state_end queues it as it is. The proxy takes
		 * whatever is published, which may run on into the program's
		 * next submission or a CQE the preload posts (dc_post_cqes):
		 * the copy's link flag would tie them to this chain. (A chain
		 * split by a full ring SQ, the chunks before this one, may still
		 * be taken in two passes and so end early.) A copy stopped short
		 * by plain ends after a whole chain: nothing open.
		 */
		if (done == to_submit && last)
			last->flags &= (uint8_t)~(IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
		if (copied) {
			/* seq_cst: pairs with the proxy's NEED_WAKEUP, then its look at the tail */
			__atomic_store_n(ring->sq.ktail, etail, __ATOMIC_SEQ_CST);
			kick(ring, copied, 0);
		}
		if (plain && plain->left)
			break;
	}
	__atomic_store_n(dr->psq_khead, head, __ATOMIC_RELAXED);
	/* the program's slots are free once copied */
	__atomic_store_n(dr->psq_head, head, __ATOMIC_RELEASE);
	psq_unlock(dr);
	if (done || (plain && plain->left))
		return (int)done;
	return ret == 0 && to_submit ? -EAGAIN : ret;
}

int dc_psq_take(struct ucmd_ring *ring, unsigned to_submit,
		int (*check)(const struct io_uring_sqe *sqe, void *ctx),
		int (*take)(const struct io_uring_sqe *sqe, void *ctx), void *ctx)
{
	struct dring *dr = to_dr(ring);
	unsigned entries = ring->sq.ring_entries, mask = ring->sq.ring_mask;
	size_t sqe_sz = (ring->flags & IORING_SETUP_SQE128) ? 128 : 64;
	unsigned head, avail, done = 0, taken = 0;
	int ret = 0;

	if (!dr->psq_tail)
		return -EBADF;
	psq_lock(dr);
	head = __atomic_load_n(dr->psq_khead, __ATOMIC_RELAXED);
	avail = __atomic_load_n(dr->psq_tail, __ATOMIC_ACQUIRE) - head;
	if (avail > entries)
		avail = entries;
	if (to_submit > avail)
		to_submit = avail;
	for (int pass = 0; pass < 2 && !ret; pass++) {
		for (unsigned k = 0; k < to_submit; k++) {
			unsigned pos = head + k;
			unsigned idx = dr->psq_array ? __atomic_load_n(&dr->psq_array[pos & mask],
								       __ATOMIC_RELAXED)
						     : pos & mask;
			const struct io_uring_sqe *sqe;

			if (idx >= entries) {
				done += pass;	/* dropped, as Linux drops it: not counted */
				continue;
			}
			sqe = (const struct io_uring_sqe *)(dr->psq_sqes + (size_t)idx * sqe_sz);
			ret = pass ? take(sqe, ctx) : check(sqe, ctx);
			if (ret)
				break;
			done += pass;
			taken += pass;
		}
	}
	head += done;
	__atomic_store_n(dr->psq_khead, head, __ATOMIC_RELAXED);
	__atomic_store_n(dr->psq_head, head, __ATOMIC_RELEASE);
	psq_unlock(dr);
	return ret < 0 ? ret : (int)taken;
}

/*
 * A completion made elsewhere as the NOP that posts it, at SQ position
 * etail (the caller holds the submit lock and knows there is room): Linux's
 * nop_flags INJECT_RESULT (and CQE32: its extra words from off and addr),
 * and ucmd's CQE_FLAGS (addr3): the CQE keeps its user_data, res and flags
 * (F_MORE, F_SOCK_NONEMPTY...), as the CQE Linux would post has them.
 */
/* The copy ring's SQE at etail, zeroed; slot_publish makes it the array's entry too. */
static struct io_uring_sqe *slot_at(struct ucmd_ring *ring, unsigned etail)
{
	size_t sqe_sz = (ring->flags & IORING_SETUP_SQE128) ? 128 : 64;
	struct io_uring_sqe *sqe =
		(struct io_uring_sqe *)((char *)ring->sq.sqes + (etail & ring->sq.ring_mask) * sqe_sz);

	memset(sqe, 0, sqe_sz);
	return sqe;
}

static void slot_publish(struct ucmd_ring *ring, unsigned etail)
{
	unsigned mask = ring->sq.ring_mask;

	if (ring->sq.array)
		__atomic_store_n(&ring->sq.array[etail & mask], etail & mask, __ATOMIC_RELAXED);
}

static void put_cqe_nop(struct ucmd_ring *ring, unsigned etail, const struct io_uring_cqe *cqe,
			bool big)
{
	struct io_uring_sqe *sqe = slot_at(ring, etail);

	sqe->opcode = IORING_OP_NOP;
	sqe->fd = -1;
	sqe->rw_flags = UCMD_NOP_INJECT_RESULT | UCMD_NOP_CQE_FLAGS | (big ? UCMD_NOP_CQE32 : 0);
	sqe->len = (uint32_t)cqe->res;
	sqe->addr3 = cqe->flags;
	sqe->user_data = cqe->user_data;
	if (big) {
		sqe->off = cqe->big_cqe[0];
		sqe->addr = cqe->big_cqe[1];
	}
	slot_publish(ring, etail);
}

static void fill_cqe_nop(struct ucmd_ring *ring, unsigned etail, const void *cqe)
{
	put_cqe_nop(ring, etail, cqe, ring->flags & IORING_SETUP_CQE32);
}

static void fill_sqe(struct ucmd_ring *ring, unsigned etail, const void *in)
{
	memcpy(slot_at(ring, etail), in, sizeof(struct io_uring_sqe));
	slot_publish(ring, etail);
}

/* One SQE of ours into the daemon's ring, under the program's SQ lock, and a kick. */
static int inject_one(struct ucmd_ring *ring,
		      void (*fill)(struct ucmd_ring *, unsigned, const void *), const void *arg)
{
	struct dring *dr = to_dr(ring);
	unsigned etail;
	int room;

	if (ring_dead(dr))
		return -ENOTCONN;
	psq_lock(dr);
	etail = __atomic_load_n(ring->sq.ktail, __ATOMIC_RELAXED);
	room = copy_room(ring, etail);
	if (room <= 0) {
		psq_unlock(dr);
		return room ? room : -EAGAIN;
	}
	fill(ring, etail, arg);
	/* seq_cst: pairs with the proxy's NEED_WAKEUP, then its look at the tail */
	__atomic_store_n(ring->sq.ktail, etail + 1, __ATOMIC_SEQ_CST);
	psq_unlock(dr);
	kick(ring, 1, 0);
	return 0;
}

int dc_inject_cqe(struct ucmd_ring *ring, const struct io_uring_cqe *cqe)
{
	return inject_one(ring, fill_cqe_nop, cqe);
}

int dc_inject_sqe(struct ucmd_ring *ring, const struct io_uring_sqe *in)
{
	return inject_one(ring, fill_sqe, in);
}

static int enter_sub(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		     unsigned flags, dc_divert_fn divert, void *dctx, struct dc_plain *plain);

int dc_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete, unsigned flags)
{
	return enter_sub(ring, to_submit, min_complete, flags, NULL, NULL, NULL);
}

int dc_enter_divert(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		    unsigned flags, dc_divert_fn divert, void *dctx)
{
	return enter_sub(ring, to_submit, min_complete, flags, divert, dctx, NULL);
}

int dc_enter_plain(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		   unsigned flags, struct dc_plain *plain)
{
	plain->left = 0;
	plain->walked = false;
	return enter_sub(ring, to_submit, min_complete, flags, NULL, NULL, plain);
}

static int enter_sub(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		     unsigned flags, dc_divert_fn divert, void *dctx, struct dc_plain *plain)
{
	struct dring *dr = to_dr(ring);

	if (flags & ~(IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT))
		return -EINVAL;
	/* every enter copies out what is ready: a program may reap without waiting */
	bounce_reap(ring);
	/* a daemon that is gone: only CQEs it posted before are still there to reap */
	if (ring_dead(dr) && (to_submit || !(flags & IORING_ENTER_GETEVENTS) || !cq_ready(ring) ||
			      cq_ready(ring) < min_complete))
		return -ENOTCONN;
	if (!(ring->flags & IORING_SETUP_SQPOLL)) {
		/*
		 * Nothing to submit touches no SQ: a forked child waiting on
		 * its parent's ring must not store its stale copy of the
		 * program's SQ head into the memory both share.
		 */
		int ret = !to_submit ? 0
			  : dr->psq_tail ? submit_copy(ring, to_submit, divert, dctx, plain)
					 : submit_limit(ring, to_submit);

		if (ret < 0)
			return ret;
		/* stopped short: the caller submits the rest its way, then waits */
		if (plain && plain->left)
			return ret;
		to_submit = (unsigned)ret;
		if (flags & IORING_ENTER_SQ_WAKEUP)
			kick(ring, 0, flags);
	} else {
		kick(ring, to_submit, flags);
	}
	/* SQPOLL's SQ_WAIT: until the proxy made room in the SQ */
	while ((flags & IORING_ENTER_SQ_WAIT) && sq_full(ring)) {
		int ret;

		if (ring_dead(dr))
			return -ENOTCONN;
		kick(ring, 1, 0);
		ret = sleep_once(dr, ktime_get_ns() + 1000000ull, NULL);
		if (ret && ret != -ETIME && ret != -EINTR)
			return ret;
	}
	if (flags & IORING_ENTER_GETEVENTS) {
		int ret = cq_wait(ring, min_complete, 0, NULL);

		if (ret < 0 && !to_submit)
			return ret;
	}
	return (int)to_submit;
}

int dc_enter_timeout(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		     unsigned flags, const struct __kernel_timespec *ts, const sigset_t *sigmask)
{
	return dc_enter_timeout_plain(ring, to_submit, min_complete, flags, ts, sigmask, NULL);
}

int dc_enter_timeout_plain(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
			   unsigned flags, const struct __kernel_timespec *ts,
			   const sigset_t *sigmask, struct dc_plain *plain)
{
	uint64_t deadline;
	int submitted = 0, ret = 0;

	if (plain) {
		plain->left = 0;
		plain->walked = false;
	}
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)
		return -EINVAL;
	deadline = ktime_get_ns() + (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
	if (to_submit || (flags & ~IORING_ENTER_GETEVENTS)) {
		submitted = enter_sub(ring, to_submit, 0, flags & ~IORING_ENTER_GETEVENTS, NULL,
				      NULL, plain);
		if (submitted < 0 || (plain && plain->left))
			return submitted;
	}
	if (flags & IORING_ENTER_GETEVENTS) {
		/* a deadline of "now" still looks once */
		ret = cq_wait(ring, min_complete, deadline ? deadline : 1, sigmask);
	}
	/* as io_uring_enter(2): what was submitted wins over the wait's result */
	return submitted ? submitted : ret;
}

/*
 * Completions of requests the preload ran elsewhere (forwarded to a
 * kernel ring): each goes into the ring's SQ as a NOP that posts its
 * user_data, res and flags (UCMD_NOP_INJECT_RESULT | UCMD_NOP_CQE_FLAGS),
 * after what the program submitted before, under the submit lock. How
 * many went in (fewer when the ring's SQ has no room), or -ENOTCONN,
 * -EOPNOTSUPP for a ring without a program's SQ of its own.
 */
int dc_post_cqes(struct ucmd_ring *ring, const struct io_uring_cqe *cqes, unsigned nr)
{
	struct dring *dr = to_dr(ring);
	unsigned entries = ring->sq.ring_entries;
	unsigned etail, head, room, n;

	if (!dr->psq_tail)
		return -EOPNOTSUPP;
	if (ring_dead(dr))
		return -ENOTCONN;
	psq_lock(dr);
	etail = __atomic_load_n(ring->sq.ktail, __ATOMIC_RELAXED);
	head = __atomic_load_n(ring->sq.khead, __ATOMIC_ACQUIRE);
	room = entries - (etail - head);
	if (room > entries)
		room = 0;	/* a head the proxy never stored: nothing fits */
	n = nr < room ? nr : room;
	/* the kernel ring's CQEs are 16 bytes: no extra words */
	for (unsigned i = 0; i < n; i++, etail++)
		put_cqe_nop(ring, etail, &cqes[i], false);
	if (n) {
		__atomic_store_n(ring->sq.ktail, etail, __ATOMIC_SEQ_CST);
		kick(ring, n, 0);
	}
	psq_unlock(dr);
	return (int)n;
}

/* ---- io_uring_register(2): UCMDD_REGISTER, the daemon reads arg from us ---- */

static int reg(struct ucmd_ring *ring, unsigned opcode, const void *arg, unsigned nr, int fd,
	       void *rep, size_t rep_max, size_t *rep_len)
{
	struct dring *dr = to_dr(ring);
	struct ucmdd_register req = { .ring_id = dr->ring_id, .opcode = opcode,
				      .arg = (uint64_t)(uintptr_t)arg, .nr = nr };

	return dc_call(dr->dc, UCMDD_REGISTER, &req, sizeof(req), fd >= 0 ? &fd : NULL,
		       fd >= 0 ? 1 : 0, rep, rep_max, rep_len, NULL, 0);
}

int dc_register_raw(struct ucmd_ring *ring, unsigned opcode, const void *arg, unsigned nr, int fd,
		    void *rep, size_t rep_max, size_t *rep_len)
{
	return reg(ring, opcode, arg, nr, fd, rep, rep_max, rep_len);
}

int dc_register_shared(struct ucmd_engine *e, const struct ucmd_ring *shared, unsigned opcode,
		       const void *arg, unsigned nr, int fd, void *rep, size_t rep_max,
		       size_t *rep_len)
{
	struct ucmdd_register req = { .opcode = opcode, .arg = (uint64_t)(uintptr_t)arg, .nr = nr,
				      .flags = UCMDD_REG_SHARED };
	int fds[2] = { shared->ring_fd, fd };

	return dc_call(backend_engine_priv(e), UCMDD_REGISTER, &req, sizeof(req), fds,
		       fd >= 0 ? 2 : 1, rep, rep_max, rep_len, NULL, 0);
}

int dc_register_files(struct ucmd_ring *ring, const int *files, unsigned nr)
{
	return reg(ring, IORING_REGISTER_FILES, files, nr, -1, NULL, 0, NULL);
}

int dc_unregister_files(struct ucmd_ring *ring)
{
	return reg(ring, IORING_UNREGISTER_FILES, NULL, 0, -1, NULL, 0, NULL);
}

int dc_register_buffers(struct ucmd_ring *ring, const struct iovec *iov, unsigned nr)
{
	return reg(ring, IORING_REGISTER_BUFFERS, iov, nr, -1, NULL, 0, NULL);
}

int dc_unregister_buffers(struct ucmd_ring *ring)
{
	return reg(ring, IORING_UNREGISTER_BUFFERS, NULL, 0, -1, NULL, 0, NULL);
}

/* The daemon registers the identity it knows us by (the socket's), not ours to claim. */
int dc_register_personality(struct ucmd_ring *ring)
{
	return reg(ring, IORING_REGISTER_PERSONALITY, NULL, 0, -1, NULL, 0, NULL);
}

int dc_unregister_personality(struct ucmd_ring *ring, int id)
{
	if (id < 0)
		return -EINVAL;
	return reg(ring, IORING_UNREGISTER_PERSONALITY, NULL, (unsigned)id, -1, NULL, 0, NULL);
}

/*
 * A registered ring fd saves Linux an fdget per io_uring_enter(2); a daemon
 * ring has no enter to save it on. Kept here as liburing keeps it, so the
 * calls answer as they do on the other backends.
 */
int dc_register_ring_fd(struct ucmd_ring *ring)
{
	if (ring->int_flags & UCMD_INT_FLAG_REG_RING)
		return -EEXIST;
	ring->int_flags |= UCMD_INT_FLAG_REG_RING;
	return 1;
}

int dc_unregister_ring_fd(struct ucmd_ring *ring)
{
	if (!(ring->int_flags & UCMD_INT_FLAG_REG_RING))
		return -EINVAL;
	ring->int_flags &= ~UCMD_INT_FLAG_REG_RING;
	return 1;
}

int dc_register_files_update(struct ucmd_ring *ring, unsigned off, const int *files, unsigned nr)
{
	struct io_uring_files_update up = { .offset = off, .fds = (uint64_t)(uintptr_t)files };

	return reg(ring, IORING_REGISTER_FILES_UPDATE, &up, nr, -1, NULL, 0, NULL);
}

int dc_register_files_sparse(struct ucmd_ring *ring, unsigned nr)
{
	struct io_uring_rsrc_register rr = { .nr = nr, .flags = IORING_RSRC_REGISTER_SPARSE };

	return reg(ring, IORING_REGISTER_FILES2, &rr, sizeof(rr), -1, NULL, 0, NULL);
}

int dc_register_buffers_sparse(struct ucmd_ring *ring, unsigned nr)
{
	struct io_uring_rsrc_register rr = { .nr = nr, .flags = IORING_RSRC_REGISTER_SPARSE };

	return reg(ring, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr), -1, NULL, 0, NULL);
}

/* The eventfd itself travels (SCM_RIGHTS): the daemon signals its own copy. */
int dc_register_eventfd(struct ucmd_ring *ring, int fd)
{
	if (fd < 0)
		return -EBADF;
	return reg(ring, IORING_REGISTER_EVENTFD, &fd, 1, fd, NULL, 0, NULL);
}

int dc_unregister_eventfd(struct ucmd_ring *ring)
{
	return reg(ring, IORING_UNREGISTER_EVENTFD, NULL, 0, -1, NULL, 0, NULL);
}

struct io_uring_probe *dc_get_probe_ring(struct ucmd_ring *ring)
{
	struct io_uring_probe *p = io_probe_alloc();
	size_t max = sizeof(*p) + 256 * sizeof(p->ops[0]), len = 0;
	int ret;

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	ret = reg(ring, IORING_REGISTER_PROBE, NULL, 256, -1, p, max, &len);
	if (ret >= 0 && (len < sizeof(*p) || len < sizeof(*p) + p->ops_len * sizeof(p->ops[0])))
		ret = -EPROTO;
	if (ret < 0) {
		ucmd_free_probe(p);
		errno = -ret;
		return NULL;
	}
	return p;
}
