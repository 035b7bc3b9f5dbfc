/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's side of svtab.h: a memfd of one page, mapped here for
 * writing, given to the program read-only when its preload asks (the
 * ioctl PL_SV_IOC_TABLE on PL_SV_TABLE_FD); every device descriptor we
 * install or see closed is written there, so the preload can mirror it on
 * its own daemon connection for its io_uring rings. Nothing of the
 * program's memory is written: the program maps our page. With an SQPOLL
 * ring the preload has a thread watching the table, and a change is
 * answered only once that thread has mirrored it (svtab.h, pl_svack).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/preload.h"
#include "preload/sv.h"
#include "preload/svtab.h"

_Static_assert(SV_FD_BASE == PL_SV_FD_BASE && SV_FD_NR == PL_SV_FD_NR,
	       "the table's numbers are the supervisor's");
_Static_assert(sizeof(struct pl_svtab) <= 4096, "one page");

/* how long a change waits for the preload's watching thread */
#define SV_ACK_WAIT_NS 1000000000LL

/*
 * A seqlock's writer: seq odd, the fields, seq even. Each field is a
 * release store, which keeps the odd seq before it (so a reader whose
 * acquire load sees a new field sees seq moved: svtab.c's slot_copy), in
 * place of a release fence, which ThreadSanitizer does not model.
 */
static void slot_write(struct sv *s, unsigned i)
{
	struct pl_svtab_slot *t = &s->svtab->slot[i];
	const struct sv_fd *f = &s->fds[i];
	bool dev = f->kind == SV_DEV;

	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELAXED);	/* odd: being written */
	__atomic_store_n(&t->flags, dev ? f->oflags : 0, __ATOMIC_RELEASE);
	for (size_t k = 0; k < sizeof(t->name); k++)
		__atomic_store_n(&t->name[k], dev ? f->name[k] : '\0', __ATOMIC_RELEASE);
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The preload's watching thread mirrors the table at gen before we answer
 * (an SQPOLL ring may take an SQE naming the number as soon as the program
 * has it). Not while no thread of the program's says it watches: a thread
 * gone (the image exec'd) is seen by tgkill.
 */
static void ack_wait(struct sv *s, uint32_t gen)
{
	struct pl_svack *ack = s->svack;
	int64_t until = now_ns() + SV_ACK_WAIT_NS, left;
	int32_t tid = __atomic_load_n(&ack->tid, __ATOMIC_ACQUIRE);

	/* EPERM: the program changed its ids, the thread is there */
	if (tid <= 0 || (syscall(SYS_tgkill, s->pid, tid, 0) && errno == ESRCH))
		return;
	syscall(SYS_futex, &s->svtab->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	for (;;) {
		uint32_t seen = __atomic_load_n(&ack->gen, __ATOMIC_ACQUIRE);
		struct timespec ts;

		if ((int32_t)(seen - gen) >= 0)
			return;
		left = until - now_ns();
		if (left <= 0) {
			sv_trace(s, "the preload did not mirror the table's change %u in time", gen);
			return;
		}
		ts.tv_sec = left / 1000000000LL;
		ts.tv_nsec = left % 1000000000LL;
		syscall(SYS_futex, &ack->gen, FUTEX_WAIT, seen, &ts, NULL, 0);
	}
}

void sv_svtab_update(struct sv *s, int fd)
{
	unsigned i = (unsigned)fd - SV_FD_BASE;
	uint32_t gen;

	/* each process's own table: a descendant's numbers are its own (sv_fork.c) */
	if (!s->svtab || i >= SV_FD_NR)
		return;
	slot_write(s, i);
	gen = __atomic_add_fetch(&s->svtab->gen, 1, __ATOMIC_RELEASE);
	if (s->svack)
		ack_wait(s, gen);
}

void sv_svtab_rewrite(struct sv *s)
{
	if (!s->svtab)
		return;
	for (unsigned i = 0; i < SV_FD_NR; i++)
		slot_write(s, i);
	__atomic_add_fetch(&s->svtab->gen, 1, __ATOMIC_RELEASE);
}

void sv_svtab_release(struct sv *s)
{
	if (s->svtab) {
		munmap(s->svtab, 4096);
		close(s->svtab_fd);
	}
	if (s->svack) {
		munmap(s->svack, 4096);
		close(s->svack_fd);
	}
	s->svtab = NULL;
	s->svack = NULL;
}

/* a page of a memfd of ours, mapped here for writing: its descriptor in *fd */
static void *page_new(const char *name, int *fd)
{
	void *p;

	*fd = memfd_create(name, MFD_CLOEXEC);
	if (*fd < 0)
		return NULL;
	if (ftruncate(*fd, 4096)) {
		close(*fd);
		*fd = -1;
		return NULL;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED) {
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return p;
}

/* our memfd fd installed in the program, opened anew with mode */
static void give(struct sv *s, const struct seccomp_notif *req, int fd, int mode,
		 struct sv_ans *a)
{
	char self[64];
	int dup;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	dup = open(self, mode | O_CLOEXEC);
	if (dup < 0) {
		a->error = -errno;
		return;
	}
	sv_addfd_send(s, req, dup, -1, true, a);
	close(dup);
}

void sv_svtab_give(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	bool want_ack = (uint32_t)req->data.args[1] == PL_SV_IOC_ACK;

	/* a process served by the program's rules (a vfork child): no numbers of its own */
	if (!s->dirs || tg != s->pid) {
		a->error = -ENOTTY;
		return;
	}
	if (!s->svtab) {
		s->svtab = page_new("ucmd-svtab", &s->svtab_fd);
		if (!s->svtab) {
			a->error = -ENOMEM;
			return;
		}
		s->svtab->pid = s->pid;
		sv_svtab_rewrite(s);
	}
	if (!want_ack) {
		/* read-only: the program maps it, never writes it */
		give(s, req, s->svtab_fd, O_RDONLY, a);
		return;
	}
	if (!s->svack && !(s->svack = page_new("ucmd-svack", &s->svack_fd))) {
		a->error = -ENOMEM;
		return;
	}
	give(s, req, s->svack_fd, O_RDWR, a);
}

void sv_svtab_fdinfo(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	struct pl_svfd q;
	const struct sv_desc *d;
	int ret;

	_Static_assert(sizeof(q) == ((PL_SV_IOC_FDINFO >> 16) & 0x3fff), "the ioctl's size");
	if (!s->dirs || tg != s->pid) {
		a->error = -ENOTTY;
		return;
	}
	ret = sv_mem_in(req->pid, &q, req->data.args[2], sizeof(q));
	if (ret) {
		a->error = ret;
		return;
	}
	d = q.fd >= 0 ? sv_desc_of(tg, q.fd) : NULL;
	if (!d || d->tmpl.kind != SV_DEV) {
		a->error = -ENOENT;
		return;
	}
	q.flags = d->tmpl.oflags;
	memcpy(q.name, d->tmpl.name, sizeof(q.name));
	ret = sv_mem_out(req->pid, req->data.args[2], &q, sizeof(q));
	if (ret)
		a->error = ret;
}
