/* SPDX-License-Identifier: MIT */
/*
 * The preload's side of svtab.h: the device descriptors ucmd-supervise
 * gave the program (opens made with the program's own instruction), mirrored
 * on the preload's daemon connection under their numbers, so that an SQE of
 * the preload's io_uring rings naming one is served as Linux serves it
 * (the daemon mirrors only the numbers a connection opened). Looked at
 * before each io_uring_enter, which is where SQEs are submitted: one load
 * when nothing changed. The table is asked for once per image, lazily (a
 * program without rings never asks); without a supervisor the ioctl fails
 * and nothing is mirrored (those numbers are then not ucmd's).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "client/client.h"
#include "preload/preload.h"
#include "preload/svtab.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const struct pl_svtab *tab;
static pid_t tab_pid;		/* the process that asked: a forked child asks again */
static uint32_t seen_gen, seen[PL_SV_FD_NR];
static bool mirrored[PL_SV_FD_NR];

static const struct pl_svtab *table(void)
{
	long fd;
	void *p;

	if (tab_pid == pl_pid())
		return tab;
	/* a forked child: the parent's mirrors are the parent connection's */
	__atomic_store_n(&tab_pid, pl_pid(), __ATOMIC_RELAXED);
	__atomic_store_n(&tab, NULL, __ATOMIC_RELEASE);
	seen_gen = 0;
	memset(seen, 0, sizeof(seen));
	memset(mirrored, 0, sizeof(mirrored));
	if (!getenv(PL_ENV_DAEMON))
		return NULL;
	fd = pl_raw_syscall(__NR_ioctl, PL_SV_TABLE_FD, PL_SV_IOC_TABLE, 0, 0, 0, 0);
	if (fd < 0)
		return NULL;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, (int)fd, 0);
	pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (((const struct pl_svtab *)p)->pid != pl_pid()) {
		munmap(p, 4096);
		return NULL;
	}
	__atomic_store_n(&tab, (const struct pl_svtab *)p, __ATOMIC_RELEASE);
	return tab;
}

/* A consistent copy of slot i; false while the supervisor writes it. */
static bool slot_copy(unsigned i, struct pl_svtab_slot *out)
{
	const struct pl_svtab_slot *t = &tab->slot[i];
	uint32_t seq = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);

	if (seq & 1)
		return false;
	out->flags = t->flags;
	memcpy(out->name, t->name, sizeof(out->name));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	out->seq = seq;
	out->name[sizeof(out->name) - 1] = '\0';
	return __atomic_load_n(&t->seq, __ATOMIC_RELAXED) == seq;
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
