/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's side of svtab.h: a memfd of one page, mapped here for
 * writing, given to the program read-only when its preload asks (the
 * ioctl PL_SV_IOC_TABLE on PL_SV_TABLE_FD); every device descriptor we
 * install or see closed is written there, so the preload can mirror it on
 * its own daemon connection for its io_uring rings. Nothing of the
 * program's memory is written: the program maps our page.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload/preload.h"
#include "preload/sv.h"
#include "preload/svtab.h"

_Static_assert(SV_FD_BASE == PL_SV_FD_BASE && SV_FD_NR == PL_SV_FD_NR,
	       "the table's numbers are the supervisor's");
_Static_assert(sizeof(struct pl_svtab) <= 4096, "one page");

static struct pl_svtab *tab;
static int tab_fd = -1;

static void slot_write(struct sv *s, unsigned i)
{
	struct pl_svtab_slot *t = &tab->slot[i];
	const struct sv_fd *f = &s->fds[i];

	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELAXED);	/* odd: being written */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (f->kind == SV_DEV) {
		t->flags = f->oflags;
		memcpy(t->name, f->name, sizeof(t->name));
	} else {
		t->flags = 0;
		memset(t->name, 0, sizeof(t->name));
	}
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE);
}

void sv_svtab_update(struct sv *s, int fd)
{
	unsigned i = (unsigned)fd - SV_FD_BASE;

	/* the program's own table: a descendant's numbers are its own (sv_fork.c) */
	if (!tab || i >= SV_FD_NR || (s->root && s != s->root))
		return;
	slot_write(s, i);
	__atomic_add_fetch(&tab->gen, 1, __ATOMIC_RELEASE);
}

void sv_svtab_give(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	char self[64];
	int ro;

	if (!s->dirs || tg != s->pid || (s->root && s != s->root)) {
		a->error = -ENOTTY;	/* a forked child's rings get no mirrors: its numbers are not the table's */
		return;
	}
	if (!tab) {
		tab_fd = memfd_create("ucmd-svtab", MFD_CLOEXEC);
		if (tab_fd < 0 || ftruncate(tab_fd, 4096)) {
			a->error = -ENOMEM;
			return;
		}
		tab = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, tab_fd, 0);
		if (tab == MAP_FAILED) {
			tab = NULL;
			a->error = -ENOMEM;
			return;
		}
		tab->pid = s->pid;
		for (unsigned i = 0; i < SV_FD_NR; i++)
			slot_write(s, i);
		__atomic_add_fetch(&tab->gen, 1, __ATOMIC_RELEASE);
	}
	/* read-only: the program maps it, never writes it */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", tab_fd);
	ro = open(self, O_RDONLY | O_CLOEXEC);
	if (ro < 0) {
		a->error = -errno;
		return;
	}
	sv_addfd_send(s, req, ro, -1, true, a);
	close(ro);
}
