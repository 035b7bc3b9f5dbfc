/* SPDX-License-Identifier: MIT */
/*
 * Controller internals shared by the files of src/nvme/ctrl/. Everything
 * here is protected by ctrl->lock unless a comment says otherwise: the
 * controller executes one command at a time, which keeps every command
 * handler free of its own locking.
 */
#ifndef UCMD_NVME_CTRL_INT_H
#define UCMD_NVME_CTRL_INT_H

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <nvme/types.h>

#include "lib/clock.h"
#include "lib/crc32c.h"	/* the state file's and journal records' checksum */
#include "nvme/ctrl/ctrl.h"
#include "store/store.h"

#define UCMD_PAGE_SHIFT		12
#define UCMD_PAGE_SIZE		(1u << UCMD_PAGE_SHIFT)
#define UCMD_MAX_NS		64	/* Identify Controller NN */
#define UCMD_ERRLOG_ENTRIES	64	/* ELPE + 1 */
#define UCMD_AERL		3	/* 0's based: 4 outstanding AERs */
#define UCMD_AEQ_MAX		16	/* queued, not yet reported events */
#define UCMD_COPY_MSRC		127	/* 0's based source ranges per Copy */
#define UCMD_COPY_MSSRL		0xffff	/* blocks per source range */
#define UCMD_COPY_MCL		(128u * 0x10000u)
#define UCMD_TEMP_KELVIN	313	/* composite temperature we report */
#define UCMD_WCTEMP		343
#define UCMD_CCTEMP		353
#define UCMD_CNTLID_DEFAULT	1
#define UCMD_IOV_CHUNK		512	/* iovecs per store call (below IOV_MAX) */
/*
 * Write-uncorrectable ranges per namespace. A real device keeps the mark in
 * its per-block mapping; ours is a table that must stay small enough to load
 * and save quickly (docs/store.md). When it is full, the command fails with
 * Capacity Exceeded (below).
 */
#define UCMD_MAX_UNCOR_RANGES	4096

/* Status as the CQE status field carries it, shifted right by one */
#define UCMD_SC(sct, sc)	((uint16_t)(((sct) << NVME_SCT_SHIFT) | (sc)))
#define UCMD_GEN(sc)		UCMD_SC(NVME_SCT_GENERIC, sc)
#define UCMD_CMD(sc)		UCMD_SC(NVME_SCT_CMD_SPECIFIC, sc)
#define UCMD_MEDIA(sc)		UCMD_SC(NVME_SCT_MEDIA, sc)
#define UCMD_DNR		((uint16_t)NVME_SC_DNR)
/*
 * The range table of a namespace is full: NVMe's Capacity Exceeded, which
 * Linux turns into BLK_STS_NOSPC (-ENOSPC), what a host should see for a
 * resource it ran out of. DNR: a retry cannot succeed until ranges are
 * cleared (written, zeroed, deallocated, formatted).
 */
#define UCMD_ST_RANGES_FULL	(UCMD_GEN(NVME_SC_CAP_EXCEEDED) | UCMD_DNR)
/* A handler that keeps the command (AER, deferred) returns this. */
#define UCMD_DEFERRED		0xffffu

/* Growable iovec list describing host memory for one transfer */
struct ctrl_iovs {
	struct iovec *iov;
	int cnt, cap;
	uint64_t len;
};

/* Sorted, non-overlapping LBA ranges (write-uncorrectable state), at most
 * UCMD_MAX_UNCOR_RANGES of them */
struct ctrl_range {
	uint64_t slba, nlb;
};
struct ctrl_ranges {
	struct ctrl_range *r;
	size_t n, cap;
};

struct ctrl_zoned;
struct fdp_media;
struct ctrl_fdp;
struct ctrl_ns {
	uint32_t nsid;
	uint64_t nsze;		/* logical blocks */
	uint8_t lbaf;		/* set with ctrl_ns_set_lbaf(), which derives the two below */
	uint8_t lba_shift;	/* log2 of the LBA data size (Linux's ns->head->lba_shift) */
	uint16_t ms;		/* metadata bytes per LBA */
	bool extended;
	uint8_t dps;		/* protection: NVME_NS_DPS_PI_* type, PI_FIRST (pi_io.c) */
	uint64_t lbstm;		/* Logical Block Storage Tag Mask, set when created (pi.h) */
	bool pi_plain;		/* tuples stored as they read: a version 3 directory, read-only */
	bool pi_rec;		/* nsN.pimig to remove once ctrl.json is saved (pi_migrate.c) */
	uint8_t attached;	/* the controllers it is attached to: bit idx (ctrl_bit) */
	enum ucmd_ns_store kind;
	char *path;		/* device path (DEVICE kind) */
	uint8_t uuid[16];	/* NGUID and EUI64 derive from it */
	struct store *st;
	struct ctrl_ranges uncor;
	struct ctrl_zoned *zoned;	/* a zoned namespace's zones (zns.h), or NULL */
	struct fdp_media *fdpm;		/* FDP's media model (fdp.h), or NULL */
	struct ucmd_ctrl *fdp_ctrl;	/* whose events the model reports */
	/* the placement handle list: handle i is RUH phndl[i]; none: every RUH */
	uint16_t nphndl;
	uint16_t phndl[128];	/* UCMD_FDP_MAX_RUH */
};

struct ctrl_req {
	struct ucmd_nvme_sqe cmd;	/* first: ctrl_req_get zeroes what follows it */
	uint16_t sqid;
	uint32_t dw0, dw1;
	uint64_t err_lba;	/* the error log entry's LBA when the command fails */
	uint64_t deadline_ns;	/* delayed (fault injection) commands */
	struct ctrl_req *next;
	/*
	 * The host's DMA window for this command (ctrl_set_dma_window), asked
	 * once: data and metadata mapping share the answer. win_state is the
	 * last member ctrl_req_get zeroes; win is valid only once it is set.
	 */
	uint8_t win_state;	/* CTRL_WIN_* */
	struct ucmd_dma_window win;
};
enum { CTRL_WIN_UNASKED, CTRL_WIN_NONE, CTRL_WIN_ON };

/* A completion waiting for room in its CQ */
struct ctrl_pending_cqe {
	struct ucmd_nvme_cqe cqe;
	struct ctrl_pending_cqe *next;
};

/*
 * The controller's side of an NVMe completion queue (QEMU's NvmeCQueue,
 * the kernel target's ctrl_cq): where in host memory, its head, tail and
 * phase. Not the engine's io_uring CQ (struct ucmd_cq in ucmd/ucmd.h).
 */
struct ctrl_cq {
	bool valid;
	bool ien;
	uint16_t qid, vector;
	uint32_t size, head, tail;
	uint8_t phase;
	uint64_t base;
	struct ucmd_nvme_cqe *mem;
	unsigned nr_sqs;	/* SQs bound to this CQ */
	bool irq_pending;	/* posted since the last interrupt */
	struct ctrl_pending_cqe *backlog, **backlog_tail;
	unsigned nr_backlog;
};

/* The controller's side of an NVMe submission queue (QEMU's NvmeSQueue). */
struct ctrl_sq {
	bool valid;
	uint16_t qid, cqid;
	uint32_t size, head, tail;
	uint64_t base;
	struct ucmd_nvme_sqe *mem;
};

struct ctrl_smart {
	uint64_t units_read_512;	/* in 512-byte units */
	uint64_t units_written_512;
	uint64_t host_reads, host_writes;
	uint64_t power_cycles, unsafe_shutdowns;
	uint64_t power_on_seconds;	/* persisted part */
	uint64_t media_errors;
	uint64_t busy_ns;
};

struct ctrl_feat_vals {
	uint32_t arbitration, power_mgmt, err_recovery, vwc, irq_coalesce,
		 write_atomic, async_event;
	uint16_t tmpth_over, tmpth_under;
};

struct ctrl_aer_event {
	uint8_t type, info, lid;
};

/* Sanitize (sanitize.c): the Sanitize Status log and the operation under way */
/* bytes written per controller pass (deallocated: 64 times that); a test knob lowers it */
#define UCMD_SANITIZE_CHUNK	(64u << 20)
struct ctrl_sanitize {
	uint16_t sstat;		/* the log's SSTAT: status, passes, GDE */
	uint32_t scdw10;	/* CDW10 of the command that started the last one */
	uint32_t ovrpat;	/* its CDW11 (overwrite pattern) */
	bool ause_fail;		/* failed with AUSE set: Exit Failure Mode allowed */
	bool exited;		/* ...and the host left the failure mode */
	/* progress of the running operation (not persisted: it restarts) */
	uint32_t ns_idx, pass;
	uint64_t done, total, off;
	uint64_t start_rt_ms;	/* wall clock at the start: progress owed by then (sanitize.c) */
	uint64_t plan_ms;	/* test knob: its duration, instead of the log's estimate */
	bool fail_next;		/* test knob: the next operation fails */
	uint32_t chunk;		/* bytes written per pass (UCMD_SANITIZE_CHUNK) */
};

/* Device Self-test (selftest.c) */
#define UCMD_DST_RESULTS	20
#define UCMD_DST_SHORT_MS	2000
#define UCMD_DST_EXT_MS		60000
struct ctrl_dst_result {
	uint8_t status;		/* code (bits 7:4) and result (bits 3:0) */
	uint8_t segment, valid;
	uint64_t poh;
	uint32_t nsid;
};
struct ctrl_selftest {
	uint8_t op;		/* 0: none, 1: short, 2: extended */
	uint32_t nsid;
	uint64_t start_ns, dur_ns;
	uint64_t start_rt_ms;		/* wall clock at the start: the test runs on
					 * between two users of a powered device */
	uint64_t short_ms, ext_ms;	/* how long each kind runs */
	struct ctrl_dst_result res[UCMD_DST_RESULTS];	/* [0] newest */
	unsigned nres;
};

/* Firmware slots (firmware.c): slot 1 holds the factory image, read-only */
#define UCMD_FW_SLOTS		3
#define UCMD_FW_MAX_IMAGE	(1u << 20)
#define UCMD_FW_HDR_LEN		20	/* magic, revision, flags */
#define UCMD_FW_MAGIC		"UCMDFW01"
#define UCMD_FW_NEEDS_CONV	(1u << 0)	/* image flag: conventional reset only */
struct ctrl_firmware {
	char rev[UCMD_FW_SLOTS + 1][9];	/* [slot], "" when empty */
	uint32_t flags[UCMD_FW_SLOTS + 1];
	uint8_t active, next;		/* next: 0 when nothing is pending */
	bool next_conv;			/* next waits for a conventional reset */
	uint8_t *img;			/* the image being downloaded */
	uint32_t img_len;		/* bytes from 0 received contiguously */
	uint8_t *mem[UCMD_FW_SLOTS + 1];	/* images of a controller without dir */
	uint32_t mem_len[UCMD_FW_SLOTS + 1];
};

/*
 * Logs with a snapshot the host reads in pieces (log_telemetry.c, log_pel.c):
 * what one capture or reporting context holds until the next one.
 */
struct ctrl_log_snap {
	uint8_t *buf;
	size_t len;
};

struct ucmd_ctrl {
	struct ucmd_ctrl_params p;	/* strings below are owned copies */
	char *dir, *serial, *model, *firmware;
	const struct ucmd_dma *dma;
	/*
	 * The interrupt target (ctrl_set_irq): raised under a read lock, so
	 * that a writer replacing it knows no call of the old one is in
	 * flight. Readers may nest: an inline controller raises interrupts
	 * from within a doorbell written by an interrupt handler.
	 */
	pthread_rwlock_t irq_lock;
	void (*irq)(void *arg, uint16_t vector);
	void *irq_arg;
	uint16_t qmax;			/* highest I/O qid the controller has */

	pthread_mutex_t lock;
	/* the host's per-command DMA window (ctrl_set_dma_window), under lock */
	ctrl_dma_window_fn dma_window;
	void *dma_window_arg;

	/* Registers */
	uint64_t cap;
	uint32_t cc, csts, aqa, intms;
	uint64_t asq, acq;

	/* Queues, index = qid, 0 is admin */
	struct ctrl_sq *sq;
	struct ctrl_cq *cq;
	uint16_t nsqa, ncqa;		/* granted by Number of Queues (0's based) */
	bool queues_created;

	/*
	 * Doorbell staging, protected by db_lock only: a host thread writes
	 * a doorbell without waiting for a batch in progress; the controller
	 * applies them under ctrl->lock.
	 */
	pthread_mutex_t db_lock;
	pthread_cond_t db_cond;
	uint32_t *db_val;		/* [2 * (qmax + 1)] */
	uint8_t *db_dirty;
	/*
	 * CQs the controller waits on for room (THREAD mode): only a head
	 * doorbell for one of these needs to wake the thread; other head
	 * updates are picked up at the next wake-up for free.
	 */
	uint8_t *cq_waiting;		/* [qmax + 1] */
	uint8_t *iv_cd;			/* [qmax + 1]: Interrupt Vector Configuration's CD */
	bool db_any, stop;
	unsigned db_bad_reg;		/* writes past the last doorbell */
	uint64_t timer_deadline_ns;	/* earliest delayed command, 0: none */
	uint64_t wakeups, poll_hits, doorbells;
	pthread_t thread;
	bool thread_started;

	/* Namespaces, index = nsid */
	struct ctrl_ns *ns[UCMD_MAX_NS + 1];
	uint32_t changed_ns[UCMD_MAX_NS];
	unsigned nr_changed_ns;
	bool changed_ns_overflow;

	/* Features */
	struct ctrl_feat_vals cur, saved;
	uint64_t ts_host_ms, ts_set_at_ns;
	bool ts_set;

	/* Logs and events */
	struct ctrl_sanitize san;
	struct ctrl_selftest dst;
	struct ctrl_firmware fw;
	struct ctrl_fdp *fdp;		/* endurance group 1 with FDP (fdp.h), or NULL */
	struct ctrl_log_snap tel_host;	/* Telemetry Host-Initiated data, last capture */
	uint8_t tel_host_gen;		/* its generation number */
	struct ctrl_log_snap pel;	/* Persistent Event log reporting context */
	bool pel_ctx;			/* ...exists */
	uint16_t pel_gen;		/* contexts established (the log's generation) */
	char *subnqn;			/* per directory (ctrl.json) */
	char boot_id[40];		/* the host boot the state was last saved in */
	char cur_boot_id[40];		/* this one */
	bool last_clean;		/* the loaded state was shut down cleanly */
	bool cur_valid;			/* current_features were loaded */
	/* the current values when the host last shut the controller down (SHN) */
	struct ctrl_feat_vals shn_cur;
	bool shn_valid;
	bool power_cycled;		/* this create was a cold start */
	bool fresh;			/* this create made a new state */
	struct nvme_error_log_page errlog[UCMD_ERRLOG_ENTRIES];
	uint64_t error_count;
	struct ctrl_smart smart;
	uint64_t created_ns;		/* monotonic time of power on */
	struct ctrl_req *aer_reqs;	/* outstanding AER commands */
	unsigned nr_aer_reqs;
	struct ctrl_aer_event aeq[UCMD_AEQ_MAX];
	unsigned nr_aeq;
	uint8_t aer_masked;		/* bit per event type, until log read */

	/* Fault injection and commands held by it */
	unsigned delay_ms[2][256];	/* [admin][opcode] */
	struct ctrl_req *delayed;
	/*
	 * One request and one iovec array kept back from the last command
	 * (under lock): the next command reuses them instead of a calloc and a
	 * realloc/free pair per command on the I/O path.
	 */
	struct ctrl_req *req_spare;
	struct iovec *iov_spare;
	int iov_spare_cap;

	uint64_t commands, irqs;
	/*
	 * A save or journal append failed while running: nothing is saved
	 * after it (what is on disk stays consistent: the last ctrl.json and
	 * the journal), and persist_err, the first error, is what destroy
	 * returns.
	 */
	bool persist_failed;
	int persist_err;

	/*
	 * The controller directory (dir.c), opened once: every file in it is
	 * reached relative to dirfd, which also holds the flock (exclusive for
	 * a writer, shared for a read-only controller). -1 without a dir.
	 */
	int dirfd;
	uid_t dir_uid;			/* the directory's owner: euid or root */
	bool wrote_pid;			/* ctrl.pid is ours to remove */
	bool up;			/* created: destroy may save the state */

	/*
	 * Write-uncorrectable changes since ctrl.json was last written
	 * (persist_journal.c): journal_gen is the generation of ctrl.json on
	 * disk, records carry it, journal_off is where the next one goes.
	 */
	int journal_fd;
	uint64_t journal_gen, journal_off;
	/*
	 * The NVM subsystem (subsys.c): controller 1 (primary NULL) owns the
	 * directory, the namespaces and the state; controllers 2..nr_ctrls
	 * (sib[], primary set) have their own registers, queues, features,
	 * error log and events, and reach the namespaces of controller 1
	 * under its lock. nr_ctrls is controller 1's; the others keep 0.
	 */
	struct ucmd_ctrl *primary;
	struct ucmd_ctrl *sib[UCMD_CTRL_MAX_CONTROLLERS - 1];
	unsigned nr_ctrls;
	uint8_t idx;			/* this controller's index: cntlid - controller 1's */
	/*
	 * Controller 1's, for the subsystem, under its lock: each
	 * controller's ANA state of the group (a controller is a port of its
	 * own), the ANA log's change count, the saved features of
	 * controllers 2..N (they outlive the controllers: the final save
	 * comes after them), and the controllers a pass must visit for what
	 * another controller did (ctrl_subsys_kick).
	 */
	uint8_t ana_state[UCMD_CTRL_MAX_CONTROLLERS];
	uint64_t ana_chgcnt;
	struct ctrl_feat_vals sib_saved[UCMD_CTRL_MAX_CONTROLLERS - 1];
	/*
	 * Controllers 2..N's SMART counters as loaded, and as they left
	 * when they were destroyed (ctrl_subsys_free): the final save comes
	 * after them. While they exist their own smart is the current one.
	 */
	struct ctrl_smart sib_smart[UCMD_CTRL_MAX_CONTROLLERS - 1];
	/* Controllers 2..N's error logs and error counts, kept as sib_smart is */
	struct ctrl_errlog {
		struct nvme_error_log_page e[UCMD_ERRLOG_ENTRIES];
		uint64_t count;
	} sib_err[UCMD_CTRL_MAX_CONTROLLERS - 1];
	uint8_t kick;
	/*
	 * This controller's, under controller 1's lock: an ANA change its
	 * host was not told of yet, namespaces another controller changed
	 * for it (ctrl_subsys_notices delivers them in its next pass).
	 */
	bool ana_notice, ns_notice;
};

/* ctrl.c */
char *ctrl_subnqn_legacy(const char *serial);
/* Controller cntlid of primary's subsystem, sharing its namespaces. */
int  ctrl_sibling_create(struct ucmd_ctrl *primary, uint16_t cntlid, struct ucmd_ctrl **out);
/* subsys.c */
#define UCMD_ANAGRPID		1	/* the one ANA group: every namespace */
#define UCMD_ANATT		10	/* seconds (nvmet's) */
/* Controller 1 of c's subsystem: the one that owns the namespaces and the state. */
static inline struct ucmd_ctrl *ctrl_primary(struct ucmd_ctrl *c)
{
	return c->primary ? c->primary : c;
}
/* Several controllers: CMIC, NMIC, ANA and the controller lists say so. */
static inline bool ctrl_multi(struct ucmd_ctrl *c)
{
	return ctrl_primary(c)->nr_ctrls > 1;
}
/* Controllers 2..n made for a state of n: 0 or -errno (why said). */
int  ctrl_subsys_populate(struct ucmd_ctrl *c, unsigned n);
void ctrl_subsys_free(struct ucmd_ctrl *c);
/*
 * Taken by another controller around what touches the namespaces (a
 * processing pass, a register write): controller 1's lock, and its
 * namespace table copied in. Called with c->lock held.
 */
/*
 * What the subsystem's endurance group counts: every controller's SMART
 * counters summed (*errors their error counts), the same through any
 * controller. Under controller 1's lock, as in any controller's pass.
 */
void ctrl_subsys_smart(struct ucmd_ctrl *c, struct ctrl_smart *sum, uint64_t *errors);
void ctrl_subsys_enter(struct ucmd_ctrl *c);
void ctrl_subsys_leave(struct ucmd_ctrl *c);
/* Firmware and device self-test, controller 1's only: false for them on another. */
bool ctrl_subsys_cmd_allowed(struct ucmd_ctrl *c, const struct ctrl_req *req);
void ctrl_subsys_id_ctrl(struct ucmd_ctrl *c, struct nvme_id_ctrl *id);
void ctrl_subsys_id_ns(struct ucmd_ctrl *c, struct nvme_id_ns *id);
/* Identify controller lists (CNS 12h, 13h) from cntlid on: the controllers in mask. */
void ctrl_subsys_ctrl_list(struct ucmd_ctrl *c, uint16_t from, uint8_t mask,
			   struct nvme_ctrl_list *l);
/* The ANA log page (0Ch): its size, false when the controller has none. */
bool ctrl_subsys_ana_log_size(struct ucmd_ctrl *c, size_t *size);
void ctrl_subsys_ana_log(struct ucmd_ctrl *c, uint32_t cdw10, uint8_t *buf, size_t size);
/* An I/O command through c to a namespace its ANA state makes unreachable: the path status */
uint16_t ctrl_subsys_ana_io(struct ucmd_ctrl *c, const struct ctrl_req *req);
/* The async event notices another controller or the owner left for c (in c's pass) */
void ctrl_subsys_notices(struct ucmd_ctrl *c);
/* Namespace nsid changed for controller x, c running the command (under controller 1's lock) */
void ctrl_subsys_ns_changed(struct ucmd_ctrl *c, struct ucmd_ctrl *x, uint32_t nsid);
/* ...for every controller it is attached to (attached: the mask before the change) */
void ctrl_subsys_ns_changed_all(struct ucmd_ctrl *c, uint8_t attached, uint32_t nsid);
/* The controllers left to visit (cleared), and their visit after every lock is released */
uint8_t ctrl_subsys_kick_take(struct ucmd_ctrl *c);
void ctrl_subsys_kick(struct ucmd_ctrl *c, uint8_t mask);
/* Bit of controller c in a namespace's attachment mask; every controller's */
static inline uint8_t ctrl_bit(const struct ucmd_ctrl *c)
{
	return (uint8_t)(1u << c->idx);
}
static inline uint8_t ctrl_all_bits(const struct ucmd_ctrl *c)
{
	unsigned n = (c->primary ? c->primary : c)->nr_ctrls;

	return (uint8_t)((1u << (n ? n : 1)) - 1);
}
_Static_assert(UCMD_CTRL_MAX_CONTROLLERS <= 8, "a namespace's attachment mask is 8 bits");

/* sanitize.c */
uint16_t ctrl_admin_sanitize(struct ucmd_ctrl *c, struct ctrl_req *req);
/* Status when req may not run now (sanitize in progress/failed), else 0 */
uint16_t ctrl_sanitize_check(struct ucmd_ctrl *c, const struct ctrl_req *req);
bool ctrl_sanitize_busy(const struct ucmd_ctrl *c);
bool ctrl_sanitize_step(struct ucmd_ctrl *c);
void ctrl_log_sanitize(struct ucmd_ctrl *c, struct nvme_sanitize_log_page *l);
/* A user data write happened: the Global Data Erased bit goes */
static inline void ctrl_sanitize_written(struct ucmd_ctrl *c)
{
	c->san.sstat &= (uint16_t)~NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED;
}

/* selftest.c */
uint16_t ctrl_admin_selftest(struct ucmd_ctrl *c, struct ctrl_req *req);
bool ctrl_selftest_step(struct ucmd_ctrl *c);
void ctrl_selftest_abort(struct ucmd_ctrl *c, uint8_t result);
void ctrl_log_selftest(struct ucmd_ctrl *c, uint32_t nsid, struct nvme_self_test_log *l);
void ctrl_selftest_resume(struct ucmd_ctrl *c, uint8_t op, uint32_t nsid, uint64_t start_rt_ms,
			   uint64_t dur_ms);
uint64_t realtime_ms(void);
uint64_t ctrl_power_on_hours(struct ucmd_ctrl *c);

/* firmware.c */
uint16_t ctrl_admin_fw_download(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_fw_commit(struct ucmd_ctrl *c, struct ctrl_req *req);
void ctrl_log_fw(struct ucmd_ctrl *c, struct nvme_firmware_slot *f);
/* Activate the pending slot: conventional is true at a cold start */
void ctrl_fw_reset(struct ucmd_ctrl *c, bool conventional);
void ctrl_fw_free(struct ucmd_ctrl *c);
void ctrl_fw_discard(struct ucmd_ctrl *c);
/* The pieces an earlier user of the powered device downloaded */
int  ctrl_fw_load_download(struct ucmd_ctrl *c);
/* Write a whole file of the directory atomically (persist.c) */
int  ctrl_write_atomic(struct ucmd_ctrl *c, const char *name, const void *buf, size_t len);

/* regs.c */
void ctrl_ctrl_reset_locked(struct ucmd_ctrl *c);
void ctrl_ctrl_fatal(struct ucmd_ctrl *c);
/* A save the host relied on failed with err: no more saves, the controller is fatal. */
void ctrl_persist_failed(struct ucmd_ctrl *c, int err);

/* queue.c */
void ctrl_db_write(struct ucmd_ctrl *c, uint32_t off, uint32_t val);
void ctrl_ctrl_run(struct ucmd_ctrl *c);
void ctrl_post_req(struct ucmd_ctrl *c, struct ctrl_req *req, uint16_t status);
void ctrl_queues_free(struct ucmd_ctrl *c);
void ctrl_cq_init(struct ucmd_ctrl *c, struct ctrl_cq *cq, uint16_t qid, uint64_t base,
		  void *mem, uint32_t size, bool ien, uint16_t vector);
void ctrl_sq_init(struct ucmd_ctrl *c, struct ctrl_sq *sq, uint16_t qid, uint64_t base,
		  void *mem, uint32_t size, uint16_t cqid);
void ctrl_sq_delete(struct ucmd_ctrl *c, uint16_t qid);
void ctrl_cq_delete(struct ucmd_ctrl *c, uint16_t qid);
int  ctrl_thread_start(struct ucmd_ctrl *c);
void ctrl_thread_stop(struct ucmd_ctrl *c);
/* Complete a delayed/deferred command with this status; true if found. */
bool ctrl_abort_req(struct ucmd_ctrl *c, uint16_t sqid, uint16_t cid);
/* A pass of c soon: its thread woken, or (inline) run now; no lock held */
void ctrl_wake(struct ucmd_ctrl *c);

/* exec.c: per command set dispatch */
struct ctrl_ctrl_opdef {
	uint16_t (*fn)(struct ucmd_ctrl *c, struct ctrl_req *req);
	uint32_t effects;	/* Commands Supported and Effects bits */
};
extern const struct ctrl_ctrl_opdef ctrl_admin_cmds[256];
extern const struct ctrl_ctrl_opdef ctrl_nvm_cmds[256];
uint16_t ctrl_exec(struct ucmd_ctrl *c, struct ctrl_req *req);

/* admin.c */
uint16_t ctrl_admin_create_sq(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_create_cq(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_delete_sq(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_delete_cq(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_abort(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_aer(struct ucmd_ctrl *c, struct ctrl_req *req);

/* events.c */
void ctrl_event(struct ucmd_ctrl *c, uint8_t type, uint8_t info, uint8_t lid);
void ctrl_event_unmask(struct ucmd_ctrl *c, uint8_t lid);
void ctrl_aer_flush(struct ucmd_ctrl *c);
void ctrl_error_record(struct ucmd_ctrl *c, uint16_t sqid, uint16_t cid, uint16_t status,
			uint32_t nsid, uint64_t lba);
void ctrl_ns_changed(struct ucmd_ctrl *c, uint32_t nsid);
/* nsid in the Changed Namespace List, no notice */
void ctrl_ns_changed_note(struct ucmd_ctrl *c, uint32_t nsid);

/* identify.c */
uint16_t ctrl_admin_identify(struct ucmd_ctrl *c, struct ctrl_req *req);

/* log.c */
uint16_t ctrl_admin_get_log(struct ucmd_ctrl *c, struct ctrl_req *req);
void ctrl_log_smart(struct ucmd_ctrl *c, struct nvme_smart_log *s);

/*
 * log_more.c: logs whose size depends on the controller's state or whose
 * reading has side effects (LSP actions). True for such a LID.
 */
bool ctrl_log_dyn(uint8_t lid);
/* Build the whole log into *buf (malloc'd, *size bytes), or a status */
uint16_t ctrl_log_dyn_build(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
			     size_t *size);
/* Release the Persistent Event log's reporting context (Controller Level Reset) */
void ctrl_log_dyn_reset(struct ucmd_ctrl *c);
/* ...and the telemetry capture too (destroy) */
void ctrl_log_dyn_free(struct ucmd_ctrl *c);
/* log_telemetry.c, log_pel.c, log_endgrp.c, lba_status.c */
uint16_t ctrl_log_telemetry(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
			     size_t *size);
uint16_t ctrl_log_pel(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
		       size_t *size);
uint16_t ctrl_log_endgrp(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
			  size_t *size);
uint16_t ctrl_log_lba_status(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
			      size_t *size);
uint16_t ctrl_admin_get_lba_status(struct ucmd_ctrl *c, struct ctrl_req *req);
/* The one Endurance Group: every namespace belongs to it */
#define UCMD_ENDGID		1

/* features.c */
void ctrl_features_defaults(struct ctrl_feat_vals *f);
/* the asynchronous events Set Features may enable on c */
uint32_t ctrl_aec_supported(struct ucmd_ctrl *c);
uint16_t ctrl_admin_get_features(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_set_features(struct ucmd_ctrl *c, struct ctrl_req *req);
uint8_t ctrl_critical_warning(struct ucmd_ctrl *c);

/* nsmgmt.c */
uint16_t ctrl_admin_format(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_ns_mgmt(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_admin_ns_attach(struct ucmd_ctrl *c, struct ctrl_req *req);

/* nvm.c */
uint16_t ctrl_nvm_flush(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_nvm_rw(struct ucmd_ctrl *c, struct ctrl_req *req);
/* Hint the store about a read a doorbell just announced (see store prefetch). */
void ctrl_nvm_prefetch(struct ucmd_ctrl *c, const struct ucmd_nvme_sqe *sqe);
uint16_t ctrl_nvm_compare(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_nvm_verify(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_nvm_write_zeroes(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_nvm_write_uncor(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_nvm_dsm(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_nvm_copy(struct ucmd_ctrl *c, struct ctrl_req *req);

/* ns.c */
uint32_t ctrl_lbaf_ds(uint8_t lbaf);
uint16_t ctrl_lbaf_ms(uint8_t lbaf);
/* the format's Protection Information Format (pi.h's enum pi_pif) */
uint8_t ctrl_lbaf_pif(uint8_t lbaf);
/* its Storage Tag Size (elbaf STS): 0, or 8 and 16 on formats 12 and 13 */
uint8_t ctrl_lbaf_sts(uint8_t lbaf);
/* its metadata holds that format's protection tuple (8 or 16 bytes) */
bool ctrl_lbaf_pi_fits(uint8_t lbaf);
/* every I/O asks these several times: read from the namespace, not the table */
static inline uint32_t ctrl_ns_ds(const struct ctrl_ns *ns) { return 1u << ns->lba_shift; }
static inline uint16_t ctrl_ns_ms(const struct ctrl_ns *ns) { return ns->ms; }
void ctrl_ns_set_lbaf(struct ctrl_ns *ns, uint8_t lbaf);
/* Store layout: data of every LBA, then the metadata of every LBA. */
static inline uint64_t ctrl_ns_data_off(const struct ctrl_ns *ns, uint64_t lba)
{
	return lba * ctrl_ns_ds(ns);
}
static inline uint64_t ctrl_ns_meta_off(const struct ctrl_ns *ns, uint64_t lba)
{
	return ns->nsze * ctrl_ns_ds(ns) + lba * ctrl_ns_ms(ns);
}
static inline uint64_t ctrl_ns_store_size(uint64_t nsze, uint8_t lbaf)
{
	return nsze * (ctrl_lbaf_ds(lbaf) + ctrl_lbaf_ms(lbaf));
}
/* capacity.c: TNVMCAP, UNVMCAP (bytes), whether a new namespace fits, Identify's fields */
uint64_t ctrl_tnvmcap(const struct ucmd_ctrl *c);
uint64_t ctrl_unvmcap(const struct ucmd_ctrl *c);
bool ctrl_capacity_fits(const struct ucmd_ctrl *c, uint64_t nsze, uint8_t lbaf);
void ctrl_id_ctrl_capacity(const struct ucmd_ctrl *c, struct nvme_id_ctrl *id);
int  ctrl_ns_open_store(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool create);
int  ctrl_ns_add(struct ucmd_ctrl *c, const struct ucmd_ns_params *p, uint32_t nsid);
void ctrl_ns_free(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool remove_file);
/* An active namespace: allocated and attached */
struct ctrl_ns *ctrl_ns_active(struct ucmd_ctrl *c, uint32_t nsid);
void ctrl_ns_fill_id(struct ucmd_ctrl *c, const struct ctrl_ns *ns, struct nvme_id_ns *id);
/* Zero data+metadata of [slba, slba+nlb) and forget write-uncorrectable state;
 * -ENOSPC (nothing done) when that would split a mark of a full range table */
int  ctrl_ns_discard(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba, uint64_t nlb,
		      bool deallocate);
void ctrl_ns_uuid(struct ucmd_ctrl *c, struct ctrl_ns *ns);

/* ranges.c */
bool ctrl_ranges_overlap(const struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb);
/* Mark (merging with neighbours); -ENOSPC when the table is full */
int  ctrl_ranges_add(struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb);
/* Would removing [slba, slba + nlb) fit (no split of a range of a full table)? */
bool ctrl_ranges_remove_fits(const struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb);
/* 1 when something was removed, 0 when nothing was marked, -ENOSPC, -ENOMEM */
int  ctrl_ranges_remove(struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb);
/* Loading: append a range after every other one (-EINVAL if it is not) */
int  ctrl_ranges_append(struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb);
void ctrl_ranges_clear(struct ctrl_ranges *rs);

/* dma.c */
void ctrl_iovs_init(struct ctrl_iovs *v);
void ctrl_iovs_free(struct ctrl_iovs *v);
int  ctrl_iovs_add(struct ctrl_iovs *v, void *base, size_t len);
/* init/free that borrow and give back the controller's spare array (under lock) */
void ctrl_iovs_init_spare(struct ucmd_ctrl *c, struct ctrl_iovs *v);
void ctrl_iovs_free_spare(struct ucmd_ctrl *c, struct ctrl_iovs *v);
/* Map the data pointer (PRP or SGL by PSDT) for len bytes */
uint16_t ctrl_map_data(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t len,
			struct ctrl_iovs *out);
/*
 * The short path: a transfer of len bytes that PRP1 and PRP2 describe
 * without a PRP list (ctrl_prp_short says whether it is one) maps onto
 * iov[2] on the caller's stack, with ctrl_map_data's checks and statuses;
 * nothing to free.
 */
/* Whether the host limits req's DMA to a window (ctrl_set_dma_window). */
bool ctrl_dma_windowed(struct ucmd_ctrl *c, struct ctrl_req *req);
bool ctrl_prp_short(const struct ctrl_req *req, uint64_t len);
uint16_t ctrl_map_prp_short(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t len,
			    struct iovec iov[2], int *cnt);
/* Map the metadata pointer (MPTR) for len bytes */
uint16_t ctrl_map_meta(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t len,
			struct ctrl_iovs *out);
/* Copy between a flat buffer and the command's data buffer */
uint16_t ctrl_data_to_host(struct ucmd_ctrl *c, struct ctrl_req *req, const void *buf,
			    uint64_t len);
uint16_t ctrl_data_from_host(struct ucmd_ctrl *c, struct ctrl_req *req, void *buf,
			      uint64_t len);
/* Through the user memory accessor: 0, or Data Transfer Error at a hole. */
uint16_t ctrl_iovs_copy_out(const struct ctrl_iovs *v, const void *buf, uint64_t len);
uint16_t ctrl_iovs_zero_from(const struct ctrl_iovs *v, uint64_t start);
uint16_t ctrl_iovs_copy_in(const struct ctrl_iovs *v, void *buf, uint64_t len);

/* Cursor over an iovec list, to split interleaved (extended LBA) buffers */
struct ctrl_iov_cursor {
	const struct ctrl_iovs *v;
	int idx;
	size_t off;
};
int ctrl_iov_take(struct ctrl_iov_cursor *cur, uint64_t len, struct ctrl_iovs *dst);
/*
 * Store transfers in chunks of at most UCMD_IOV_CHUNK iovecs; -EFAULT when
 * host memory could not be reached (ctrl_store_status: Data Transfer Error).
 */
int ctrl_store_xfer(struct store *st, const struct ctrl_iovs *v, uint64_t off, bool write,
		     bool fua);

/* dir.c: the controller directory; see docs/security.md */
/* Record why ucmd_ctrl_create() is failing (params->errbuf); returns err. */
int  ctrl_ctrl_why(struct ucmd_ctrl *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Open (a writer creates it 0700), check ownership and mode, take the lock. */
int  ctrl_dir_open(struct ucmd_ctrl *c);
void ctrl_dir_close(struct ucmd_ctrl *c);
/* Open a state file of the directory with flags (O_RDONLY, O_RDWR, or
 * O_RDWR|O_CREAT|O_EXCL: made 0600 and the directory synced), never through
 * a symlink, then checked (regular, one link, owner); -ENOENT when absent. */
int  ctrl_dir_open_file(struct ucmd_ctrl *c, const char *name, int flags, int *fd);
/* Create a new 0600 temp file for name (.name.tmp.XXXXXXXX), O_EXCL. */
int  ctrl_dir_temp(struct ucmd_ctrl *c, const char *name, char *tmp, size_t len, int *fd);
/* A namespace image nsN.img: created (O_EXCL, sized) or opened at exactly size. */
int  ctrl_dir_image_open(struct ucmd_ctrl *c, uint32_t nsid, uint64_t size, bool create,
			  struct store **st);
void ctrl_dir_image_remove(struct ucmd_ctrl *c, uint32_t nsid);
/* First nsN.img in the directory, if any (true), its name in buf. */
bool ctrl_dir_find_image(struct ucmd_ctrl *c, char *buf, size_t len);
/* A device namespace's backing device or file, checked (see ctrl.h). */
int  ctrl_dir_device_open(struct ucmd_ctrl *c, const char *path, uint64_t size,
			   struct store **st);
/*
 * The NVMe status for a store error: Capacity Exceeded for a full disk, Data
 * Transfer Error when host memory could not be reached (-EFAULT: the DMA's
 * fault, not the media's), Namespace Is Write Protected for a read-only one.
 */
uint16_t ctrl_store_status(int err);

/* pi_io.c: Read, Write and Compare on a namespace formatted with protection */
struct pi_fmt;
struct pi_cmd;
void ctrl_pi_fmt(const struct ctrl_ns *ns, struct pi_fmt *f);
/* a command's PRINFO (CDW12 bits 29:26), ILBRT (CDW14 and CDW3), LBAT, LBATM */
void ctrl_pi_cmd(const struct pi_fmt *f, const struct ucmd_nvme_sqe *cmd, uint64_t slba,
		  struct pi_cmd *pc);
/* blocks first.. of a command checked; a failure's LBA goes to req->err_lba */
uint16_t ctrl_pi_check_blocks(struct ctrl_req *req, const struct pi_fmt *f,
			       const struct pi_cmd *pc, uint64_t first, uint64_t nlb,
			       const uint8_t *data, const uint8_t *md);
uint16_t ctrl_pi_rw(struct ucmd_ctrl *c, struct ctrl_req *req, struct ctrl_ns *ns,
		     uint64_t slba, uint64_t nlb);
/*
 * Bytes [off, off + n) of the namespace's store, about to be written as they
 * should read back (a sanitize overwrite's pattern): the tuples in it turned
 * into their stored form (pi_store_codec). Nothing on a namespace without PI.
 */
void ctrl_pi_store_bytes(const struct ctrl_ns *ns, uint64_t off, uint8_t *buf, uint64_t n);
/*
 * pi_migrate.c: the tuples of a directory of ctrl.json version 3 converted
 * to their stored form (crash-safe, resumed at the next load); a read-only
 * controller reads them as they are. After a load.
 */
int ctrl_pi_migrate(struct ucmd_ctrl *c, uint64_t version);
/* After a save of version 4: the conversion records are no longer needed */
void ctrl_pi_migrate_done(struct ucmd_ctrl *c);
/* Test knobs: bytes of metadata per step; fail with -EINTR after so many steps (0: never) */
extern uint64_t ctrl_pi_migrate_chunk;
extern unsigned ctrl_pi_migrate_stop;
/* pi_cmd.c: Verify, Write Zeroes and Copy on such a namespace */
uint16_t ctrl_pi_cmd_valid(struct ctrl_ns *ns, const struct ucmd_nvme_sqe *cmd, uint64_t slba);
uint16_t ctrl_pi_verify(struct ctrl_req *req, struct ctrl_ns *ns, uint64_t slba, uint64_t nlb);
/* with PRACT: the stored blocks' tuples made anew as the command says */
uint16_t ctrl_pi_generate_range(struct ctrl_req *req, struct ctrl_ns *ns, uint64_t slba,
				 uint64_t nlb);
/*
 * A Copy source range of either entry format (0h: 32 bytes, 16b guard
 * tags; 1h: 40 bytes, 64b guard tags), with the tags its read is checked
 * against.
 */
struct ctrl_copy_src {
	uint64_t slba, nlb;
	uint64_t eilbrt;	/* 32 bits in format 0h, 48 in 1h (no storage tag) */
	uint16_t elbat, elbatm;
};
/* Entry i of a list in format fmt (0h or 1h) */
void ctrl_copy_src_parse(const uint8_t *list, unsigned fmt, unsigned i, struct ctrl_copy_src *s);
uint16_t ctrl_pi_copy_check(struct ctrl_req *req, struct ctrl_ns *ns,
			     const struct ctrl_copy_src *r, unsigned nr, uint64_t sdlba);

/* nvm.c: what every write and read does after the store moved the blocks */
uint16_t ctrl_nvm_written(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba, uint64_t nlb,
			   bool fua);
/* Unrecovered Read Error for a block Write Uncorrectable marked */
uint16_t ctrl_nvm_read_check(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba,
			      uint64_t nlb);
void ctrl_nvm_read_done(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t nlb);

/* persist_check.c: every field of a parsed ctrl.json, its checksum and the
 * namespace images it names; -EINVAL (-ENOENT: an image is missing) with the
 * reason in the caller's errbuf. Removes the "crc32c" member from root. */
struct json_object;
int  ctrl_state_check(struct ucmd_ctrl *c, struct json_object *root);
/* Serial, model and firmware fit Identify (-EINVAL and errbuf if not) */
int  ctrl_state_check_identity(struct ucmd_ctrl *c);
/* The checksum of a state object without its "crc32c" member */
uint32_t ctrl_state_crc(struct json_object *root);

/* persist_journal.c */
#define UCMD_JOURNAL_NAME	"ctrl.journal"
/* Compact (rewrite ctrl.json, empty the journal) past this many records */
#define UCMD_JOURNAL_MAX	16384u
int  ctrl_journal_open(struct ucmd_ctrl *c, bool must_exist);
/* Apply the journal to the loaded state; after all namespaces are loaded */
int  ctrl_journal_replay(struct ucmd_ctrl *c);
/* ctrl.json now holds everything at journal_gen: start an empty journal */
int  ctrl_journal_reset(struct ucmd_ctrl *c);
void ctrl_journal_close(struct ucmd_ctrl *c);
/* Make a mark (or clear) of [slba, slba + nlb) durable; failure is fatal */
void ctrl_persist_range(struct ucmd_ctrl *c, const struct ctrl_ns *ns, bool mark,
			 uint64_t slba, uint64_t nlb);

/* persist.c */
int  ctrl_persist_load(struct ucmd_ctrl *c, bool *found);
int  ctrl_persist_save(struct ucmd_ctrl *c, bool clean);
/* Save after a state change; failure makes the controller fatal */
void ctrl_persist(struct ucmd_ctrl *c);

#endif /* UCMD_NVME_CTRL_INT_H */
