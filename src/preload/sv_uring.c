/* SPDX-License-Identifier: MIT */
/*
 * io_uring_setup/enter/register and the ring mmaps for a static program
 * (sv.h): the daemon's engine acts in the program's memory, so an SQE's
 * addresses are the program's, read by the daemon itself (the same front
 * end as the preload: dc_queue_init, dc_enter, dc_register_raw).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sys/mman.h>

#include <linux/io_uring.h>

#include <ucmd/daemon.h>

#include "preload/preload.h"
#include "preload/sv.h"

#ifndef IORING_REGISTER_USE_REGISTERED_RING
#define IORING_REGISTER_USE_REGISTERED_RING (1u << 31)	/* Linux 6.3 */
#endif

void sv_uring_setup(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	struct io_uring_params p;
	unsigned cqe_sz;
	struct sv_fd *f;
	int i, ret;

	if (tg != s->pid) {
		a->error = -EOPNOTSUPP;
		return;
	}
	ret = sv_mem_in(req->pid, &p, req->data.args[1], sizeof(p));
	if (!ret)
		ret = sv_adopt(s);
	if (ret) {
		a->error = ret;
		return;
	}
	for (unsigned k = 0; k < sizeof(p.resv) / sizeof(p.resv[0]); k++)
		if (p.resv[k]) {
			a->error = -EINVAL;
			return;
		}
	i = sv_slot_free(s);
	if (i < 0) {
		a->error = -EMFILE;
		return;
	}
	f = &s->fds[i];
	memset(f, 0, sizeof(*f));
	ret = dc_queue_init_flags(s->e, (unsigned)req->data.args[0], &f->ring, &p,
				  UCMDD_QI_SQES_AT_OFF);
	if (ret) {
		a->error = ret;
		return;
	}
	cqe_sz = (p.flags & IORING_SETUP_CQE32) ? 32 : 16;
	f->rings_len = p.cq_off.cqes + (size_t)p.cq_entries * cqe_sz;
	if (p.sq_off.array + (size_t)p.sq_entries * 4 > f->rings_len)
		f->rings_len = p.sq_off.array + (size_t)p.sq_entries * 4;
	f->sqes_len = (size_t)p.sq_entries * ((p.flags & IORING_SETUP_SQE128) ? 128 : 64);
	/* the layout's private fields are the daemon's, not Linux's ABI */
	p.sq_off.resv2 = 0;
	p.cq_off.resv2 = 0;
	ret = sv_mem_out(req->pid, req->data.args[1], &p, sizeof(p));
	if (!ret) {
		f->kind = SV_RING;
		ret = sv_desc_new(s, f, f->ring.ring_fd);
	}
	if (!ret) {
		/* Linux's ring descriptors are close-on-exec */
		sv_addfd_send(s, req, f->ring.ring_fd, (int)SV_FD_BASE + i, true, a);
		if (a->sent)
			return;
		ret = a->error;
		sv_desc_put(s, f);
	}
	f->kind = SV_FREE;
	ucmd_queue_exit(&f->ring);
	a->error = ret;
}

static struct sv_fd *ring_of(struct sv *s, const struct seccomp_notif *req, pid_t tg)
{
	struct sv_fd *f = sv_slot_of(s, req->data.args[0]);

	/* a forked child's copy of the ring: its requests would run in the parent's memory */
	if (!f || f->kind != SV_RING || f->closed || tg != s->pid)
		return NULL;
	return f;
}

/*
 * The ring argument 0 names: a descriptor, or with registered an index of
 * the thread's. enter: for io_uring_enter, which an SQPOLL ring inherited
 * across fork is served (on its maker's ring).
 */
static struct sv_fd *ring_arg(struct sv *s, const struct seccomp_notif *req, pid_t tg,
			      bool registered, bool enter, int *err)
{
	struct sv_fd *f;

	*err = -EBADF;
	if (!registered)
		f = ring_of(s, req, tg);
	else if (tg != s->pid)
		return NULL;
	else
		f = sv_reg_ring(s, (pid_t)req->pid, req->data.args[0], err);
	/*
	 * A ring inherited across fork: its requests run in its maker's
	 * memory. So do an SQPOLL ring's on Linux (its poller is a thread of
	 * its maker's), whose SQEs any process holding the ring queues: its
	 * enter (a wake-up, a wait for CQEs) is the maker's ring's, and
	 * EOWNERDEAD once the maker let go of it. Any other ring's requests
	 * would be submitted by this process, whose memory they name: Linux's
	 * answer when a ring's submitter is another task.
	 */
	if (f && f->foreign) {
		struct sv_fd *o = f->desc ? f->desc->owner : NULL;

		*err = -EEXIST;
		if (!enter || !(f->ring.flags & IORING_SETUP_SQPOLL))
			return NULL;
		*err = -EOWNERDEAD;
		return o;
	}
	return f;
}

void sv_uring_enter(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	unsigned flags = (unsigned)g[3];
	struct io_uring_getevents_arg ga;
	struct __kernel_timespec ts;
	sigset_t mask;
	struct sv_fd *f;
	int ret;

	f = ring_arg(s, req, tg, flags & IORING_ENTER_REGISTERED_RING, true, &ret);
	if (!f) {
		a->error = ret;
		return;
	}
	flags &= ~IORING_ENTER_REGISTERED_RING;
	if (!(flags & IORING_ENTER_EXT_ARG)) {
		ret = dc_enter(&f->ring, (unsigned)g[1], (unsigned)g[2], flags);
		goto out;
	}
	if (g[5] != sizeof(ga)) {
		a->error = -EINVAL;
		return;
	}
	ret = sv_mem_in(req->pid, &ga, g[4], sizeof(ga));
	if (!ret && ga.sigmask)
		ret = sv_mem_in(req->pid, &mask, ga.sigmask,
			     ga.sigmask_sz < sizeof(mask) ? ga.sigmask_sz : sizeof(mask));
	if (!ret && ga.ts)
		ret = sv_mem_in(req->pid, &ts, ga.ts, sizeof(ts));
	if (ret) {
		a->error = ret;
		return;
	}
	flags &= ~IORING_ENTER_EXT_ARG;
	ret = ga.ts ? dc_enter_timeout(&f->ring, (unsigned)g[1], (unsigned)g[2], flags, &ts,
				       ga.sigmask ? &mask : NULL)
		    : dc_enter(&f->ring, (unsigned)g[1], (unsigned)g[2], flags);
out:
	if (ret < 0)
		a->error = ret;
	else
		a->val = ret;
}

void sv_uring_register(struct sv *s, const struct seccomp_notif *req, pid_t tg,
			   struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	unsigned opcode = (unsigned)g[1], nr = (unsigned)g[3];
	bool registered = opcode & IORING_REGISTER_USE_REGISTERED_RING;
	struct sv_fd *f;
	int ret, efd;

	f = ring_arg(s, req, tg, registered, false, &ret);
	if (!f) {
		a->error = ret;
		return;
	}
	opcode &= ~IORING_REGISTER_USE_REGISTERED_RING;
	switch (opcode) {
	case IORING_REGISTER_RING_FDS:
	case IORING_UNREGISTER_RING_FDS:
		ret = sv_ring_fds(s, req, tg, opcode == IORING_REGISTER_RING_FDS, g[2], nr);
		break;
	case IORING_REGISTER_EVENTFD:
	case IORING_REGISTER_EVENTFD_ASYNC:
		ret = nr == 1 ? sv_mem_in(req->pid, &efd, g[2], sizeof(efd)) : -EINVAL;
		if (ret)
			break;
		efd = (int)syscall(SYS_pidfd_getfd, s->pidfd, efd, 0);
		if (efd < 0) {
			ret = -errno;
			break;
		}
		ret = dc_register_raw(&f->ring, opcode, NULL, 1, efd, NULL, 0, NULL);
		close(efd);
		break;
	case IORING_REGISTER_PROBE: {
		size_t max = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
		struct io_uring_probe *p;
		size_t len = 0;

		if (!nr || nr > 256) {
			ret = -EINVAL;
			break;
		}
		p = calloc(1, max);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		ret = dc_register_raw(&f->ring, opcode, NULL, nr, -1, p, max, &len);
		if (ret >= 0) {
			size_t want = sizeof(*p) + (size_t)nr * sizeof(p->ops[0]);

			if (sv_mem_out(req->pid, g[2], p, len > want ? want : len))
				ret = -EFAULT;
		}
		free(p);
		break;
	}
	default:
		/* the daemon reads arg from the program's memory itself */
		ret = dc_register_raw(&f->ring, opcode, (const void *)(uintptr_t)g[2], nr, -1, NULL,
				      0, NULL);
		break;
	}
	if (ret < 0)
		a->error = ret;
	else
		a->val = ret;
}

/*
 * Where the program maps ring f's rings (the memfd from offset 0, shared)
 * with at least len bytes and prot: the start of that mapping, or 0.
 */
static uint64_t rings_mapping(pid_t pid, const struct sv_fd *f, size_t len, int prot)
{
	char path[64], line[512], perms[8];
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	uint64_t at = 0;
	struct stat st;
	FILE *m;

	if (fstat(f->ring.ring_fd, &st))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	m = fopen(path, "re");
	if (!m)
		return 0;
	while (!at && fgets(line, sizeof(line), m)) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &off, &maj,
			   &min, &ino) != 7)
			continue;
		if (ino != st.st_ino || makedev(maj, min) != st.st_dev || off || perms[3] != 's' ||
		    end - start < len || ((prot & PROT_READ) && perms[0] != 'r') ||
		    ((prot & PROT_WRITE) && perms[1] != 'w'))
			continue;
		at = start;
	}
	fclose(m);
	return at;
}

/*
 * mmap of a number of ours. A ring's memfd holds the rings at 0 and the
 * SQEs at IORING_OFF_SQES, Linux's offsets: those maps go on to the kernel.
 * IORING_OFF_CQ_RING names the same rings in Linux (one struct io_rings
 * behind both offsets, IORING_FEAT_SINGLE_MMAP), which a file cannot have
 * at a second offset, and no mapping can be made from here in the
 * program's address space: the answer is the program's own shared mapping
 * of the SQ ring (its SQ array comes last, so it holds the CQ ring too),
 * which fio's and liburing's order (SQ ring first) has made. A CQ ring
 * mapped before any SQ ring, at a MAP_FIXED address elsewhere, or private,
 * is EINVAL; unmapping one of the two unmaps both (docs/compat.md).
 */
void sv_mmap(struct sv *s, const struct seccomp_notif *req, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	struct sv_fd *f = sv_slot_of(s, g[4]);
	size_t len = g[1], max;
	int prot = (int)g[2], flags = (int)g[3];
	uint64_t at;

	if (!f || f->kind == SV_FREE || f->closed) {
		a->cont = true;	/* not a descriptor we made: the kernel's */
		return;
	}
	if (f->kind == SV_DEV) {
		a->error = -ENODEV;	/* no mmap in nvme_dev_fops / nvme_ns_chr_fops */
		return;
	}
	if (f->kind == SV_ATTR) {
		a->cont = true;	/* the tree's file (sv_attrw.c): the kernel's */
		return;
	}
	max = g[5] == IORING_OFF_SQES ? f->sqes_len : f->rings_len;
	if (!len || len > ((max + 4095) & ~4095ul) ||
	    (g[5] != IORING_OFF_SQ_RING && g[5] != IORING_OFF_CQ_RING && g[5] != IORING_OFF_SQES)) {
		a->error = -EINVAL;
		return;
	}
	if (g[5] != IORING_OFF_CQ_RING) {
		a->cont = true;
		return;
	}
	at = (flags & MAP_TYPE) == MAP_PRIVATE ? 0 : rings_mapping((pid_t)req->pid, f, len, prot);
	if (at && (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && at != g[0])
		at = 0;
	if (!at) {
		sv_trace(s, "mmap(IORING_OFF_CQ_RING) of ring fd %d: no shared mapping of its SQ ring "
			 "(%zu bytes) to give: EINVAL", (int)(uint32_t)g[4], len);
		a->error = -EINVAL;
		return;
	}
	a->val = (int64_t)at;
}
