/* SPDX-License-Identifier: MIT */
/*
 * Internals of the NVMe host driver, shared by its files:
 *   queue.c    what every transport's queues share: completion, the timeout
 *              handshake, cancelling, the I/O queues' count and tag sets
 *   pci.c      rings, doorbells, interrupts, polling, Abort on timeout (nvme-pci's role)
 *   tcp.c      the NVMe/TCP transport (nvme-tcp's role): PDUs on one socket per queue
 *   fabrics.c  Connect, Property Get/Set, host NQN, keep-alive, URL parsing
 *              (nvme-fabrics' role), on any fabrics transport (fabrics.h)
 *   dma.c      PRP lists and SGLs for a request's data
 *   submit.c   request allocation and synchronous execution
 *   core.c     bring-up and teardown through the transport's ops, namespace
 *              scan, effects log, devices
 * The transports call into core.c and queue.c, never into each other;
 * core.c and queue.c reach a transport only through struct nvme_ctrl_ops.
 *   ioctl.c    the passthrough request builder, uring_cmd and ioctl entry points
 *   block.c    the block device nvmeXnY
 *   describe.c describe() / describe_rw() for security modules
 */
#ifndef UCMD_NVME_HOST_H
#define UCMD_NVME_HOST_H

#include <errno.h>
#include <nvme/types.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "block/blk.h"
#include "core/file.h"
#include "core/iov_iter.h"
#include "core/task.h"
#include "uaccess/uaccess.h"
#include "core/uring_cmd.h"
#include "nvme/ctrl/ctrl.h"
#include "ucmd/nvme.h"
#include "ucmd/uapi/io_uring.h"
#include "ucmd/uapi/nvme_ioctl.h"
#include "ucmd/nvme_wire.h"

#define NVME_ADMIN_DEPTH	32
#define NVME_PAGE_SIZE		4096u
/* cid = generation << 12 | tag, as Linux does, so a stale CQE is recognised */
#define NVME_TAG_BITS		12
#define NVME_TAG_MASK		((1u << NVME_TAG_BITS) - 1)
#define NVME_GENCTR_MASK	0xfu

struct nvme_host;
struct request;

struct nvme_queue {
	struct nvme_host *host;
	void *priv;			/* the transport's queue (TCP: struct nvme_tcp_queue) */
	struct blk_mq_hw_ctx *hctx;
	uint16_t qid;
	uint16_t cq_vector;
	uint32_t q_depth;		/* entries of the SQ and the CQ */
	bool polled;			/* CQ created without interrupts */
	/*
	 * Written under sq_lock (stop, reset), read under cq_lock by the
	 * completion path (whether to ring the CQ doorbell): atomic, since the
	 * two locks do not order them.
	 */
	atomic_bool live;
	struct ucmd_nvme_sqe *sq_cmds;
	struct ucmd_nvme_cqe *cqes;
	uint32_t sq_db, cq_db;		/* doorbell register offsets */

	pthread_mutex_t sq_lock;	/* submitters of this hardware queue */
	uint32_t sq_tail, last_sq_tail;

	pthread_mutex_t cq_lock;	/* interrupt handler vs pollers */
	uint32_t cq_head;
	uint8_t cq_phase;
	atomic_int cq_pending;		/* someone asked for a CQ run while it was busy */
	atomic_ulong stale_cqes;	/* CQEs that matched no live request */
	/*
	 * Windowed requests (nvme_request.dma_window) that entered this queue's
	 * SQ, and those whose CQE came back: while the two are equal none is
	 * in the SQ or the controller, and the DMA window question (pci.c) has
	 * its answer without a lookup. Each has one writer (the submitter
	 * under sq_lock, the reaper under cq_lock), so no locked instruction
	 * on the I/O path; a request ended without its CQE leaves them apart,
	 * the safe side.
	 */
	atomic_uint win_sub, win_done;
};

/* Per-request driver data (tag_set.cmd_size), Linux's struct nvme_request + iod. */
enum {
	NVME_REQ_CANCELLED = 1u << 0,
	NVME_REQ_XFER_ERR = 1u << 1,	/* TCP: the user's buffer faulted, or a data digest failed */
	NVME_REQ_TCP_SENT = 1u << 2,	/* TCP: on a connection (sent again after a reconnect) */
	NVME_REQ_TCP_WAITED = 1u << 3,	/* TCP: its ring's waiter reads its queue (tcp_wait_*) */
};
/*
 * A namespace head's block request (Linux's REQ_NVME_MPATH): a path error,
 * its connection lost included, sends it on another path (multipath.c)
 * instead of again on this one.
 */
#define REQ_NVME_MPATH	REQ_DRV
enum { NVME_TO_NONE, NVME_TO_RUNNING, NVME_TO_CQE_SEEN, NVME_TO_ABORT_SENT };

/* bounce.c's record of a bounced request (nvme_request's bounce_slot) */
struct nvme_bounce {
	struct iov_iter user;		/* the user's segments, in their mm */
	void *share;			/* the owner's shared area (share_alloc), or NULL */
	uint64_t shared;		/* segments (bit i: segment i) bounced in it, not yet posted */
	const struct user_mm *charged;	/* len bytes counted against it, or NULL */
	const struct user_mm *meta_mm;	/* the metadata's, NULL: not bounced */
	uint64_t meta_uaddr;
	uint32_t meta_len;
	bool write;
	size_t len;			/* bytes of buf */
	unsigned char *buf;		/* whole pages */
};

struct nvme_request {
	struct ucmd_nvme_sqe cmd;
	struct nvme_queue *nvmeq;
	uint64_t result;
	uint16_t status;		/* NVMe status field (CQE status >> 1) */
	uint8_t genctr;
	/*
	 * NVME_REQ_*, changed by several threads at once (the timeout
	 * handler, the submitter, the receiver): atomic bit operations,
	 * as Linux's set_bit/test_bit, never a plain |=.
	 */
	atomic_uchar flags;
	atomic_int tstate;		/* timeout vs completion handshake */
	void *dma_list;			/* PRP list pages or SGL descriptors */
	uint32_t dma_list_len;		/* its bytes */
	struct iov_iter data;	/* the data's segments (user memory) */
	bool has_data;
	/*
	 * The data is described by SGL descriptors, never PRPs: set for a
	 * command another process wrote (ucmdd's clients, exec's programs).
	 * A PRP entry carries no length, so a controller that reads a longer
	 * transfer from the command's own fields (NLB, NUMD) than the buffer
	 * has takes PRP2 for a list pointer and walks the data pages as PRP
	 * entries: a write to wherever they point, in this process. An SGL
	 * states its length and the controller refuses a mismatch (SGL Data
	 * Block length invalid), as the IOMMU a real device sits behind would
	 * fault it.
	 */
	bool sgl_only;
	/*
	 * The controller may touch only this request's buffers (its data's
	 * segments, its PRP list or SGL, its metadata): the command came from
	 * another process, whose own fields (NLB, NUMD) set the transfer's
	 * length. Admin commands over PCIe are PRPs whatever sgl_only says,
	 * and no PRP states a length: this window is what bounds them
	 * (ctrl_set_dma_window, pci.c).
	 */
	bool dma_window;
	atomic_bool win_counted;	/* in its queue's nr_windowed */
	struct nvme_bounce *bounce;	/* bounce.c: the user's memory is another process's */
	/* where bounce points when set: one per request, not a malloc per I/O */
	struct nvme_bounce bounce_slot;
};

static inline struct nvme_request *nvme_req(struct request *rq)
{
	return blk_mq_rq_to_pdu(rq);
}

/*
 * Release on a set or clear, acquire on a test: a thread that sees a flag
 * also sees what its setter wrote before it (the status of a transfer
 * error, the staged command of a sent one).
 */
static inline void nvme_req_set_flag(struct nvme_request *req, unsigned f)
{
	atomic_fetch_or_explicit(&req->flags, (unsigned char)f, memory_order_release);
}

static inline void nvme_req_clear_flag(struct nvme_request *req, unsigned f)
{
	atomic_fetch_and_explicit(&req->flags, (unsigned char)~f, memory_order_release);
}

static inline bool nvme_req_test_flag(struct nvme_request *req, unsigned f)
{
	return (atomic_load_explicit(&req->flags, memory_order_acquire) & f) != 0;
}

struct nvme_ns {
	struct nvme_host *host;
	uint32_t nsid;
	uint64_t nsze;
	unsigned lba_shift;
	uint16_t ms;			/* metadata bytes per LBA */
	bool ext;			/* extended LBA: metadata inline with data */
	uint8_t pi_type;		/* DPS: NVME_NS_DPS_PI_TYPE1..3, 0 none */
	uint8_t pi_size;		/* the tuple: 8 bytes (16b guard), 16 (64b guard) */
	struct request_queue q;	/* interrupt-driven queues */
	struct request_queue pq;	/* polled queues (if any) */
	struct blk_disk_stats stats;	/* the block device's, both queues' */
	char ng_name[32], blk_name[32];
	bool gone;			/* no longer in the controller's active list: unlinked */
	bool zoned;			/* Zoned Namespace Command Set (CSI 02h) */
	bool no_bdev;			/* no nvmeXnY: Linux would hide the disk (zns.c) */
	uint64_t zone_blocks;		/* zone size in logical blocks, if zoned */
	uint32_t max_open_zones;	/* 0: no limit */
	uint32_t max_active_zones;	/* 0: no limit */
};

/*
 * What differs between transports, Linux's struct nvme_ctrl_ops plus the
 * queue setup its transports do in their own create_ctrl: registers are
 * MMIO on PCI and Property Get/Set commands on fabrics; queues are memory
 * rings created by admin commands on PCI and connections on TCP.
 */
enum { NVME_PATH_LIVE, NVME_PATH_CONNECTING, NVME_PATH_GONE };

struct nvme_ctrl_ops {
	const char *name;
	int  (*reg_read32)(struct nvme_host *h, uint32_t off, uint32_t *val);
	int  (*reg_read64)(struct nvme_host *h, uint32_t off, uint64_t *val);
	int  (*reg_write32)(struct nvme_host *h, uint32_t off, uint32_t val);
	/* Queue 0 ready to carry commands (on a disabled controller). */
	int  (*setup_admin_queue)(struct nvme_host *h);
	/* I/O queue q (qid, q_depth, polled set by the caller) ready and live. */
	int  (*setup_io_queue)(struct nvme_host *h, struct nvme_queue *q);
	/* The controller is disabled or gone: stop every queue (may be NULL). */
	void (*stop_queues)(struct nvme_host *h);
	/* Controller reset, queues brought back (NULL: the transport has none). */
	int  (*reset)(struct nvme_host *h);
	/*
	 * Detach begins: nothing from outside the host calls into it after
	 * this (PCI: the controller's interrupt line). May be NULL.
	 */
	void (*disconnect)(struct nvme_host *h);
	/* Free what the transport holds for queue q. */
	void (*free_queue)(struct nvme_queue *q);
	/* Free the transport's controller, h with it (the last call on h). */
	void (*free_ctrl)(struct nvme_host *h);
	/* Describe the request's data to the controller (DPTR). */
	int  (*map_data)(struct nvme_host *h, struct request *rq);
	/* Reap completions (iopoll); 0 when another thread completes them. */
	int  (*poll)(struct nvme_queue *q);
	/*
	 * A passthrough command goes to q: name q as its ring's wait source
	 * (io_uring_cmd_set_wait_src) when the ring's waiter can read q's
	 * completions itself (rq: the command's request, not yet issued).
	 * May be NULL.
	 */
	void (*wait_src)(struct nvme_queue *q, struct io_uring_cmd *ioucmd, struct request *rq);
	/*
	 * For a multipath head (multipath.c): whether the controller carries
	 * commands now (NVME_PATH_LIVE), is being reconnected (a path that
	 * may come back) or is lost for good. NULL: always live.
	 */
	int  (*path_state)(struct nvme_host *h);
	const struct blk_mq_ops *admin_mq_ops, *mq_ops;
};

/*
 * Linux's struct nvme_ctrl: what the core knows of a controller. Each
 * transport's controller starts with it (struct nvme_pci_dev in pci.c,
 * struct nvme_tcp_ctrl in tcp.h), as Linux's embed theirs.
 */
struct nvme_host {
	struct ucmd_engine *engine;
	const struct nvme_ctrl_ops *ops;
	struct ucmd_nvme_host_opts opts;
	bool regs_ok;			/* register access works (PCI: always; fabrics: admin up) */
	char name[32];			/* nvmeX */
	unsigned dstrd;
	/*
	 * The timeout of a command that names none (the driver's own, and a
	 * user's with timeout_ms 0), admin and I/O, as Linux's admin_timeout
	 * and io_timeout; 0: none (PCI, whose timeouts are the user's only)
	 */
	uint32_t admin_timeout_ms, io_timeout_ms;
	uint32_t max_hw_bytes;		/* MDTS, 0: no limit */
	uint32_t ctrl_config;		/* CC as nvme_enable_ctrl() last wrote it */
	bool sgl_supported;

	struct nvme_queue *queues;	/* [0] admin, then I/O, then polled */
	unsigned nr_queues;
	struct blk_mq_tag_set admin_set, io_set, poll_set;
	struct request_queue admin_q;

	struct nvme_id_ctrl *id;
	struct nvme_cmd_effects_log *effects;
	struct nvme_ns **ns;
	unsigned nr_ns;
	bool devices_added;
	pthread_mutex_t scan_lock;	/* one namespace scan at a time */
	atomic_bool resetting;		/* one reset at a time (Linux: -EBUSY) */
	/*
	 * A path of a multipath subsystem: its namespaces get no devices of
	 * their own (Linux hides the per-path disks), the head's are used.
	 */
	bool ns_hidden;
};

/*
 * The user's data for a passthrough command, checked: a registered buffer,
 * an iovec array (copied) or a flat buffer; MDTS applies. Inline: the
 * uring path is the hot one.
 *
 * Where a bad user address is found: Linux pins the user's pages while it
 * maps them for the device (blk_rq_map_user) and fails with -EFAULT before
 * the command reaches the device. ucmd does the same: after import, every
 * page of the buffer is faulted in through the user memory accessor
 * (fault_in_iov_iter), so a wild or unmapped buffer is -EFAULT in
 * cqe->res or from the ioctl. What pinning also gives, that the pages stay
 * until the command ends, ucmd cannot: the application may unmap them
 * meanwhile. The controller, a separate device, then meets the hole in its
 * DMA; its copies go through the same accessor and it completes the command
 * with Data Transfer Error, as a device whose DMA hit an IOMMU fault would
 * (docs/compat.md).
 */
static inline __attribute__((always_inline)) int
nvme_import_user_data(struct nvme_host *h, const struct nvme_uring_cmd *u, int rw, bool vec,
		      const struct io_uring_cmd *ioucmd, struct iov_iter *it)
{
	int ret;

	if (ioucmd && (ioucmd->flags & IORING_URING_CMD_FIXED)) {
		/* vectored: every segment inside the registered buffer (Linux 6.15) */
		ret = vec ? io_uring_cmd_import_fixed_vec(u->addr, u->data_len, rw, it, ioucmd)
			  : io_uring_cmd_import_fixed(u->addr, u->data_len, rw, it, ioucmd);
	} else {
		/* the addresses are the ring's task's: this process's, or a daemon client's */
		const struct user_mm *mm = ioucmd ? io_uring_cmd_mm(ioucmd) : current_task()->mm;

		ret = vec ? import_iovec_mm(mm, rw, u->addr, u->data_len, it)
			  : import_ubuf_mm(mm, rw, u->addr, u->data_len, it);
		/*
		 * Registered buffers were pinned when they were registered.
		 * Another process's memory is bounced at issue (bounce.c),
		 * which is the check: a write's data is read before the
		 * command runs, a read's written back after it (-EFAULT then).
		 */
		if (!ret && !it->mm && (ret = fault_in_iov_iter(it, rw)))
			iov_iter_release(it);
	}
	if (ret)
		return ret;
	if (h->max_hw_bytes && it->count > h->max_hw_bytes) {
		iov_iter_release(it);
		return -EINVAL;
	}
	return 0;
}

/* ---- rangelist.c ---- */
struct ucmd_desc_range;
/*
 * NVMe Copy's source ranges and Dataset Management's ranges are in the
 * data buffer, not the command. A uring_cmd of either is described and run
 * from one copy of that list in engine memory (io_uring_cmd_snap), made
 * once per request by whichever comes first: describe() for the security
 * hook, or the request builder.
 */
static inline bool nvme_cmd_has_range_list(uint8_t opcode)
{
	return opcode == nvme_cmd_dsm || opcode == nvme_cmd_copy;
}

struct nvme_range_list {
	int err;		/* importing the user's data failed: the command fails with it */
	bool no_data;		/* data_len 0: no list to read (nor for the controller) */
	uint32_t bytes;		/* the list as the controller reads it, zero padded */
	size_t user_count;	/* bytes of the user's data, for the metadata check */
	unsigned nr;		/* entries in the list (NR field) */
	struct ucmd_desc_range *desc;	/* nr entries, for describe() to fill */
	_Alignas(16) unsigned char list[];
};

/* How many bytes of Copy/DSM's data the controller reads as its range list. */
uint32_t nvme_range_list_bytes(uint8_t opcode, uint32_t cdw10, uint32_t cdw12);
/*
 * The request's range list, fetched now if it is not yet: NULL only when
 * out of memory. u is the request's SQE snapshot.
 */
struct nvme_range_list *nvme_range_list_get(struct nvme_host *h,
						  const struct io_uring_cmd *ioucmd,
						  const struct nvme_uring_cmd *u, bool vec);
/*
 * For the request builder: it over the request's copy of the list, and
 * the user's byte count in *user_count; 0 or -errno (the same errno a
 * direct import of the user's data gives).
 */
int nvme_range_list_import(struct nvme_host *h, const struct io_uring_cmd *ioucmd,
			   const struct nvme_uring_cmd *u, bool vec, struct iov_iter *it,
			   size_t *user_count);

/* ---- queue.c ---- */
void nvme_queue_init_common(struct nvme_host *h, struct nvme_queue *q, uint16_t qid,
			    uint32_t depth, bool polled);
/* The request command id cid names on q, or NULL (unknown tag, stale generation). */
struct request *nvme_find_rq(struct nvme_queue *q, uint16_t cid);
/* A completion: the request it names ends with its status and result. */
void nvme_handle_cqe(struct nvme_queue *q, const struct ucmd_nvme_cqe *cqe);
/*
 * A transport's timeout handler: nvme_timeout_begin() marks rq cancelled
 * (it will end with -EINTR) and takes it from the completion path; false
 * when its completion came first (rq ended). The transport then acts (an
 * Abort, a closed connection) and hands rq back with
 * nvme_timeout_hand_off(): from then the completion, or whoever finds it
 * abandoned (nvme_end_abandoned), ends it; false when its completion came
 * meanwhile (rq ended).
 */
bool nvme_timeout_begin(struct request *rq);
bool nvme_timeout_hand_off(struct request *rq);
/* End rq with err if a timeout handler handed it off; true if it did. */
bool nvme_end_abandoned(struct request *rq, int err);
/* End every request in flight: the controller is disabled. */
void nvme_cancel_inflight(struct nvme_host *h);
int  nvme_init_hctx(struct blk_mq_hw_ctx *hctx, void *driver_data, unsigned idx);
/* Set Features, Number of Queues: *count asked, *count granted (maybe fewer). */
int  nvme_set_queue_count(struct nvme_host *h, unsigned *count);
/* The I/O queues through the transport's setup_io_queue, and their tag sets. */
int  nvme_create_io_queues(struct nvme_host *h);

static inline int nvme_poll_queue(struct nvme_queue *q)
{
	return q->host->ops->poll(q);
}

/* ---- core.c ---- */
/* Linux's nvme_init_ctrl: h is a transport's, driven through ops from now on. */
void nvme_init_ctrl(struct nvme_host *h, struct ucmd_engine *e,
		    const struct nvme_ctrl_ops *ops, const struct ucmd_nvme_host_opts *opts);
/* registers through the transport */
int nvme_reg_read32(struct nvme_host *h, uint32_t off, uint32_t *val);
int nvme_reg_read64(struct nvme_host *h, uint32_t off, uint64_t *val);
int nvme_reg_write32(struct nvme_host *h, uint32_t off, uint32_t val);
/* CSTS.RDY == enabled within CAP.TO. */
int nvme_wait_ready(struct nvme_host *h, bool enabled);
/*
 * The common bring-up and teardown of a host whose ops and transport are
 * set: admin queue, CC.EN, Identify, effects, I/O queues, namespaces,
 * devices; detach undoes any prefix of it.
 */
int  nvme_host_start(struct nvme_host *h);
void nvme_host_free(struct nvme_host *h);

/* ---- dma.c ---- */
/* Fill cmd's DPTR (and MPTR) from the request's segments; may allocate a list. */
int  nvme_pci_map_data(struct nvme_host *h, struct request *rq);
static inline int nvme_map_data(struct nvme_host *h, struct request *rq)
{
	return h->ops->map_data(h, rq);
}
void nvme_unmap_data(struct request *rq);

/* ---- submit.c ---- */
struct request *nvme_alloc_request(struct request_queue *q,
				   const struct ucmd_nvme_sqe *cmd, unsigned rq_flags,
				   unsigned blk_flags, int *err);
/*
 * The same without a command: only req->cmd.cid is set, and the caller
 * writes every other field of req->cmd before the request is issued.
 */
struct request *nvme_alloc_request_nocmd(struct request_queue *q, unsigned rq_flags,
					 unsigned blk_flags, int *err);
/*
 * Attach already-checked data (it) to rq; it is moved into the request
 * (it->alloc is cleared: the request owns any heap copy). Inline: on
 * both hot paths the caller's iterator then mostly never exists.
 */
static inline void nvme_rq_set_data(struct request *rq, struct iov_iter *it)
{
	struct nvme_request *req = nvme_req(rq);

	/*
	 * Only what the iterator uses (the whole struct is 160 bytes, a flat
	 * buffer uses 48 of them). A small iterator points into itself: its
	 * segments move along and the copy points at its own.
	 */
	req->data.mm = it->mm;
	req->data.nr_segs = it->nr_segs;
	req->data.count = it->count;
	req->data.alloc = it->alloc;
	if (it->iov == it->fast) {
		/* One segment (a flat buffer) without a call to memcpy. */
		if (it->nr_segs == 1)
			req->data.fast[0] = it->fast[0];
		else if (it->nr_segs)
			memcpy(req->data.fast, it->fast, it->nr_segs * sizeof(it->fast[0]));
		req->data.iov = req->data.fast;
	} else {
		req->data.iov = it->iov;
	}
	/* The request owns any heap copy now. */
	it->alloc = NULL;
	req->has_data = true;
	rq->segs = req->data.iov;
	rq->nr_segs = req->data.nr_segs;
	rq->data_len = (uint32_t)req->data.count;
}
void nvme_rq_release(struct request *rq);

/* ---- bounce.c ---- */
struct nvme_bounce;
/*
 * After the data (and rq->meta, in meta_mm) are set, before nvme_map_data:
 * what lies in another process's memory is moved into a buffer of ours,
 * filled now for a write. 0, -ENOMEM or -EFAULT (the data could not be read).
 */
int nvme_rq_bounce(struct request *rq, const struct user_mm *meta_mm, bool write);
static inline bool nvme_rq_needs_bounce(struct request *rq, const struct user_mm *meta_mm)
{
	return (nvme_req(rq)->has_data && nvme_req(rq)->data.mm) ||
	       (rq->meta_len && !user_mm_is_self(meta_mm));
}
/*
 * At completion, before the request's CQE: a read's data copied back to
 * the user. Returns status, or -EFAULT when the copy back failed.
 */
int nvme_rq_bounce_out(struct request *rq, int status);
/* Free the bounce (nvme_rq_release does). */
void nvme_rq_bounce_free(struct request *rq);
/* Run rq and wait; returns NVMe status (>0), 0, or -errno (-EINTR: cancelled). */
int  nvme_execute_rq(struct request *rq, uint64_t *result);
/* Internal admin command with a driver buffer of whole pages (else -EINVAL). */
int  nvme_submit_sync_cmd(struct nvme_host *h, struct ucmd_nvme_sqe *cmd, void *buf,
			  uint32_t len, uint64_t *result);
int  nvme_end_status(struct request *rq, blk_status_t err);

/* ---- zns.c ---- */
/* Zone geometry from the ZNS Identify Namespace; -ENODEV where Linux makes no block device. */
int nvme_zns_ns_info(struct nvme_ns *ns, const struct nvme_zns_id_ns *z, unsigned lbaf);
/*
 * The namespace's protection (ns->pi_type, ns->pi_size) from Identify
 * Namespace id and, for the guard's size, the NVM command set's ELBAF.
 */
void nvme_ns_pi(struct nvme_host *h, struct nvme_ns *ns, const struct nvme_id_ns *id, unsigned lbaf);
/* The namespace's command set and, if zoned, its zones (ns->zoned, ns->no_bdev). */
int nvme_ns_query_csi(struct nvme_host *h, struct nvme_ns *ns, unsigned lbaf);

/* ---- core.c ---- */
uint32_t nvme_command_effects(struct nvme_host *h, bool admin, uint8_t opcode);
/* CC with the host's queue entry sizes and EN, then CSTS.RDY (the admin queue goes live) */
int nvme_enable_ctrl(struct nvme_host *h);
/* Set Features, Asynchronous Event Configuration: the notices the host handles */
int nvme_enable_aen(struct nvme_host *h);
/* NVME_IOCTL_RESET: -EBUSY while another runs, -ENOTTY without transport support */
int nvme_reset_ctrl(struct nvme_host *h);
/*
 * nvme_passthru_end: after a user's admin command whose effects change the
 * namespace inventory or capabilities (NIC, NCC: namespace management,
 * attachment, format), the namespaces are scanned again (nvme_rescan).
 */
void nvme_passthru_end(struct nvme_host *h, uint8_t opcode);
/*
 * Linux's nvme_scan_work: new active namespaces get their devices, gone
 * ones are unlinked (open files keep them), the others' geometry is read
 * again. 0 or -errno.
 */
int nvme_rescan(struct nvme_host *h);

/* ---- ioctl.c ---- */
extern const struct ucmd_file_ops nvme_ns_chr_fops, nvme_dev_fops;
/* A uring_cmd on namespace ns (its generic char device's, or a head's path). */
int  nvme_ns_uring_cmd(struct nvme_ns *ns, struct io_uring_cmd *ioucmd, unsigned issue_flags);
int  nvme_ns_uring_cmd_iopoll(struct io_uring_cmd *ioucmd);
long nvme_ns_ioctl_ns(struct nvme_ns *ns, unsigned long cmd, void *arg, const void *karg);

/* ---- block.c ---- */
extern const struct ucmd_file_ops nvme_bdev_fops;
/* What the block device keeps in a kiocb's pdu (the head's extends it). */
struct nvme_bdev_pdu {
	struct nvme_queue *nvmeq;	/* for iopoll, valid after issue */
	size_t count;
};
/*
 * A read or write of kiocb on namespace ns; end_io NULL: the block
 * device's own completion. -EIOCBQUEUED once issued, else -errno.
 */
long nvme_bdev_rw_ns(struct nvme_ns *ns, struct ucmd_kiocb_rw *kiocb, unsigned issue_flags,
		     bool write, rq_end_io_fn *end_io);
int  nvme_bdev_iopoll(struct ucmd_kiocb_rw *kiocb);
/* An NVMe Flush of ns, waited for: 0 or -errno (device errors -EIO). */
int  nvme_bdev_flush_ns(struct nvme_ns *ns, int datasync);
/* A namespace's ioctls, on its generic char device and on its block device alike (Linux's nvme_ioctl). */
long nvme_ns_ioctl(struct ucmd_file *f, unsigned long cmd, void *arg, const void *karg);

/* ---- describe.c ---- */
struct ucmd_cmd_desc;
void nvme_describe_cmd(struct nvme_host *h, const char *device, uint32_t cmd_op, bool admin,
		       const struct ucmd_nvme_sqe *c, struct nvme_ns *ns, struct ucmd_cmd_desc *d);
int nvme_ns_describe(const struct io_uring_cmd *cmd, struct ucmd_cmd_desc *d);
int nvme_dev_describe(const struct io_uring_cmd *cmd, struct ucmd_cmd_desc *d);
/* The NVME_IOCTL_*64_CMD twins: the same description from the ioctl's copy. */
int nvme_ns_describe_ioctl(const struct ucmd_file *f, unsigned long cmd, const void *karg,
			   struct ucmd_cmd_desc *d);
/* The namespace NVME_IOCTL_IO_CMD on the controller's device runs on (ioctl.c). */
int nvme_dev_user_ns(struct nvme_host *h, struct nvme_ns **nsp);
int nvme_dev_describe_ioctl(const struct ucmd_file *f, unsigned long cmd, const void *karg,
			    struct ucmd_cmd_desc *d);
int nvme_bdev_describe_rw(const struct ucmd_kiocb_rw *kiocb, struct ucmd_cmd_desc *d);

/* ucmd_nvme_attach(); ns_hidden: a multipath path, its namespaces without devices. */
int  nvme_pci_attach(struct ucmd_engine *e, struct ucmd_ctrl *ctrl,
		     const struct ucmd_nvme_host_opts *opts, bool ns_hidden,
		     struct ucmd_nvme_host **out);

#endif
