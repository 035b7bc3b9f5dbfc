/* SPDX-License-Identifier: MIT */
/*
 * Sanitize (admin 84h) and the Sanitize Status log (81h). The command only
 * starts the operation, as the spec requires; the erase itself runs in the
 * background, UCMD_SANITIZE_CHUNK bytes of namespace store written per
 * controller pass (ctrl_ctrl_run; 64 times that deallocated), so that a host sees it in progress, and commands
 * other than the few the spec allows complete with Sanitize In Progress
 * until it is done. It also keeps to the wall clock, as a device does
 * whether or not a host is attached: by the time the log's estimate for
 * the action has passed since the start, it is done; before that, at least
 * the elapsed fraction of it. The first pass of a controller made later
 * (a new process, a daemon restart) does what the clock says is owed. The state (SSTAT, SCDW10, the pattern) is in ctrl.json:
 * an operation interrupted by a restart starts over at the next power on,
 * because once started a sanitize cannot be aborted (NVMe 2.0, 8.21).
 *
 * What each action leaves on the media (docs/compat.md):
 *   block erase   No-Deallocate clear: deallocated (reads zeros, DLFEAT);
 *                 set: zeros written
 *   crypto erase  clear: deallocated; set: the old data under a new key,
 *                 which reads as pseudo-random bytes
 *   overwrite     the pattern (inverted between passes with OIPBP), left
 *                 readable whatever No-Deallocate says (deallocating is a
 *                 "should" the spec leaves to the device)
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fdp.h"
#include "zns.h"

#define SANACT(dw10)	((dw10) & 7u)
#define AUSE(dw10)	(((dw10) >> 3) & 1u)
#define OWPASS(dw10)	((((dw10) >> 4) & 0xfu) ? (((dw10) >> 4) & 0xfu) : 16u)
#define OIPBP(dw10)	(((dw10) >> 8) & 1u)
#define NDAS(dw10)	(((dw10) >> 9) & 1u)
#define SSTAT_STATUS(s)	((s) & NVME_SANITIZE_SSTAT_STATUS_MASK)
#define SSTAT_PASSES(n)	((uint16_t)((n) << NVME_SANITIZE_SSTAT_COMPLETED_PASSES_SHIFT))
/* The rate the estimates in the log assume */
#define EST_BYTES_PER_S	(1ull << 30)

bool ctrl_sanitize_busy(const struct ucmd_ctrl *c)
{
	return SSTAT_STATUS(c->san.sstat) == NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS;
}

static bool in_failure_mode(const struct ucmd_ctrl *c)
{
	return SSTAT_STATUS(c->san.sstat) == NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED &&
	       !c->san.exited;
}

/* Admin commands a host may send while a sanitize runs or failed (2.0, 8.21) */
static bool admin_allowed(const struct ctrl_req *req, bool failed)
{
	uint8_t lid = req->cmd.cdw10 & 0xff;

	switch (req->cmd.opcode) {
	case nvme_admin_abort_cmd:
	case nvme_admin_async_event:
	case nvme_admin_create_cq:
	case nvme_admin_create_sq:
	case nvme_admin_delete_cq:
	case nvme_admin_delete_sq:
	case nvme_admin_get_features:
	case nvme_admin_set_features:
	case nvme_admin_identify:
	case nvme_admin_keep_alive:
		return true;
	case nvme_admin_get_log_page:
		return lid == NVME_LOG_LID_ERROR || lid == NVME_LOG_LID_SMART ||
		       lid == NVME_LOG_LID_SANITIZE || lid == NVME_LOG_LID_CHANGED_NS;
	case nvme_admin_sanitize_nvm:
		return failed;	/* recovery; a second start while one runs is refused */
	default:
		return false;
	}
}

uint16_t ctrl_sanitize_check(struct ucmd_ctrl *c, const struct ctrl_req *req)
{
	bool busy = ctrl_sanitize_busy(c), failed = in_failure_mode(c);

	if (!busy && !failed)
		return 0;
	if (req->sqid ? req->cmd.opcode == nvme_cmd_flush : admin_allowed(req, failed))
		return 0;
	/* In progress is transient: a retry after it completes succeeds. */
	return busy ? UCMD_GEN(NVME_SC_SANITIZE_IN_PROGRESS)
		    : UCMD_GEN(NVME_SC_SANITIZE_FAILED) | UCMD_DNR;
}

static uint64_t ns_bytes(const struct ctrl_ns *ns)
{
	return ctrl_ns_store_size(ns->nsze, ns->lbaf);
}

static uint32_t nr_passes(const struct ucmd_ctrl *c)
{
	return SANACT(c->san.scdw10) == NVME_SANITIZE_SANACT_START_OVERWRITE ?
	       OWPASS(c->san.scdw10) : 1;
}

/* What the whole operation writes or deallocates (the SPROG denominator) */
static void progress_total(struct ucmd_ctrl *c)
{
	uint64_t sum = 0;

	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i])
			sum += ns_bytes(c->ns[i]);
	c->san.total = sum * nr_passes(c);
	if (c->san.done > c->san.total)
		c->san.done = c->san.total;
	if (!c->san.ns_idx)
		c->san.ns_idx = 1;
}

/* Start the background work from the beginning */
static void progress_reset(struct ucmd_ctrl *c)
{
	c->san.start_rt_ms = realtime_ms();
	c->san.done = 0;
	c->san.pass = 0;
	c->san.ns_idx = 1;
	c->san.off = 0;
	c->san.sstat = NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS;
	progress_total(c);
}

static void fill_pattern32(uint8_t *buf, size_t len, uint32_t pat)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(pat >> (8 * ((i) & 3)));
}

/* The old data under a new key: a stream no one can tie to what was there */
static void fill_cipher(uint8_t *buf, size_t len, uint64_t key, uint64_t off)
{
	uint64_t x = key ^ (off * 0x9e3779b97f4a7c15ull) ^ 1;

	for (size_t i = 0; i < len; i++) {
		if (!(i & 7)) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		buf[i] = (uint8_t)(x >> (8 * (i & 7)));
	}
}

static int erase_chunk(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t off, uint64_t n,
		       uint8_t *buf, uint64_t key)
{
	uint32_t dw10 = c->san.scdw10, pat = c->san.ovrpat;
	struct store *st = ns->st;

	switch (SANACT(dw10)) {
	case NVME_SANITIZE_SANACT_START_BLOCK_ERASE:
		return NDAS(dw10) ? st->ops->write_zeroes(st, off, n) : st->ops->deallocate(st, off, n);
	case NVME_SANITIZE_SANACT_START_CRYPTO_ERASE:
		if (!NDAS(dw10))
			return st->ops->deallocate(st, off, n);
		fill_cipher(buf, n, key, off);
		return store_write(st, buf, n, off, false);
	default:
		if (OIPBP(dw10) && (c->san.pass & 1))
			pat = ~pat;
		fill_pattern32(buf, n, pat);
		/* the tuples of a PI namespace read back as the pattern too */
		ctrl_pi_store_bytes(ns, off, buf, n);
		return store_write(st, buf, n, off, false);
	}
}

static void finish(struct ucmd_ctrl *c, bool ok)
{
	uint16_t passes = SANACT(c->san.scdw10) == NVME_SANITIZE_SANACT_START_OVERWRITE ?
			  SSTAT_PASSES(c->san.pass) : 0;

	if (ok) {
		for (unsigned i = 1; i <= UCMD_MAX_NS; i++) {
			if (!c->ns[i])
				continue;
			c->ns[i]->st->ops->flush(c->ns[i]->st);
			/* no user data is left, marks included, nor a written zone */
			ctrl_ranges_clear(&c->ns[i]->uncor);
			ctrl_zns_erase(c->ns[i]);
			ctrl_fdp_ns_erase(c, c->ns[i]);
		}
		c->san.sstat = NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS | passes |
			       NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED;
	} else {
		c->san.sstat = NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED | passes;
		c->san.ause_fail = AUSE(c->san.scdw10);
		c->san.exited = false;
	}
	ctrl_persist(c);
}

static uint32_t est_seconds(uint64_t bytes);

/* Does the action write the media (rather than deallocate)? */
static bool writes_media(const struct ucmd_ctrl *c)
{
	return SANACT(c->san.scdw10) == NVME_SANITIZE_SANACT_START_OVERWRITE || NDAS(c->san.scdw10);
}

/* The operation's duration: the log's estimate for it, or the test knob's */
static uint64_t plan_of(const struct ucmd_ctrl *c)
{
	return c->san.plan_ms ? c->san.plan_ms
			      : 1000ull * (writes_media(c) ? est_seconds(c->san.total) : 1);
}

/*
 * Bytes the wall clock says are done: the whole operation takes what the
 * log estimates for it (writing at EST_BYTES_PER_S, deallocating in 1 s),
 * and progress is linear in between.
 */
static uint64_t clock_owed(const struct ucmd_ctrl *c)
{
	uint64_t now = realtime_ms(), plan_ms, el;

	if (!c->san.start_rt_ms || now < c->san.start_rt_ms)
		return 0;	/* the clock went back: no claim on it */
	el = now - c->san.start_rt_ms;
	plan_ms = plan_of(c);
	if (el >= plan_ms)
		return c->san.total;
	return (uint64_t)((unsigned __int128)c->san.total * el / plan_ms);
}

static void clock_rebase(struct ucmd_ctrl *c)
{
	uint64_t now = realtime_ms(), plan_ms = plan_of(c), back = 0;

	if (c->san.total)
		back = (uint64_t)((unsigned __int128)plan_ms * c->san.done / c->san.total);
	c->san.start_rt_ms = now > back ? now - back : 1;
}

bool ctrl_sanitize_step(struct ucmd_ctrl *c)
{
	uint32_t act = SANACT(c->san.scdw10);
	/* deallocating is a metadata update: more of it per pass than of writing */
	uint32_t chunk = c->san.chunk ? c->san.chunk : UCMD_SANITIZE_CHUNK;
	uint64_t budget = (act != NVME_SANITIZE_SANACT_START_OVERWRITE && !NDAS(c->san.scdw10)) ?
			  64ull * chunk : chunk, key, owed;
	uint8_t *buf;

	/* a read-only controller cannot erase: it stays in progress for a writer */
	if (!ctrl_sanitize_busy(c) || c->p.read_only)
		return false;
	/* loaded in progress: it goes on from where the last user left it */
	if (!c->san.total)
		progress_total(c);
	/*
	 * No start on the clock (a state from before it was kept, or a cold
	 * start: the clock stood still while the power was off): the clock
	 * takes up from what is done.
	 */
	if (!c->san.start_rt_ms)
		clock_rebase(c);
	/* more than a pass when the clock says so (nobody ran passes meanwhile) */
	owed = clock_owed(c);
	if (owed >= c->san.total)
		budget = UINT64_MAX;	/* all of it, through to the end (finish) */
	else if (owed > c->san.done && owed - c->san.done > budget)
		budget = owed - c->san.done;
	if (c->san.fail_next) {
		c->san.fail_next = false;
		finish(c, false);
		return false;
	}
	buf = malloc(chunk);
	if (!buf || getrandom(&key, sizeof(key), 0) != sizeof(key)) {
		free(buf);
		return true;	/* try again at the next pass */
	}
	while (budget) {
		struct ctrl_ns *ns = c->san.ns_idx <= UCMD_MAX_NS ? c->ns[c->san.ns_idx] : NULL;
		uint64_t n;

		if (c->san.ns_idx > UCMD_MAX_NS) {
			if (++c->san.pass >= nr_passes(c)) {
				free(buf);
				finish(c, true);
				return false;
			}
			c->san.sstat = (uint16_t)(NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS |
						  SSTAT_PASSES(c->san.pass));
			c->san.ns_idx = 1;
			continue;
		}
		if (!ns || c->san.off >= ns_bytes(ns)) {
			c->san.ns_idx++;
			c->san.off = 0;
			continue;
		}
		n = ns_bytes(ns) - c->san.off;
		if (n > budget)
			n = budget;
		if (n > chunk && (act == NVME_SANITIZE_SANACT_START_OVERWRITE || NDAS(c->san.scdw10)))
			n = chunk;	/* what buf holds */
		if (erase_chunk(c, ns, c->san.off, n, buf, key)) {
			free(buf);
			finish(c, false);
			return false;
		}
		c->san.off += n;
		c->san.done += n;
		budget -= n;
	}
	free(buf);
	return true;
}

uint16_t ctrl_admin_sanitize(struct ucmd_ctrl *x, struct ctrl_req *req)
{
	/* the subsystem's: controller 1 holds it, whichever controller runs the command */
	struct ucmd_ctrl *c = ctrl_primary(x);
	uint32_t dw10 = req->cmd.cdw10;

	if (dw10 & ~0x3ffu)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	switch (SANACT(dw10)) {
	case NVME_SANITIZE_SANACT_EXIT_FAILURE:
		/* No failure to leave is not an error (2.0); a restricted one needs a new sanitize */
		if (!in_failure_mode(c))
			return 0;
		if (!c->san.ause_fail)
			return UCMD_GEN(NVME_SC_SANITIZE_FAILED) | UCMD_DNR;
		c->san.exited = true;
		ctrl_persist(c);
		return 0;
	case NVME_SANITIZE_SANACT_START_BLOCK_ERASE:
	case NVME_SANITIZE_SANACT_START_OVERWRITE:
	case NVME_SANITIZE_SANACT_START_CRYPTO_ERASE:
		break;
	default:
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	}
	/* A device self-test in progress is aborted by the sanitize (result 9h) */
	ctrl_selftest_abort(c, NVME_ST_RESULT_ABORTED_SANITIZE);
	c->san.scdw10 = dw10;
	c->san.ovrpat = req->cmd.cdw11;
	c->san.exited = false;
	progress_reset(c);
	/* Durable before the command completes: a restart must resume it */
	ctrl_persist(c);
	/* controller 1's passes carry it on (its thread's timer): one now */
	if (x != c)
		c->kick |= ctrl_bit(c);
	return 0;
}

static uint32_t est_seconds(uint64_t bytes)
{
	uint64_t s = (bytes + EST_BYTES_PER_S - 1) / EST_BYTES_PER_S;

	return s ? (uint32_t)(s < 0xfffffffeull ? s : 0xfffffffeull) : 1;
}

void ctrl_log_sanitize(struct ucmd_ctrl *x, struct nvme_sanitize_log_page *l)
{
	/* every controller reports the subsystem's (controller 1's lock is held) */
	struct ucmd_ctrl *c = ctrl_primary(x);
	uint64_t sum = 0;

	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i])
			sum += ns_bytes(c->ns[i]);
	/* SPROG: fraction done of 65536; FFFFh when none is in progress */
	if (ctrl_sanitize_busy(c) && !c->san.total)
		progress_total(c);	/* loaded in progress, no pass yet */
	/* what the clock says is done by now, before it is reported */
	if (ctrl_sanitize_busy(c) && clock_owed(c) > c->san.done)
		ctrl_sanitize_step(c);
	if (ctrl_sanitize_busy(c))
		l->sprog = htole16((uint16_t)(c->san.total ? c->san.done * 65536 / c->san.total : 0));
	else
		l->sprog = htole16(0xffff);
	l->sstat = htole16(c->san.sstat);
	l->scdw10 = htole32(c->san.scdw10);
	/* Deallocating is a metadata operation; writing the media is not */
	l->eto = htole32(est_seconds(sum * 16));
	l->etbe = htole32(1);
	l->etce = htole32(1);
	l->etond = htole32(est_seconds(sum * 16));
	l->etbend = htole32(est_seconds(sum));
	l->etcend = htole32(est_seconds(sum));
}
