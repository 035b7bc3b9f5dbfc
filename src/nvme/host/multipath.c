/* SPDX-License-Identifier: MIT */
/*
 * Native multipath (multipath.h): the namespace heads' devices, path
 * choice per request, failover of block I/O, the paths' ANA states.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "multipath.h"

/* A path not attached yet (NULL: its connection is being retried) is gone for now. */
static int path_state(struct nvme_host *h)
{
	if (!h)
		return NVME_PATH_GONE;
	return h->ops->path_state ? h->ops->path_state(h) : NVME_PATH_LIVE;
}

static struct nvme_host *path_host(struct nvme_subsys *s, unsigned p)
{
	return __atomic_load_n(&s->paths[p], __ATOMIC_ACQUIRE);
}

static struct nvme_ns *path_ns(struct nvme_ns_head *head, unsigned p)
{
	return __atomic_load_n(&head->path_ns[p], __ATOMIC_ACQUIRE);
}

static struct nvme_ns_head *file_head(const struct ucmd_file *f)
{
	/* rep is the head's first member: the files point at it */
	return (struct nvme_ns_head *)f->private_data;
}

int nvme_mpath_find_path(struct nvme_ns_head *head)
{
	struct nvme_subsys *s = head->subsys;
	struct nvme_path_view v[NVME_MPATH_MAX_PATHS];
	enum nvme_iopolicy pol = (enum nvme_iopolicy)atomic_load(&s->iopolicy);
	int idx;

	for (unsigned i = 0; i < s->nr_paths; i++) {
		struct nvme_ns *ns = path_ns(head, i);

		v[i].live = ns && !ns->gone && path_state(path_host(s, i)) == NVME_PATH_LIVE;
		v[i].ana_state = atomic_load(&head->ana_state[i]);
		v[i].nr_active = atomic_load(&head->nr_active[i]);
	}
	idx = nvme_mpath_select(v, s->nr_paths, pol, atomic_load(&head->current_path));
	if (pol == NVME_IOPOLICY_RR && idx >= 0)
		atomic_store(&head->current_path, idx);
	return idx;
}

/*
 * Linux's nvme_available_path(): a path that may carry I/O later (its
 * controller live or reconnecting). A request with no usable path waits
 * for one while such a path exists, and fails when none does.
 */
static bool nvme_available_path(struct nvme_ns_head *head)
{
	if (atomic_load(&head->removed))
		return false;
	for (unsigned i = 0; i < head->subsys->nr_paths; i++) {
		struct nvme_ns *ns = path_ns(head, i);

		if (ns && !ns->gone && path_state(path_host(head->subsys, i)) != NVME_PATH_GONE)
			return true;
	}
	/* a path still being connected to may come (tcp_multipath.c) */
	pthread_mutex_lock(&head->subsys->lock);
	for (unsigned i = 0; i < head->subsys->nr_paths; i++)
		if (head->subsys->pending[i]) {
			pthread_mutex_unlock(&head->subsys->lock);
			return true;
		}
	pthread_mutex_unlock(&head->subsys->lock);
	return false;
}

/* ---- ngXnY: passthrough, never retried ---------------------------------- */

/*
 * As Linux's nvme_ns_head_chr_uring_cmd(): the command goes to the path
 * nvme_find_path() gives, -EINVAL when there is none; its completion,
 * a path error included, is the caller's.
 */
static int head_chr_uring_cmd(struct io_uring_cmd *ioucmd, unsigned issue_flags)
{
	struct nvme_ns_head *head = file_head(ioucmd->file);
	int idx = nvme_mpath_find_path(head);

	if (idx < 0)
		return -EINVAL;
	atomic_fetch_add(&head->dispatched[idx], 1);
	return nvme_ns_uring_cmd(head->path_ns[idx], ioucmd, issue_flags);
}

/* As Linux's nvme_ns_head_ioctl(): -EWOULDBLOCK when no path is usable. */
static long head_ioctl(struct ucmd_file *f, unsigned long cmd, void *arg, const void *karg)
{
	struct nvme_ns_head *head = file_head(f);
	int idx = nvme_mpath_find_path(head);

	if (idx < 0)
		return -EWOULDBLOCK;
	atomic_fetch_add(&head->dispatched[idx], 1);
	return nvme_ns_ioctl_ns(head->path_ns[idx], cmd, arg, karg);
}

const struct ucmd_file_ops nvme_ns_head_chr_fops = {
	.name = "nvme-generic-head",
	.uring_cmd = head_chr_uring_cmd,
	.uring_cmd_iopoll = nvme_ns_uring_cmd_iopoll,
	.ioctl = head_ioctl,
	.describe = nvme_ns_describe,
	.describe_ioctl = nvme_ns_describe_ioctl,
};

/* ---- nvmeXnY: block I/O with failover ----------------------------------- */

struct nvme_head_pdu {
	struct nvme_bdev_pdu b;		/* first: nvme_bdev_iopoll reads it */
	struct ucmd_kiocb_rw *next;	/* on the requeue list */
	int path;
	bool write;
};
_Static_assert(sizeof(struct nvme_head_pdu) <= sizeof(((struct ucmd_kiocb_rw *)0)->pdu),
	       "the head's pdu fits ucmd_kiocb_rw.pdu");

static struct nvme_head_pdu *head_pdu(struct ucmd_kiocb_rw *kiocb)
{
	return (struct nvme_head_pdu *)(void *)kiocb->pdu;
}

static void requeue(struct nvme_subsys *s, struct ucmd_kiocb_rw *kiocb)
{
	struct nvme_head_pdu *pdu = head_pdu(kiocb);

	pdu->b.nvmeq = NULL;	/* nothing to poll until it is sent again */
	pdu->next = NULL;
	pthread_mutex_lock(&s->lock);
	if (s->requeue_tail)
		head_pdu(s->requeue_tail)->next = kiocb;
	else
		s->requeue_head = kiocb;
	s->requeue_tail = kiocb;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* An ANA status says the path's state: taken at once, the log read soon. */
static void note_ana_status(struct nvme_ns_head *head, int path, int st)
{
	uint8_t state = 0;

	switch (st & 0x7ff) {
	case 0x301: state = NVME_ANA_STATE_PERSISTENT_LOSS; break;
	case 0x302: state = NVME_ANA_STATE_INACCESSIBLE; break;
	case 0x303: state = NVME_ANA_STATE_CHANGE; break;
	}
	if (state)
		atomic_store(&head->ana_state[path], state);
	pthread_mutex_lock(&head->subsys->lock);
	head->subsys->ana_stale = true;
	pthread_mutex_unlock(&head->subsys->lock);
}

/*
 * Linux's nvme_failover_req(): a request that failed with a path error
 * (and without Do Not Retry) is sent again on another path by the requeue
 * thread; anything else completes as the block device's would.
 */
static enum rq_end_io_ret head_end_io(struct request *rq, blk_status_t err)
{
	struct ucmd_kiocb_rw *kiocb = rq->end_io_data;
	struct nvme_head_pdu *pdu = head_pdu(kiocb);
	struct nvme_ns_head *head = file_head(kiocb->file);
	int st = nvme_end_status(rq, err);

	nvme_rq_release(rq);
	atomic_fetch_sub(&head->nr_active[pdu->path], 1);
	if (st && nvme_mpath_is_path_error(st) && !(st > 0 && (st & NVME_SC_DNR))) {
		if (st > 0)
			note_ana_status(head, pdu->path, st);
		atomic_fetch_add(&head->subsys->failovers, 1);
		requeue(head->subsys, kiocb);
		return RQ_END_IO_FREE;
	}
	kiocb->ki_complete(kiocb, st == 0 ? (long)pdu->b.count : st > 0 ? -EIO : st);
	return RQ_END_IO_FREE;
}

static long head_issue(struct nvme_ns_head *head, struct ucmd_kiocb_rw *kiocb, int idx,
		       unsigned issue_flags)
{
	struct nvme_head_pdu *pdu = head_pdu(kiocb);
	long ret;

	pdu->path = idx;
	atomic_fetch_add(&head->nr_active[idx], 1);
	atomic_fetch_add(&head->dispatched[idx], 1);
	ret = nvme_bdev_rw_ns(head->path_ns[idx], kiocb, issue_flags, pdu->write, head_end_io);
	if (ret != -EIOCBQUEUED)
		atomic_fetch_sub(&head->nr_active[idx], 1);
	return ret;
}

static long head_rw(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags, bool write)
{
	struct nvme_ns_head *head = file_head(kiocb->file);
	int idx = nvme_mpath_find_path(head);

	head_pdu(kiocb)->write = write;
	if (idx >= 0)
		return head_issue(head, kiocb, idx, issue_flags);
	/* Linux's nvme_ns_head_submit_bio(): wait for a path, or fail with none */
	if (!nvme_available_path(head))
		return -EIO;
	requeue(head->subsys, kiocb);
	return -EIOCBQUEUED;
}

static long head_read_iter(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags)
{
	return head_rw(kiocb, issue_flags, false);
}

static long head_write_iter(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags)
{
	return head_rw(kiocb, issue_flags, true);
}

static int head_fsync(struct ucmd_file *f, int datasync)
{
	struct nvme_ns_head *head = file_head(f);
	int idx = nvme_mpath_find_path(head);

	return idx < 0 ? -EIO : nvme_bdev_flush_ns(head->path_ns[idx], datasync);
}

const struct ucmd_file_ops nvme_ns_head_bdev_fops = {
	.name = "nvme-block-head",
	.read_iter = head_read_iter,
	.write_iter = head_write_iter,
	.iopoll = nvme_bdev_iopoll,
	.fsync = head_fsync,
	.describe_rw = nvme_bdev_describe_rw,
	.ioctl = head_ioctl,
	.describe_ioctl = nvme_ns_describe_ioctl,
};

/* ---- ANA ------------------------------------------------------------------ */

static struct nvme_ns_head *find_head(struct nvme_subsys *s, uint32_t nsid)
{
	for (unsigned i = 0; i < s->nr_heads; i++)
		if (s->heads[i]->nsid == nsid && !atomic_load(&s->heads[i]->removed))
			return s->heads[i];
	return NULL;
}

#define ANA_LOG_BYTES	4096u

int nvme_mpath_read_ana(struct nvme_subsys *s, unsigned p)
{
	struct nvme_host *h = path_host(s, p);
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff };
	uint8_t *buf;
	size_t off = 16;
	unsigned ngrps;
	int ret;

	if (!h)
		return -ENOTCONN;
	/* a controller without ANA reporting: every namespace optimized (Linux) */
	if (!(h->id->cmic & NVME_CTRL_CMIC_MULTI_ANA_REPORTING)) {
		for (unsigned i = 0; i < s->nr_heads; i++)
			atomic_store(&s->heads[i]->ana_state[p], NVME_ANA_STATE_OPTIMIZED);
		return 0;
	}
	if (path_state(h) != NVME_PATH_LIVE)
		return -ENOTCONN;
	buf = aligned_alloc(NVME_PAGE_SIZE, ANA_LOG_BYTES);
	if (!buf)
		return -ENOMEM;
	memset(buf, 0, ANA_LOG_BYTES);
	c.cdw10 = NVME_LOG_LID_ANA | ((ANA_LOG_BYTES / 4 - 1) << 16);
	ret = nvme_submit_sync_cmd(h, &c, buf, ANA_LOG_BYTES, NULL);
	if (ret) {
		free(buf);
		return ret > 0 ? -EIO : ret;
	}
	ngrps = le16toh(((struct nvme_ana_log *)(void *)buf)->ngrps);
	for (unsigned g = 0; g < ngrps && off + sizeof(struct nvme_ana_group_desc) <= ANA_LOG_BYTES;
	     g++) {
		struct nvme_ana_group_desc *d = (void *)(buf + off);
		uint32_t nn = le32toh(d->nnsids);
		uint8_t state = d->state & 0x0f;

		off += sizeof(*d);
		for (uint32_t k = 0; k < nn && off + 4 <= ANA_LOG_BYTES; k++, off += 4) {
			uint32_t nsid;
			struct nvme_ns_head *head;

			memcpy(&nsid, buf + off, 4);
			head = find_head(s, le32toh(nsid));
			if (head)
				atomic_store(&head->ana_state[p], state);
		}
	}
	free(buf);
	return 0;
}

/* ---- the ANA Change notice -------------------------------------------------- */

/*
 * An Asynchronous Event Request completed: an ANA Change notice has the
 * log read; the request is sent again by the thread (not from here: this
 * may be the admin queue's receiver, which a reconnection joins). One that
 * failed (cancelled at detach, refused) is not.
 */
static enum rq_end_io_ret aer_end_io(struct request *rq, blk_status_t err)
{
	struct nvme_mpath_aer *a = rq->end_io_data;
	struct nvme_subsys *s = a->s;
	int st = nvme_end_status(rq, err);
	uint32_t res = (uint32_t)nvme_req(rq)->result;

	nvme_rq_release(rq);
	pthread_mutex_lock(&s->lock);
	s->aer_pending[a->path] = false;
	if (st == 0 && !s->stop) {
		/* type 2 (notice), information 03h (ANA change), log page 0Ch */
		if ((res & 0x7) == NVME_AER_NOTICE && ((res >> 8) & 0xff) == 0x03) {
			s->ana_aens[a->path]++;
			s->ana_stale = true;
		}
		/*
		 * Namespace Attribute Changed: its log read (Linux's
		 * nvme_clear_changed_ns_log), else the controller keeps every
		 * later notice, an ANA Change too, masked (NVMe 2.0 5.2.2).
		 */
		if ((res & 0x7) == NVME_AER_NOTICE && ((res >> 8) & 0xff) == 0x00)
			s->chg_log_want[a->path] = true;
		s->aer_want[a->path] = true;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return RQ_END_IO_FREE;
}

/* Keep one Asynchronous Event Request outstanding on path p (called unlocked). */
static void aer_submit(struct nvme_subsys *s, unsigned p)
{
	struct nvme_host *h = s->paths[p];
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_async_event };
	struct request *rq;
	int err;

	rq = nvme_alloc_request(&h->admin_q, &c, REQ_OP_DRV_IN, 0, &err);
	pthread_mutex_lock(&s->lock);
	if (!rq) {
		s->aer_want[p] = true;	/* tried again on the next pass */
		pthread_mutex_unlock(&s->lock);
		return;
	}
	s->aer_pending[p] = true;
	pthread_mutex_unlock(&s->lock);

	/* it waits for an event as long as it takes: no deadline of its own */
	rq->timeout_ms = UINT32_MAX;
	rq->end_io = aer_end_io;
	rq->end_io_data = &s->aer[p];
	blk_execute_rq_nowait(rq, false);
}

/*
 * Read path p's Changed Namespace List (log 04h) and drop it: the notice
 * is unmasked. The caller then scans the path again (scan_heads).
 */
static void clear_changed_ns_log(struct nvme_subsys *s, unsigned p)
{
	struct nvme_host *h = path_host(s, p);
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff };
	void *buf;

	if (!h || path_state(h) != NVME_PATH_LIVE)
		return;
	buf = aligned_alloc(NVME_PAGE_SIZE, NVME_PAGE_SIZE);
	if (!buf)
		return;
	c.cdw10 = NVME_LOG_LID_CHANGED_NS | ((NVME_PAGE_SIZE / 4 - 1) << 16);
	nvme_submit_sync_cmd(h, &c, buf, NVME_PAGE_SIZE, NULL);
	free(buf);
}

static struct nvme_ns_head *head_new(struct nvme_subsys *s, struct nvme_host *first,
				     unsigned idx, struct nvme_ns *ns);
static int add_head_devices(struct nvme_subsys *s, struct nvme_ns_head *head);

/* The namespaces path host h has now, copied under its scan lock: how many, or -ENOMEM. */
static int path_namespaces(struct nvme_host *h, struct nvme_ns ***out)
{
	struct nvme_ns **v;
	unsigned n;

	pthread_mutex_lock(&h->scan_lock);
	n = h->nr_ns;
	v = calloc(n ? n : 1, sizeof(*v));
	if (v)
		memcpy(v, h->ns, n * sizeof(*v));
	pthread_mutex_unlock(&h->scan_lock);
	*out = v;
	return v ? (int)n : -ENOMEM;
}

/*
 * Linux's nvme_mpath_remove_disk once the last path's namespace went
 * (nvme_ns_remove): a head whose namespace no path has any more loses its
 * devices (unlinked: files open on them stay, and their I/O finds no path:
 * passthrough EINVAL, block I/O EIO). It stays allocated for those files
 * until the subsystem is freed. Under s->lock.
 */
static void remove_orphan_heads(struct nvme_subsys *s)
{
	for (unsigned i = 0; i < s->nr_heads; i++) {
		struct nvme_ns_head *head = s->heads[i];
		bool has = false;

		if (atomic_load(&head->removed))
			continue;
		for (unsigned p = 0; p < s->nr_paths && !has; p++) {
			struct nvme_ns *ns = path_ns(head, p);

			has = ns && !ns->gone;
		}
		if (has)
			continue;
		atomic_store(&head->removed, true);
		if (!head->devices_added)
			continue;
		engine_unlink_device(s->engine, head->rep.ng_name);
		if (!head->rep.no_bdev)
			engine_unlink_device(s->engine, head->rep.blk_name);
		head->devices_added = false;
	}
}

/*
 * Linux's nvme_scan_work, for the heads: path p's namespaces scanned
 * again (nvme_rescan: new ones allocated, deleted ones gone), a namespace
 * ID no head has gets one, its devices added once every path's ANA log
 * was read; a head takes the path's namespace it did not have, or one
 * made again after a deletion. A deleted or detached namespace's head
 * loses that path; once it has none, it is removed (remove_orphan_heads).
 */
static void scan_heads(struct nvme_subsys *s, unsigned p)
{
	struct nvme_host *h = path_host(s, p), *first = NULL;
	struct nvme_ns_head **fresh;
	struct nvme_ns **ns;
	unsigned first_idx = 0, nfresh = 0;
	int n;

	if (!h || path_state(h) != NVME_PATH_LIVE || nvme_rescan(h))
		return;
	n = path_namespaces(h, &ns);
	if (n < 0)
		return;
	fresh = calloc(n ? (size_t)n : 1, sizeof(*fresh));
	if (!fresh) {
		free(ns);
		return;
	}
	/* the heads' devices are named after the first path attached, as at the start */
	for (unsigned i = 0; i < s->nr_paths && !first; i++)
		if ((first = path_host(s, i)))
			first_idx = i;
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < n && !s->stop; i++) {
		struct nvme_ns_head *head;
		struct nvme_ns *cur;

		if (ns[i]->gone)
			continue;
		head = find_head(s, ns[i]->nsid);
		if (!head) {
			if (s->nr_heads == NVME_MPATH_MAX_HEADS ||
			    !(head = head_new(s, first, first_idx, ns[i])))
				continue;
			s->heads[s->nr_heads] = head;
			__atomic_store_n(&s->nr_heads, s->nr_heads + 1, __ATOMIC_RELEASE);
			fresh[nfresh++] = head;
		}
		cur = path_ns(head, p);
		if (!cur || cur->gone)
			__atomic_store_n(&head->path_ns[p], ns[i], __ATOMIC_RELEASE);
	}
	if (!s->stop)
		remove_orphan_heads(s);
	pthread_mutex_unlock(&s->lock);
	/* a new head's paths have their states before its first I/O */
	for (unsigned q = 0; nfresh && q < s->nr_paths; q++)
		nvme_mpath_read_ana(s, q);
	/*
	 * Under the lock, against nvme_mpath_stop's removal of the devices
	 * (the engine's lock is taken inside this one, never around it).
	 */
	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < nfresh && !s->stop; i++)
		add_head_devices(s, fresh[i]);
	pthread_mutex_unlock(&s->lock);
	free(fresh);
	free(ns);
}

/* ---- the requeue and ANA thread ------------------------------------------- */

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void ms_to_ts(uint64_t ms, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ms / 1000u);
	ts->tv_nsec = (long)(ms % 1000u) * 1000000L;
}

/* Send a requeued request on a usable path: false when it must wait. */
static bool resubmit(struct ucmd_kiocb_rw *kiocb)
{
	struct nvme_ns_head *head = file_head(kiocb->file);
	int idx = nvme_mpath_find_path(head);
	long ret;

	if (idx < 0) {
		if (nvme_available_path(head))
			return false;
		kiocb->ki_complete(kiocb, -EIO);
		return true;
	}
	ret = head_issue(head, kiocb, idx, 0);
	if (ret != -EIOCBQUEUED)
		kiocb->ki_complete(kiocb, ret);
	return true;
}

/*
 * The ANA thread: keeps the event requests outstanding and reads the ANA
 * logs when told (a notice, an ANA status) and every NVME_MPATH_ANA_POLL_MS.
 * Its reads are synchronous commands that a path being reconnected holds:
 * apart from the requeue thread, so that failover never waits for them.
 */
static void *ana_thread(void *arg)
{
	struct nvme_subsys *s = arg;
	uint64_t next_ana = 0;
	struct timespec ts;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		uint64_t until;
		bool want = false;

		for (unsigned p = 0; p < s->nr_paths; p++) {
			if (!s->aer_want[p] || path_state(path_host(s, p)) != NVME_PATH_LIVE)
				continue;
			s->aer_want[p] = false;
			pthread_mutex_unlock(&s->lock);
			aer_submit(s, p);
			pthread_mutex_lock(&s->lock);
		}
		for (unsigned p = 0; p < s->nr_paths; p++) {
			if (!s->chg_log_want[p])
				continue;
			s->chg_log_want[p] = false;
			pthread_mutex_unlock(&s->lock);
			clear_changed_ns_log(s, p);
			scan_heads(s, p);
			pthread_mutex_lock(&s->lock);
		}
		if (s->ana_stale || mono_ms() >= next_ana) {
			s->ana_stale = false;
			pthread_mutex_unlock(&s->lock);
			for (unsigned p = 0; p < s->nr_paths; p++)
				nvme_mpath_read_ana(s, p);
			pthread_mutex_lock(&s->lock);
			next_ana = mono_ms() + NVME_MPATH_ANA_POLL_MS;
			/* the requeue thread looks at its waiting requests again */
			pthread_cond_broadcast(&s->cond);
		}
		if (s->stop || s->ana_stale)
			continue;
		until = next_ana;
		for (unsigned p = 0; p < s->nr_paths; p++)
			want |= s->aer_want[p];
		if (want && mono_ms() + NVME_MPATH_REQUEUE_MS < until)
			until = mono_ms() + NVME_MPATH_REQUEUE_MS;	/* a path to come back */
		ms_to_ts(until, &ts);
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * The requeue thread (Linux's requeue_work): sends the requests that
 * failed over, or found no usable path, on the path chosen now; those
 * still without one wait, looked at again every NVME_MPATH_REQUEUE_MS and
 * after each ANA read.
 */
static void *requeue_thread(void *arg)
{
	struct nvme_subsys *s = arg;
	struct timespec ts;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct ucmd_kiocb_rw *list, *waiting = NULL, *wtail = NULL;

		list = s->requeue_head;
		s->requeue_head = s->requeue_tail = NULL;
		pthread_mutex_unlock(&s->lock);
		while (list) {
			struct ucmd_kiocb_rw *k = list;

			list = head_pdu(k)->next;
			head_pdu(k)->next = NULL;
			if (resubmit(k))
				continue;
			if (wtail)
				head_pdu(wtail)->next = k;
			else
				waiting = k;
			wtail = k;
		}
		pthread_mutex_lock(&s->lock);
		if (waiting) {
			/* before what came meanwhile: the order requests came in */
			head_pdu(wtail)->next = s->requeue_head;
			if (!s->requeue_head)
				s->requeue_tail = wtail;
			s->requeue_head = waiting;
		}
		if (s->stop || (s->requeue_head && !waiting))
			continue;
		ms_to_ts(mono_ms() + (waiting ? NVME_MPATH_REQUEUE_MS : NVME_MPATH_ANA_POLL_MS),
			 &ts);
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	/* the subsystem goes away: what still waits for a path fails */
	while (s->requeue_head) {
		struct ucmd_kiocb_rw *k = s->requeue_head;

		s->requeue_head = head_pdu(k)->next;
		pthread_mutex_unlock(&s->lock);
		k->ki_complete(k, -EIO);
		pthread_mutex_lock(&s->lock);
	}
	s->requeue_tail = NULL;
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- the subsystem -------------------------------------------------------- */

/* first: the first path attached, path idx: the devices take path 0's instance */
static struct nvme_ns_head *head_new(struct nvme_subsys *s, struct nvme_host *first,
				     unsigned idx, struct nvme_ns *ns)
{
	struct nvme_ns_head *head = calloc(1, sizeof(*head));

	if (!head)
		return NULL;
	head->subsys = s;
	head->nsid = ns->nsid;
	head->rep.host = first;
	head->rep.nsid = ns->nsid;
	head->rep.nsze = ns->nsze;
	head->rep.lba_shift = ns->lba_shift;
	head->rep.ms = ns->ms;
	head->rep.ext = ns->ext;
	head->rep.zoned = ns->zoned;
	head->rep.no_bdev = ns->no_bdev;
	head->rep.zone_blocks = ns->zone_blocks;
	snprintf(head->rep.ng_name, sizeof(head->rep.ng_name), "ng%un%u",
		 first->opts.instance - idx, ns->nsid);
	snprintf(head->rep.blk_name, sizeof(head->rep.blk_name), "nvme%un%u",
		 first->opts.instance - idx, ns->nsid);
	atomic_store(&head->current_path, -1);
	return head;
}

static int add_head_devices(struct nvme_subsys *s, struct nvme_ns_head *head)
{
	int ret = engine_add_device(s->engine, head->rep.ng_name, &nvme_ns_head_chr_fops,
				    &head->rep);

	if (ret)
		return ret;
	head->devices_added = true;
	if (head->rep.no_bdev)
		return 0;
	ret = engine_add_device(s->engine, head->rep.blk_name, &nvme_ns_head_bdev_fops,
				&head->rep);
	if (ret) {
		engine_remove_device(s->engine, head->rep.ng_name);
		head->devices_added = false;
	}
	return ret;
}

int nvme_mpath_create(struct ucmd_engine *e, struct nvme_host **paths, unsigned nr,
		      enum nvme_iopolicy pol, struct nvme_subsys **out)
{
	struct nvme_subsys *s;
	struct nvme_host *first = NULL;
	unsigned first_idx = 0;
	pthread_condattr_t ca;
	int ret = -ENOMEM;

	if (!nr || nr > NVME_MPATH_MAX_PATHS)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->engine = e;
	s->nr_paths = nr;
	for (unsigned p = 0; p < nr; p++) {
		s->aer[p].s = s;
		s->aer[p].path = p;
		/* Linux sends it when the controller says it has ANA change notices */
		s->aer_want[p] = paths[p] && (le32toh(paths[p]->id->oaes) & NVME_CTRL_OAES_ANA);
		if (paths[p] && !first)
			first = paths[p], first_idx = p;
	}
	if (!first) {
		free(s);
		return -EINVAL;
	}
	atomic_store(&s->iopolicy, (int)pol);
	memcpy(s->paths, paths, nr * sizeof(*paths));
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	s->heads = calloc(NVME_MPATH_MAX_HEADS, sizeof(*s->heads));
	if (!s->heads)
		goto fail;
	/* one head per namespace ID any path has: the subsystem's NSIDs are shared */
	for (unsigned p = 0; p < nr; p++) {
		for (unsigned i = 0; paths[p] && i < paths[p]->nr_ns; i++) {
			struct nvme_ns *ns = paths[p]->ns[i];
			struct nvme_ns_head *head;

			if (ns->gone)
				continue;
			head = find_head(s, ns->nsid);
			if (!head) {
				if (s->nr_heads == NVME_MPATH_MAX_HEADS) {
					ret = -ENOSPC;
					goto fail;
				}
				head = head_new(s, first, first_idx, ns);
				if (!head)
					goto fail;
				s->heads[s->nr_heads++] = head;
			}
			head->path_ns[p] = ns;
		}
	}
	/* the ANA states before the first I/O, as Linux's nvme_mpath_init_identify */
	for (unsigned p = 0; p < nr; p++) {
		ret = paths[p] ? nvme_mpath_read_ana(s, p) : 0;
		if (ret)
			goto fail;
	}
	for (unsigned i = 0; i < s->nr_heads; i++) {
		ret = add_head_devices(s, s->heads[i]);
		if (ret)
			goto fail;
	}
	ret = -pthread_create(&s->requeue_thr, NULL, requeue_thread, s);
	if (ret)
		goto fail;
	s->requeue_started = true;
	ret = -pthread_create(&s->ana_thr, NULL, ana_thread, s);
	if (ret)
		goto fail;	/* nvme_mpath_destroy joins the requeue thread */
	s->ana_started = true;
	*out = s;
	return 0;
fail:
	nvme_mpath_destroy(s);
	return ret;
}

int nvme_mpath_add_path(struct nvme_subsys *s, unsigned p, struct nvme_host *h)
{
	if (p >= s->nr_paths || path_host(s, p))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (s->stop) {
		pthread_mutex_unlock(&s->lock);
		return -ESHUTDOWN;
	}
	/* the host first: a namespace published on it is reached through it */
	__atomic_store_n(&s->paths[p], h, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < h->nr_ns; i++) {
		struct nvme_ns_head *head = find_head(s, h->ns[i]->nsid);

		/* its ANA state stays 0 (none) until its log is read: not used before */
		if (head && !h->ns[i]->gone)
			__atomic_store_n(&head->path_ns[p], h->ns[i], __ATOMIC_RELEASE);
	}
	s->pending[p] = false;
	s->aer_want[p] = !!(le32toh(h->id->oaes) & NVME_CTRL_OAES_ANA);
	s->ana_stale = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Under s->lock: the heads' devices go (a rescan adds under it too). */
static void remove_head_devices(struct nvme_subsys *s)
{
	for (unsigned i = 0; i < s->nr_heads; i++) {
		struct nvme_ns_head *head = s->heads[i];

		if (!head->devices_added)
			continue;
		engine_remove_device(s->engine, head->rep.ng_name);
		if (!head->rep.no_bdev)
			engine_remove_device(s->engine, head->rep.blk_name);
		head->devices_added = false;
	}
}

void nvme_mpath_stop(struct nvme_subsys *s)
{
	pthread_mutex_lock(&s->lock);
	remove_head_devices(s);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (s->ana_started)
		pthread_join(s->ana_thr, NULL);
	if (s->requeue_started)
		pthread_join(s->requeue_thr, NULL);
	s->ana_started = s->requeue_started = false;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	/* a head a rescan added before it saw stop */
	remove_head_devices(s);
	pthread_mutex_unlock(&s->lock);
}

void nvme_mpath_free(struct nvme_subsys *s)
{
	for (unsigned i = 0; i < s->nr_heads; i++)
		free(s->heads[i]);
	free(s->heads);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void nvme_mpath_destroy(struct nvme_subsys *s)
{
	if (!s)
		return;
	nvme_mpath_stop(s);
	nvme_mpath_free(s);
}
