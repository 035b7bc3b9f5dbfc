/* SPDX-License-Identifier: MIT */
/*
 * The client's memory, as the kernel reaches a process's: copies through
 * its /proc/PID/mem, opened as the client at connect (listen.c, peer_mm.c;
 * uaccess/remote.c: a bad address is -EFAULT, never a fault of the daemon),
 * or, inside a memfd region the client shared, the daemon's own mapping of
 * the same pages (zero copy). Once that address space is found gone (the
 * connecting process exec'd or exited) every copy fails and the client is
 * cut off: its socket is shut down, which ends the connection.
 *
 * The engine reaches a client's buffers through c->task_mm (below): the
 * NVMe host bounces what lies outside the regions when it issues a request
 * (src/nvme/host/bounce.c), charged here against SRV_MAX_BOUNCE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "server/bounce_area.h"
#include "server/server.h"

#define PAGE 4096u

/* ---- regions ---- */

int srv_region_add(struct srv_client *c, int memfd, uint64_t caddr, uint64_t len)
{
	struct stat st;
	int seals, ret = 0;
	void *p;

	if (!len || (caddr & (PAGE - 1)) || caddr + len < caddr || caddr + len > UCMD_TASK_SIZE)
		return -EINVAL;
	seals = fcntl(memfd, F_GET_SEALS);
	/* not a memfd (EINVAL), or one the client may still shrink under us */
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return -EINVAL;
	if (fstat(memfd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < len)
		return -EINVAL;
	pthread_mutex_lock(&c->region_lock);
	if (c->nr_regions == SRV_MAX_REGIONS) {
		ret = -ENOSPC;
		goto out;
	}
	for (unsigned i = 0; i < c->nr_regions; i++) {
		const struct srv_region *r = &c->regions[i];

		if (!r->retired && caddr < r->caddr + r->len && r->caddr < caddr + len) {
			ret = -EEXIST;
			goto out;
		}
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (p == MAP_FAILED) {
		ret = -ENOMEM;
		goto out;
	}
	c->regions[c->nr_regions] = (struct srv_region){ .caddr = caddr, .len = len, .daddr = p };
	/* the entry before the count that shows it to srv_region_lookup */
	__atomic_store_n(&c->nr_regions, c->nr_regions + 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&c->region_lock);
	return ret;
}

int srv_region_del(struct srv_client *c, uint64_t caddr)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&c->region_lock);
	for (unsigned i = 0; i < c->nr_regions; i++) {
		if (!c->regions[i].retired && c->regions[i].caddr == caddr) {
			/*
			 * Before the reply: the client reuses the address only
			 * after it, so a request it submits then is taken by a
			 * pass after this store (srv_region_lookup).
			 */
			__atomic_store_n(&c->regions[i].retired, true, __ATOMIC_SEQ_CST);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&c->region_lock);
	return ret;
}

static const struct user_mm_ops client_mm_ops;

int srv_task_init(struct srv_client *c)
{
	int ret = files_init(&c->files, SRV_FD_SPACE, SRV_MAX_FDS);

	if (ret)
		return ret;
	pthread_mutex_init(&c->region_lock, NULL);
	c->task_mm.ops = &client_mm_ops;
	c->task_mm.mem_fd = c->task_mm.maps_fd = -1;
	c->task.files = &c->files;
	c->task.mm = &c->task_mm;
	c->task.cred = &c->cred;
	return 0;
}

void srv_task_free(struct srv_client *c)
{
	unsigned held = c->files.nr_open;

	files_exit(&c->files);
	srv_quota_uncharge(c->d, c->cred.uid, SRV_RES_FD, held);
	for (unsigned i = 0; i < c->nr_regions; i++)
		munmap(c->regions[i].daddr, c->regions[i].len);
	c->nr_regions = 0;
	pthread_mutex_destroy(&c->region_lock);
}

/*
 * Without region_lock: run for every copy a request makes (three or four
 * per read), where the lock's pair was a tenth of the daemon's side of a
 * read. Safe because the table only grows while the client lives: an entry
 * is written whole before the count that shows it (release, above), is
 * never changed after but for retired (false to true, once), and its
 * mapping stays until srv_task_free, after every ring of the client is
 * gone. So an entry seen here is complete and its memory mapped for as
 * long as a request of the client can hold the pointer, as it was with the
 * lock (which was let go before the pointer was used). A lookup racing
 * UCMDD_REGION_ADD or _DEL sees the region or not, as it did then: both
 * answers are right (NULL sends the copy through the client's memory,
 * where the region is mapped too).
 */
void *srv_region_lookup(struct srv_client *c, uint64_t caddr, uint64_t len)
{
	unsigned n;

	if (caddr + len < caddr)
		return NULL;
	n = __atomic_load_n(&c->nr_regions, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++) {
		const struct srv_region *r = &c->regions[i];

		if (!__atomic_load_n(&r->retired, __ATOMIC_ACQUIRE) && caddr >= r->caddr &&
		    caddr + len <= r->caddr + r->len)
			return (char *)r->daddr + (caddr - r->caddr);
	}
	return NULL;
}

/*
 * The client as the engine's task sees it (c->task_mm): a range inside one
 * region is the daemon's own mapping of it; anything else goes through the
 * client's /proc/PID/mem (c->mm), whose loss cuts the client off.
 */
static struct srv_client *mm_client(const struct user_mm *mm)
{
	return (struct srv_client *)((char *)mm - offsetof(struct srv_client, task_mm));
}

static size_t cmm_left(struct srv_client *c, int ret, size_t n)
{
	if (ret && user_mm_gone(&c->mm) && c->sock >= 0)
		shutdown(c->sock, SHUT_RD);
	return ret ? n : 0;
}

static size_t cmm_copy_from(const struct user_mm *mm, void *dst, uint64_t usrc, size_t n)
{
	struct srv_client *c = mm_client(mm);
	void *r = n ? srv_region_lookup(c, usrc, n) : NULL;
	struct srv_bounce *b = srv_bounce_current();

	if (r) {
		memcpy(dst, r, n);
		return 0;
	}
	if (b && srv_bounce_client(b) == c) {
		const struct ucmd_kiocb *req = io_issuing_req;

		/* a write's data the client copied into the area as it submitted it */
		if (req && !srv_bounce_wtake(b, dst, usrc, n, req->sq_pos, req->user_data))
			return 0;
		/* a read of this ring's still in its bounce area reaches this memory first */
		srv_bounce_sync(b, usrc, n);
	}
	return cmm_left(c, user_mm_copy_from(&c->mm, dst, usrc, n), n);
}

static size_t cmm_copy_to(const struct user_mm *mm, uint64_t udst, const void *src, size_t n)
{
	struct srv_client *c = mm_client(mm);
	void *r = n ? srv_region_lookup(c, udst, n) : NULL;

	if (r) {
		memcpy(r, src, n);
		return 0;
	}
	return cmm_left(c, user_mm_copy_to(&c->mm, udst, src, n), n);
}

static size_t cmm_clear(const struct user_mm *mm, uint64_t udst, size_t n)
{
	struct srv_client *c = mm_client(mm);
	void *r = n ? srv_region_lookup(c, udst, n) : NULL;

	if (r) {
		memset(r, 0, n);
		return 0;
	}
	return cmm_left(c, c->mm.ops->clear(&c->mm, udst, n) ? -EFAULT : 0, n);
}

static size_t cmm_fault_in(const struct user_mm *mm, uint64_t uaddr, size_t n, bool write)
{
	struct srv_client *c = mm_client(mm);
	size_t left;

	/* a region is mapped whole, sealed against shrinking */
	if (!n || srv_region_lookup(c, uaddr, n))
		return 0;
	left = write ? c->mm.ops->fault_in_writeable(&c->mm, uaddr, n)
		     : c->mm.ops->fault_in_readable(&c->mm, uaddr, n);
	return cmm_left(c, left ? -EFAULT : 0, n) ? left : 0;
}

static size_t cmm_fault_in_readable(const struct user_mm *mm, uint64_t uaddr, size_t n)
{
	return cmm_fault_in(mm, uaddr, n, false);
}

static size_t cmm_fault_in_writeable(const struct user_mm *mm, uint64_t uaddr, size_t n)
{
	return cmm_fault_in(mm, uaddr, n, true);
}

static void *cmm_map_local(const struct user_mm *mm, uint64_t uaddr, size_t n)
{
	return srv_region_lookup(mm_client(mm), uaddr, n);
}

/* The engine's bounces for this client count with the daemon's own (SRV_MAX_BOUNCE). */
static int cmm_bounce_charge(const struct user_mm *mm, size_t n)
{
	struct srv_client *c = mm_client(mm);

	if (atomic_fetch_add(&c->bounce_bytes, n) + n > SRV_MAX_BOUNCE) {
		atomic_fetch_sub(&c->bounce_bytes, n);
		return -ENOMEM;
	}
	return 0;
}

static void cmm_bounce_uncharge(const struct user_mm *mm, size_t n)
{
	atomic_fetch_sub(&mm_client(mm)->bounce_bytes, n);
}

/*
 * A read into plain memory, issued by one of this client's rings on that
 * ring's pass (a ring worker): bounced in the ring's area (bounce_area.c) when it has
 * one, and only into memory the client may write (the check the copy
 * would make; a bad buffer then bounces as before, and its read ends in
 * -EFAULT as before).
 */
static void *cmm_share_alloc(const struct user_mm *mm, uint64_t uaddr, size_t n, void **area)
{
	struct srv_client *c = mm_client(mm);
	struct srv_bounce *b = srv_bounce_current();
	const struct ucmd_kiocb *req = io_issuing_req;

	if (!b || srv_bounce_client(b) != c)
		return NULL;
	/*
	 * The client's word that it found the buffer writeable at submit
	 * spares a query of its mappings (a system call per pass): a lie
	 * costs only its own read's data. Our own copy, should it not claim
	 * the data, asks the mappings itself (srv_mm_copy_to).
	 */
	if (!(req && srv_bounce_wchecked(b, uaddr, n, req->sq_pos, req->user_data)) &&
	    !user_mm_remote_writeable(&c->mm, uaddr, n))
		return NULL;
	*area = b;
	return srv_bounce_alloc(b, uaddr, n);
}

static bool cmm_share_owns(void *area, const void *p)
{
	return srv_bounce_owns(area, p);
}

static int cmm_share_post(void *area, const void *p, uint64_t uaddr, size_t n)
{
	return srv_bounce_post(area, p, uaddr, n);
}

static void cmm_share_put(void *area, const void *p)
{
	srv_bounce_put(area, p);
}

static const struct user_mm_ops client_mm_ops = {
	.name = "ucmdd_client",
	.copy_from = cmm_copy_from,
	.copy_to = cmm_copy_to,
	.clear = cmm_clear,
	.fault_in_readable = cmm_fault_in_readable,
	.fault_in_writeable = cmm_fault_in_writeable,
	.map_local = cmm_map_local,
	.bounce_charge = cmm_bounce_charge,
	.bounce_uncharge = cmm_bounce_uncharge,
	.share_alloc = cmm_share_alloc,
	.share_owns = cmm_share_owns,
	.share_post = cmm_share_post,
	.share_put = cmm_share_put,
};

/* ---- copies ---- */

/* A copy's result; a gone address space also cuts the client off. */
static int mm_result(struct srv_client *c, int ret)
{
	if (ret && user_mm_gone(&c->mm) && c->sock >= 0)
		shutdown(c->sock, SHUT_RD);
	return ret;
}

int srv_mm_copy_from(struct srv_client *c, void *dst, uint64_t csrc, size_t len)
{
	return mm_result(c, user_mm_copy_from(&c->mm, dst, csrc, len));
}

int srv_mm_copy_to(struct srv_client *c, uint64_t cdst, const void *src, size_t len)
{
	return mm_result(c, user_mm_copy_to(&c->mm, cdst, src, len));
}

int srv_copy_from(struct srv_client *c, void *dst, uint64_t csrc, size_t len)
{
	void *r;

	if (!len)
		return 0;
	r = srv_region_lookup(c, csrc, len);
	if (r) {
		memcpy(dst, r, len);
		return 0;
	}
	return srv_mm_copy_from(c, dst, csrc, len);
}

int srv_copy_to(struct srv_client *c, uint64_t cdst, const void *src, size_t len)
{
	void *r;

	if (!len)
		return 0;
	r = srv_region_lookup(c, cdst, len);
	if (r) {
		memcpy(r, src, len);
		return 0;
	}
	return srv_mm_copy_to(c, cdst, src, len);
}
