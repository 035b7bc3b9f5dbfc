/* SPDX-License-Identifier: MIT */
/*
 * Native multipath for the host (Linux's drivers/nvme/host/multipath.c):
 * controllers of one NVM subsystem, each a path, and one namespace head
 * per namespace they share. The head owns the devices ngXnY and nvmeXnY
 * (X the first path's instance); the paths' own namespace devices are
 * hidden (nvme_host.ns_hidden). Each I/O picks a path with
 * nvme_mpath_select(); a block I/O that fails with a path error is sent
 * again on another path (nvme_failover_req), passthrough is not.
 */
#ifndef UCMD_NVME_HOST_MULTIPATH_H
#define UCMD_NVME_HOST_MULTIPATH_H

#include <pthread.h>
#include <stdatomic.h>

#include "host.h"
#include "mpath_select.h"

#define NVME_MPATH_MAX_PATHS	8
/*
 * Heads a subsystem may have: the namespace IDs one Identify active list
 * holds. The table is that size from the start, so that a head a rescan
 * adds never moves the others (readers take no lock).
 */
#define NVME_MPATH_MAX_HEADS	1024
/*
 * The ANA log of a path is read again when its controller sends the ANA
 * Change notice (an Asynchronous Event Request is kept outstanding on each
 * path, as Linux's nvme_async_event), when an I/O gets an ANA status, and,
 * as a safety net for a notice lost with a connection, every 10 s (ucmdd's
 * and nvmet's ANATT). Not more often: a target that sends its notices
 * lazily (ucmdd, within a second) sends none for a change the host read
 * the log after.
 */
#define NVME_MPATH_ANA_POLL_MS	10000u
/* How long a request with no usable path waits before it looks again. */
#define NVME_MPATH_REQUEUE_MS	20u

struct nvme_subsys;

struct nvme_ns_head {
	/*
	 * What the head's files point at: a namespace with the paths'
	 * geometry and the head's device names, so that describe() and the
	 * permission checks see the head as they see a namespace. Its queues
	 * are never used: requests go to a path's namespace.
	 */
	struct nvme_ns rep;
	struct nvme_subsys *subsys;
	uint32_t nsid;
	struct nvme_ns *path_ns[NVME_MPATH_MAX_PATHS];	/* NULL: not on that path */
	_Atomic uint8_t ana_state[NVME_MPATH_MAX_PATHS];
	atomic_uint nr_active[NVME_MPATH_MAX_PATHS];	/* block I/O in flight, queue-depth's */
	atomic_ulong dispatched[NVME_MPATH_MAX_PATHS];	/* requests sent on each path */
	atomic_int current_path;			/* round-robin's last choice */
	bool devices_added;
	/*
	 * No path has its namespace any more (deleted, or detached from every
	 * controller): its devices are unlinked, it takes no I/O, and a
	 * namespace made again with its NSID gets a new head. Set under lock.
	 */
	atomic_bool removed;
};

struct nvme_subsys {
	struct ucmd_engine *engine;
	atomic_int iopolicy;			/* enum nvme_iopolicy */
	unsigned nr_paths;
	struct nvme_host *paths[NVME_MPATH_MAX_PATHS];
	struct nvme_ns_head **heads;		/* NVME_MPATH_MAX_HEADS of them */
	unsigned nr_heads;			/* grows under lock (a rescan), never shrinks */
	atomic_ulong failovers;			/* block requests sent again on another path */
	/*
	 * Paths not attached at the start (paths[p] NULL, published with
	 * nvme_mpath_add_path once connected): pending while their connection
	 * is retried (tcp_multipath.c's thread), under lock.
	 */
	bool pending[NVME_MPATH_MAX_PATHS];
	void *connect;				/* tcp_multipath.c's retry state */

	/*
	 * One Asynchronous Event Request per path: aer_want asks the thread
	 * to send it (again), aer_pending while it is outstanding; ana_aens
	 * counts the ANA Change notices. Under lock.
	 */
	struct nvme_mpath_aer {
		struct nvme_subsys *s;
		unsigned path;
	} aer[NVME_MPATH_MAX_PATHS];
	bool aer_want[NVME_MPATH_MAX_PATHS], aer_pending[NVME_MPATH_MAX_PATHS];
	/* a Namespace Attribute notice came: the log read, the path and heads scanned */
	bool chg_log_want[NVME_MPATH_MAX_PATHS];
	unsigned long ana_aens[NVME_MPATH_MAX_PATHS];

	/* the requeue thread and the ANA thread */
	pthread_mutex_t lock;
	pthread_cond_t cond;			/* CLOCK_MONOTONIC */
	struct ucmd_kiocb_rw *requeue_head, *requeue_tail;
	bool ana_stale, stop, requeue_started, ana_started;
	pthread_t requeue_thr, ana_thr;
};

/*
 * The subsystem over nr started hosts (paths, each with ns_hidden set;
 * NULL for one not attached yet, at least one given), the heads' devices
 * added (named after path 0's instance): 0 or -errno. On failure the
 * hosts stay the caller's.
 */
int  nvme_mpath_create(struct ucmd_engine *e, struct nvme_host **paths, unsigned nr,
		       enum nvme_iopolicy pol, struct nvme_subsys **out);
/*
 * The heads' devices removed, the thread stopped: then the caller detaches
 * the paths (an outstanding event request ends then, s must still exist)
 * and frees s with nvme_mpath_free(). nvme_mpath_destroy() does both when
 * no event request was sent (the attach's failure).
 */
void nvme_mpath_stop(struct nvme_subsys *s);
void nvme_mpath_free(struct nvme_subsys *s);
void nvme_mpath_destroy(struct nvme_subsys *s);
/*
 * Path p, NULL until now, is host h (started, ns_hidden): its namespaces
 * join the heads of the same NSID (none is made for another), its ANA log
 * is read before it is used. 0, or -EINVAL, -ESHUTDOWN (being detached:
 * h stays the caller's).
 */
int  nvme_mpath_add_path(struct nvme_subsys *s, unsigned p, struct nvme_host *h);
/* The path a request of head takes now, or -1 (Linux's nvme_find_path). */
int  nvme_mpath_find_path(struct nvme_ns_head *head);
/* Read path p's ANA log and set the heads' states from it: 0 or -errno. */
int  nvme_mpath_read_ana(struct nvme_subsys *s, unsigned p);

extern const struct ucmd_file_ops nvme_ns_head_chr_fops, nvme_ns_head_bdev_fops;

#endif
