/* SPDX-License-Identifier: MIT */
/*
 * The preload's side of svtab.h: the device descriptors ucmd-supervise
 * gave the program (opens made with the program's own instruction), mirrored
 * on the preload's daemon connection under their numbers, so that an SQE of
 * the preload's io_uring rings naming one is served as Linux serves it
 * (the daemon mirrors only the numbers a connection opened). Each process
 * has a table of its own: a forked child's lists what it inherited and
 * opened, and its close leaves the parent's alone. Looked at
 * before each io_uring_enter, which is where SQEs are submitted: one load
 * when nothing changed. The table is asked for once per image, lazily (a
 * program without rings never asks); without a supervisor the ioctl fails
 * and nothing is mirrored (those numbers are then not ucmd's).
 *
 * An SQPOLL ring's poller takes SQEs without an enter: once the process
 * has one, a thread of ours watches the table (a futex on its gen) and
 * mirrors each change at once, and the supervisor answers the open or close
 * that made it only after we said so (pl_svack), so the number is the
 * ring's before the program has it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "client/client.h"
#include "preload/preload.h"
#include "preload/svtab.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const struct pl_svtab *tab;
static pid_t tab_pid;		/* the process that asked: a forked child asks again */
static uint32_t seen_gen, seen[PL_SV_FD_NR];
static bool mirrored[PL_SV_FD_NR];
static struct pl_svack *ack;
static pid_t watch_pid;		/* the process whose thread watches (a forked child has none) */

static void *page_of(unsigned long cmd, int prot);

static const struct pl_svtab *table(void)
{
	void *p;

	if (tab_pid == pl_pid())
		return tab;
	/*
	 * A forked child: the parent's table and mirrors are the parent's (its
	 * connection's); the supervisor keeps one of the child's own, with what
	 * it inherited. The parent's pages stay mapped (another thread may be
	 * reading one in the fast path), one page each per process.
	 */
	__atomic_store_n(&tab_pid, pl_pid(), __ATOMIC_RELAXED);
	__atomic_store_n(&tab, NULL, __ATOMIC_RELEASE);
	ack = NULL;
	seen_gen = 0;
	memset(seen, 0, sizeof(seen));
	memset(mirrored, 0, sizeof(mirrored));
	if (!getenv(PL_ENV_DAEMON))
		return NULL;
	p = page_of(PL_SV_IOC_TABLE, PROT_READ);
	if (!p)
		return NULL;
	if (((const struct pl_svtab *)p)->pid != pl_pid()) {
		munmap(p, 4096);
		return NULL;
	}
	__atomic_store_n(&tab, (const struct pl_svtab *)p, __ATOMIC_RELEASE);
	return tab;
}

/*
 * A consistent copy of slot i; false while the supervisor writes it. Each
 * field is an acquire load, which keeps the second look at seq after it
 * (a fence would do with relaxed loads, but ThreadSanitizer models no
 * fences: a full -Db_sanitize=thread build refuses them); on x86-64 these
 * are plain moves. The writer's half is sv_svtab.c's slot_write.
 */
static bool slot_copy(unsigned i, struct pl_svtab_slot *out)
{
	const struct pl_svtab_slot *t = &tab->slot[i];
	uint32_t seq = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);

	if (seq & 1)
		return false;
	out->flags = __atomic_load_n(&t->flags, __ATOMIC_ACQUIRE);
	for (size_t k = 0; k < sizeof(out->name); k++)
		out->name[k] = __atomic_load_n(&t->name[k], __ATOMIC_ACQUIRE);
	out->seq = seq;
	out->name[sizeof(out->name) - 1] = '\0';
	return __atomic_load_n(&t->seq, __ATOMIC_RELAXED) == seq;
}

/* a page of the supervisor's (ioctl cmd on PL_SV_TABLE_FD) mapped with prot, or NULL */
static void *page_of(unsigned long cmd, int prot)
{
	long fd = pl_raw_syscall(__NR_ioctl, PL_SV_TABLE_FD, (long)cmd, 0, 0, 0, 0);
	void *p;

	if (fd < 0)
		return NULL;
	p = mmap(NULL, 4096, prot, MAP_SHARED, (int)fd, 0);
	pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
	return p == MAP_FAILED ? NULL : p;
}

void pl_svtab_sync(void)
{
	struct ucmd_engine *e;
	uint32_t gen;

	const struct pl_svtab *t = __atomic_load_n(&tab, __ATOMIC_ACQUIRE);

	if (t && __atomic_load_n(&tab_pid, __ATOMIC_RELAXED) == pl_pid() &&
	    __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE) == __atomic_load_n(&seen_gen,
									   __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&lock);
	if (!table() || !(e = pl_engine())) {
		pthread_mutex_unlock(&lock);
		return;
	}
	gen = __atomic_load_n(&tab->gen, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < PL_SV_FD_NR; i++) {
		struct pl_svtab_slot sl;
		int fd = (int)(PL_SV_FD_BASE + i), ret;

		if (__atomic_load_n(&tab->slot[i].seq, __ATOMIC_RELAXED) == seen[i])
			continue;
		while (!slot_copy(i, &sl))
			;
		if (mirrored[i])
			ucmd_close(e, fd);
		mirrored[i] = false;
		if (sl.name[0]) {
			ret = dc_open_fixed(e, sl.name, sl.flags & O_ACCMODE, fd);
			mirrored[i] = ret >= 0;
			if (ret < 0)
				pl_trace("fd %d (%s), the supervisor's, not mirrored for io_uring: %s",
					 fd, sl.name, strerror(-ret));
		}
		seen[i] = sl.seq;
	}
	__atomic_store_n(&seen_gen, gen, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
}

/* The watching thread: every change of the table mirrored, then said so. */
static void *watch(void *arg)
{
	(void)arg;
	__atomic_store_n(&ack->tid, (int32_t)pl_raw_syscall(__NR_gettid, 0, 0, 0, 0, 0, 0),
			 __ATOMIC_RELEASE);
	for (uint32_t last = 0;;) {
		uint32_t gen;

		pl_svtab_sync();
		gen = __atomic_load_n(&seen_gen, __ATOMIC_ACQUIRE);
		__atomic_store_n(&ack->gen, gen, __ATOMIC_RELEASE);
		pl_raw_syscall(__NR_futex, (long)&ack->gen, FUTEX_WAKE, INT_MAX, 0, 0, 0);
		if (gen == last && __atomic_load_n(&tab->gen, __ATOMIC_ACQUIRE) != gen) {
			/* a pass that could not mirror (no daemon connection): not a busy loop */
			struct timespec ts = { 0, 10 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		last = gen;
		/* woken by the supervisor's change; at once if one came meanwhile */
		pl_raw_syscall(__NR_futex, (long)&tab->gen, FUTEX_WAIT, gen, 0, 0, 0);
	}
	return NULL;
}

void pl_svtab_watch(void)
{
	int ret;

	pthread_mutex_lock(&lock);
	if (watch_pid == pl_pid() || !table() || !pl_engine()) {
		pthread_mutex_unlock(&lock);
		return;
	}
	if (!ack)
		ack = page_of(PL_SV_IOC_ACK, PROT_READ | PROT_WRITE);
	if (!ack) {
		pthread_mutex_unlock(&lock);
		pl_trace("no page to answer the supervisor on: an SQPOLL ring sees its descriptors at an enter");
		return;
	}
	/* the program's signals are not for this thread */
	__atomic_store_n(&ack->tid, 0, __ATOMIC_RELEASE);	/* a thread of an image before an exec */
	ret = pl_thread_start(watch, NULL);
	if (!ret) {
		watch_pid = pl_pid();
		/* the supervisor waits for it from its first change on */
		while (!__atomic_load_n(&ack->tid, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	pthread_mutex_unlock(&lock);
	if (ret)
		pl_trace("no thread to watch the supervisor's table: %s", strerror(ret));
}

bool pl_svtab_dev(int fd, char name[32], int *flags)
{
	unsigned i = (unsigned)fd - PL_SV_FD_BASE;
	struct pl_svtab_slot sl;

	if (i >= PL_SV_FD_NR)
		return false;
	pthread_mutex_lock(&lock);
	if (!table()) {
		pthread_mutex_unlock(&lock);
		return false;
	}
	while (!slot_copy(i, &sl))
		;
	pthread_mutex_unlock(&lock);
	if (!sl.name[0])
		return false;
	memcpy(name, sl.name, sizeof(sl.name));
	*flags = sl.flags;
	return true;
}
