/* SPDX-License-Identifier: MIT */
/*
 * Eventfds a client shares with the daemon: the ring's sq and cq eventfds
 * (the client holds the same open file description, so it can clear
 * O_NONBLOCK on it) and the one it registers (IORING_REGISTER_EVENTFD, its
 * own, maybe blocking). An eventfd write blocks while the counter would pass
 * 2^64-2, a read while it is 0, on a blocking description; the client
 * decides both. No daemon thread may wait on a client, so every write and
 * read of such an fd here is cut short after SRV_EFD_WAIT_MS.
 *
 * Linux signals a registered eventfd with eventfd_signal(), which never
 * blocks and saturates the counter. User space has no such call and cannot
 * reopen an eventfd (it has no path), nor ask for a non-blocking write on
 * a blocking description (eventfd refuses RWF_NOWAIT). What it can do: arm
 * a one-shot timer that sends this thread a signal, and leave the system
 * call from the handler (siglongjmp). The jump is taken only while the
 * thread is inside the guarded call, so a signal that arrives late (after
 * the guard is dropped) only returns; SA_RESTART then restarts whatever it
 * interrupted.
 *
 * A write cut short is retried while poll() says the counter has room: a
 * timer that fired before the write began (a preempted thread) loses no
 * wake-up; a counter at its maximum already says "wake up", as Linux's
 * saturated one does.
 *
 * A client that sleeps on its ring's futex instead (srv_futex_wake) needs
 * none of this: FUTEX_WAKE never waits, whatever the client does.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "server/efd.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define EFD_TRIES 3

struct efd_guard {
	sigjmp_buf jb;
	volatile sig_atomic_t armed;	/* inside the guarded call: the handler jumps */
	bool have_timer;
	timer_t timer;
};

static __thread struct efd_guard guard;
static pthread_once_t efd_once = PTHREAD_ONCE_INIT;
static pthread_key_t efd_key;
static int efd_sig;
static int efd_init_err;

static void efd_handler(int sig)
{
	(void)sig;
	if (guard.armed) {
		guard.armed = 0;
		siglongjmp(guard.jb, 1);
	}
}

/* A thread that made a timer deletes it when it exits. */
static void efd_thread_exit(void *p)
{
	(void)p;
	if (guard.have_timer) {
		timer_delete(guard.timer);
		guard.have_timer = false;
	}
}

static void efd_init_once(void)
{
	struct sigaction sa;

	/* a real-time signal nothing else in the daemon uses; glibc keeps the first ones */
	efd_sig = SIGRTMIN + 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = efd_handler;
	sigemptyset(&sa.sa_mask);
	/*
	 * SA_NODEFER: the jump leaves the handler without restoring the
	 * mask (sigsetjmp(.., 0) saves none, which costs no system call), so
	 * the signal must not be blocked while it runs.
	 */
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	if (sigaction(efd_sig, &sa, NULL))
		efd_init_err = -errno;
	else
		efd_init_err = -pthread_key_create(&efd_key, efd_thread_exit);
}

static int efd_timer(void)
{
	struct sigevent sev;

	if (guard.have_timer)
		return 0;
	pthread_once(&efd_once, efd_init_once);
	if (efd_init_err)
		return efd_init_err;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = efd_sig;
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &guard.timer))
		return -errno;
	guard.have_timer = true;
	/* any non-NULL value: the destructor runs at this thread's exit */
	pthread_setspecific(efd_key, &guard);
	return 0;
}

static void efd_arm(long ms)
{
	struct itimerspec it = { .it_value = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 } };

	timer_settime(guard.timer, 0, &it, NULL);
}

/* One read or write of 8 bytes, given up after SRV_EFD_WAIT_MS: 8, -1 (errno), or -ETIMEDOUT. */
static long efd_io_once(int fd, uint64_t *v, bool wr)
{
	/* volatile: read again after the jump */
	volatile long n = -ETIMEDOUT;

	if (sigsetjmp(guard.jb, 0) == 0) {
		guard.armed = 1;
		efd_arm(SRV_EFD_WAIT_MS);
		n = syscall(wr ? SYS_write : SYS_read, fd, v, sizeof(*v));
		guard.armed = 0;
	}
	efd_arm(0);
	return n;
}

static bool efd_ready(int fd, short ev)
{
	struct pollfd pfd = { .fd = fd, .events = ev };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & ev);
}

int srv_efd_signal(int fd)
{
	uint64_t one = 1;
	int ret;

	if (fd < 0)
		return 0;
	ret = efd_timer();
	if (ret)
		return ret;
	for (int i = 0; i < EFD_TRIES; i++) {
		long n = efd_io_once(fd, &one, true);

		if (n == (long)sizeof(one))
			return 0;
		/* a full counter (EAGAIN) already says "wake up" */
		if (n < 0 && n != -ETIMEDOUT && errno != EINTR)
			return errno == EAGAIN ? 0 : -errno;
		if (!efd_ready(fd, POLLOUT))
			return 0;
	}
	return -ETIMEDOUT;
}

/*
 * 0: preadv2(RWF_NOWAIT) reads an eventfd without ever blocking (Linux
 * 5.13's eventfd read_iter honours IOCB_NOWAIT whatever the description's
 * O_NONBLOCK); 1: the kernel refused it (EOPNOTSUPP before 5.13, ENOSYS
 * or EINVAL before preadv2 or its flag), the guarded read from then on.
 * Atomic: any pool worker may find out first.
 */
static int efd_no_nowait;

void srv_efd_drain(int fd)
{
	uint64_t v;

	if (fd < 0)
		return;
	/*
	 * One system call: a doorbell's drain was four (the poll for
	 * POLLIN, the timer armed, the read, the timer disarmed), per
	 * wake-up of a sleeping worker.
	 */
	if (!__atomic_load_n(&efd_no_nowait, __ATOMIC_RELAXED)) {
		struct iovec iov = { .iov_base = &v, .iov_len = sizeof(v) };

		if (preadv2(fd, &iov, 1, -1, RWF_NOWAIT) >= 0 || errno == EAGAIN)
			return;	/* drained, or 0 already */
		/* an fd that reads nothing (EBADF, ...): nothing to drain either way */
		if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
			return;
		__atomic_store_n(&efd_no_nowait, 1, __ATOMIC_RELAXED);
	}
	if (efd_timer())
		return;
	/* a counter the client read first is nothing to drain */
	if (efd_ready(fd, POLLIN))
		(void)efd_io_once(fd, &v, false);
}

int srv_futex_wake(uint32_t *w)
{
	/* not FUTEX_PRIVATE_FLAG: the sleeper is another process mapping the same memfd */
	return syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) < 0 ? -errno : 0;
}
