/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_RING_FDS / IORING_UNREGISTER_RING_FDS for a static
 * program (sv.h), as Linux's io_ringfd_register: a thread registers a ring
 * descriptor at an index (0..15, or the first free one for offset -1U)
 * and names the ring by that index in io_uring_enter
 * (IORING_ENTER_REGISTERED_RING) and io_uring_register
 * (IORING_REGISTER_USE_REGISTERED_RING). Registrations are the thread's
 * (Linux keeps them in the task's io_uring context) and hold the ring: a
 * registered ring stays usable after its descriptor is closed. A thread's
 * registrations are not dropped when it exits (we are not told); a new
 * thread given the same id would find them.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <linux/io_uring.h>

#include "preload/sv.h"

static struct sv_reg *find(struct sv *s, pid_t tid, unsigned idx)
{
	for (unsigned i = 0; i < SV_REG_MAX; i++)
		if (s->regs[i].tid == tid && s->regs[i].idx == idx)
			return &s->regs[i];
	return NULL;
}

struct sv_fd *sv_reg_ring(struct sv *s, pid_t tid, uint64_t idx, int *err)
{
	struct sv_reg *r;

	if (idx >= SV_REG_RINGS) {
		*err = -EINVAL;
		return NULL;
	}
	r = find(s, tid, (unsigned)idx);
	if (!r) {
		*err = -EBADF;
		return NULL;
	}
	return &s->fds[r->slot];
}

void sv_ring_put(struct sv *s, struct sv_fd *f)
{
	(void)s;
	if (f->regs || !f->closed)
		return;
	/* the program's mappings of the memfd stay valid, as on Linux */
	ucmd_queue_exit(&f->ring);
	f->kind = SV_FREE;
	f->closed = false;
}

static void drop(struct sv *s, struct sv_reg *r)
{
	struct sv_fd *f = &s->fds[r->slot];

	r->tid = 0;
	f->regs--;
	sv_ring_put(s, f);
}

/* The ring behind the program's descriptor fd: a slot index, or -EBADF / -EOPNOTSUPP. */
static int ring_slot(struct sv *s, pid_t tg, uint64_t fd)
{
	struct sv_fd *f = sv_slot_of(s, fd);
	char path[64];

	if (f && f->kind == SV_RING && !f->closed)
		return (int)(f - s->fds);
	/* io_ring_add_registered_fd: no file is EBADF, a file not a ring's EOPNOTSUPP */
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tg, (int)fd);
	return (int)fd >= 0 && !access(path, F_OK) ? -EOPNOTSUPP : -EBADF;
}

static int add(struct sv *s, pid_t tid, pid_t tg, const struct io_uring_rsrc_update *u)
{
	unsigned start = 0, end = SV_REG_RINGS;
	struct sv_reg *free_r = NULL;
	int slot;

	if (u->resv)
		return -EINVAL;
	if (u->offset != -1U) {
		if (u->offset >= SV_REG_RINGS)
			return -EINVAL;
		start = u->offset;
		end = start + 1;
	}
	for (unsigned i = 0; i < SV_REG_MAX && !free_r; i++)
		if (!s->regs[i].tid)
			free_r = &s->regs[i];
	for (unsigned idx = start; idx < end; idx++) {
		if (find(s, tid, idx))
			continue;
		slot = ring_slot(s, tg, u->data);
		if (slot < 0)
			return slot;
		if (!free_r)
			return -ENOMEM;	/* our table, across threads, is full */
		*free_r = (struct sv_reg){ .tid = tid, .idx = idx, .slot = slot };
		s->fds[slot].regs++;
		return (int)idx;
	}
	return -EBUSY;
}

int sv_ring_fds(struct sv *s, const struct seccomp_notif *req, pid_t tg, bool reg,
		uint64_t uarg, unsigned nr)
{
	pid_t tid = (pid_t)req->pid;
	struct io_uring_rsrc_update u;
	unsigned i;
	int ret = 0;

	if (!nr || nr > SV_REG_RINGS)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		uint64_t at = uarg + (uint64_t)i * sizeof(u);

		ret = sv_mem_in(tid, &u, at, sizeof(u));
		if (ret)
			break;
		if (!reg) {
			struct sv_reg *r;

			if (u.resv || u.data || u.offset >= SV_REG_RINGS) {
				ret = -EINVAL;
				break;
			}
			r = find(s, tid, u.offset);
			if (r)
				drop(s, r);
			continue;
		}
		ret = add(s, tid, tg, &u);
		if (ret < 0)
			break;
		u.offset = (unsigned)ret;
		if (sv_mem_out(tid, at, &u, sizeof(u))) {
			drop(s, find(s, tid, u.offset));
			ret = -EFAULT;
			break;
		}
	}
	return i ? (int)i : ret;
}
