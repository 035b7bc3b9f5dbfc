/* SPDX-License-Identifier: MIT */
/*
 * Controller lifetime: create (load or initialise the persistent state),
 * destroy (persist, close stores), and the out-of-band entry points that
 * are not register accesses.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdp.h"
#include "lib/error.h"

static void *identity_map(const struct ucmd_dma *dma, uint64_t addr, uint64_t len)
{
	(void)dma;
	/* Address 0 is never host memory the device may touch. */
	if (!addr || addr + len < addr)
		return NULL;
	return (void *)(uintptr_t)addr;
}

const struct ucmd_dma dma_identity = { .map = identity_map };

static char *dup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
}

/* A UUID-form NQN (ucmd owns no domain name) from 16 bytes */
static char *nqn_of(const uint8_t u[16])
{
	char buf[80];

	snprintf(buf, sizeof(buf), "nqn.2014-08.org.nvmexpress:uuid:%02x%02x%02x%02x-%02x%02x-"
		 "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
		 (u[6] & 0x0f) | 0x40, u[7], (u[8] & 0x3f) | 0x80, u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	return strdup(buf);
}

/*
 * The NQN of a controller without a directory, and of a state file from
 * before ctrl.json kept one: a hash of the serial, as it always was, so that
 * an existing directory keeps the subsystem NQN hosts know it by.
 */
char *ctrl_subnqn_legacy(const char *serial)
{
	uint64_t h = 0xcbf29ce484222325ull, h2;	/* FNV-1a */
	char buf[80];

	for (const char *p = serial; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	h2 = h * 0x9e3779b97f4a7c15ull;
	snprintf(buf, sizeof(buf), "nqn.2014-08.org.nvmexpress:uuid:%08x-%04x-4%03x-8%03x-%012llx",
		 (unsigned)(h >> 32), (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xfff,
		 (unsigned)(h >> 4) & 0xfff, (unsigned long long)h2 & 0xffffffffffffull);
	return strdup(buf);
}

/*
 * A new controller directory is a new device: its own serial ("UCMD" and
 * 16 hex digits, Identify's 20 characters) and subsystem NQN, from random
 * bytes, unless the caller named a serial.
 */
static int new_identity(struct ucmd_ctrl *c)
{
	uint8_t r[24];
	char sn[21];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	if (!c->p.serial) {
		snprintf(sn, sizeof(sn), "UCMD%02X%02X%02X%02X%02X%02X%02X%02X", r[16], r[17], r[18],
			 r[19], r[20], r[21], r[22], r[23]);
		free(c->serial);
		if (!(c->serial = strdup(sn)))
			return -ENOMEM;
	}
	free(c->subnqn);
	c->subnqn = nqn_of(r);
	return c->subnqn ? 0 : -ENOMEM;
}

/* This boot of the host (empty when unknown: every start is then a cold one) */
static void read_boot_id(char *buf, size_t len)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	for (char *p = buf; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

static int ctrl_alloc(const struct ucmd_ctrl_params *p, const struct ucmd_dma *dma,
		      struct ucmd_ctrl **out)
{
	struct ucmd_ctrl *c = calloc(1, sizeof(*c));
	unsigned n;

	if (!c)
		return -ENOMEM;
	c->p = *p;
	c->dirfd = -1;
	c->journal_fd = -1;
	if (p->errbuf && p->errbuf_len)
		p->errbuf[0] = 0;
	c->dma = dma ? dma : &dma_identity;
	c->qmax = p->max_io_queues ? p->max_io_queues : 64;
	if (!c->p.mqes)
		c->p.mqes = 1023;
	if (!c->p.cntlid)
		c->p.cntlid = UCMD_CNTLID_DEFAULT;
	if (!c->p.poll_ns)
		c->p.poll_ns = UCMD_CTRL_POLL_NS_DEFAULT;
	n = c->qmax + 1u;
	c->sq = calloc(n, sizeof(*c->sq));
	c->cq = calloc(n, sizeof(*c->cq));
	c->db_val = calloc(2 * n, sizeof(*c->db_val));
	c->db_dirty = calloc(2 * n, 1);
	c->cq_waiting = calloc(n, 1);
	c->iv_cd = calloc(n, 1);
	if (p->dir)
		c->dir = strdup(p->dir);
	c->serial = dup_or(p->serial, "UCMD0001");
	c->model = dup_or(p->model, "ucmd emulated NVMe controller");
	c->firmware = dup_or(p->firmware, "0.1");
	c->subnqn = c->serial ? ctrl_subnqn_legacy(c->serial) : NULL;
	if (c->firmware)	/* slot 1: the factory image; ctrl.json may say more */
		snprintf(c->fw.rev[1], sizeof(c->fw.rev[1]), "%.8s", c->firmware);
	c->fw.active = 1;
	/* nothing written since manufacture */
	c->san.sstat = NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED;
	c->dst.short_ms = UCMD_DST_SHORT_MS;
	c->dst.ext_ms = UCMD_DST_EXT_MS;
	if (!c->sq || !c->cq || !c->db_val || !c->db_dirty || !c->cq_waiting || !c->iv_cd || (p->dir && !c->dir) ||
	    !c->serial || !c->model || !c->firmware || !c->subnqn) {
		ucmd_ctrl_destroy(c);
		return -ENOMEM;
	}
	c->p.dir = c->dir;
	*out = c;
	return 0;
}

static int sync_init(struct ucmd_ctrl *c)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->db_lock, NULL);
	pthread_rwlock_init(&c->irq_lock, NULL);
	pthread_condattr_init(&ca);
	/* Delayed commands have monotonic deadlines. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->db_cond, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

/*
 * No ctrl.json. A new directory gets a new controller, but one that holds
 * namespace images has lost its state: starting afresh would hand those
 * images to new namespaces, so refuse and say how to recover.
 */
static int no_state(struct ucmd_ctrl *c)
{
	char img[64];

	if (ctrl_dir_find_image(c, img, sizeof(img)))
		return ctrl_ctrl_why(c, -EUCLEAN,
				      "%s has namespace images (%s) but no ctrl.json: nothing was "
				     "changed; restore ctrl.json from a backup, or remove the images "
				     "(%s/ns*.img) yourself to start over", c->dir, img, c->dir);
	if (c->p.read_only)
		return ctrl_ctrl_why(c, -ENOENT, "%s has no ctrl.json: no controller to open "
				      "read-only", c->dir);
	return 0;
}

/*
 * Is this a cold start (docs/store.md, "power cycles")? A new state, a caller
 * that says the device was powered on (ucmdd, once per daemon start), a host
 * that booted since the state was last saved, or a last run that never shut
 * down cleanly (the power went: an unsafe shutdown). Otherwise the device
 * stayed powered between two users of the directory (two CLI calls): its
 * volatile state, the current feature values, carries over.
 */
static void power_on(struct ucmd_ctrl *c, bool found)
{
	bool cold = !found || c->p.power_on || !c->last_clean ||
		    !c->cur_boot_id[0] || strcmp(c->boot_id, c->cur_boot_id);

	/* the volatile values are the device's only while it stays powered */
	if (!cold) {
		if (c->cur_valid)
			return;
		c->cur = c->saved;
		return;
	}
	c->cur = c->saved;
	c->power_cycled = true;
	/* a sanitize under way waited with the power off: its clock takes up from here */
	c->san.start_rt_ms = 0;
	c->smart.power_cycles++;
	if (found && !c->last_clean)
		c->smart.unsafe_shutdowns++;
	/* the subsystem's other controllers lost the power with it */
	for (unsigned i = 1; i < c->nr_ctrls; i++) {
		if (!c->sib[i - 1])
			continue;
		c->sib[i - 1]->smart.power_cycles++;
		if (found && !c->last_clean)
			c->sib[i - 1]->smart.unsafe_shutdowns++;
	}
	/* a pending activation waits for a reset, and a cold start is one; a
	 * download not committed is gone with the power */
	ctrl_fw_discard(c);
	ctrl_fw_reset(c, true);
	/* a self-test the power interrupted ends as a reset ends one */
	ctrl_selftest_abort(c, NVME_ST_RESULT_CLR);
}

static uint64_t initial_cap(const struct ucmd_ctrl *c)
{
	return (uint64_t)c->p.mqes |
	       (1ull << 16) |			/* CQR: queues physically contiguous */
	       (30ull << 24) |			/* TO: 15 s in 500 ms units */
	       (0ull << 32) |			/* DSTRD 0 */
	       ((1ull | (1ull << 6)) << 37) |	/* CSS: NVM, I/O command sets */
	       (0ull << 48) | (0ull << 52);	/* MPSMIN = MPSMAX = 4 KiB */
}

/*
 * Another controller of primary's subsystem: the same identity (serial,
 * model, subsystem NQN), its own controller ID, registers, queues,
 * features (its saved ones kept in primary's state), error log and
 * events; no directory of its own, namespaces reached through primary.
 */
int ctrl_sibling_create(struct ucmd_ctrl *primary, uint16_t cntlid, struct ucmd_ctrl **out)
{
	struct ucmd_ctrl_params p = primary->p;
	struct ucmd_ctrl *c;
	int ret;

	p.dir = NULL;
	p.errbuf = NULL;
	p.errbuf_len = 0;
	p.serial = primary->serial;
	p.model = primary->model;
	p.firmware = primary->firmware;
	p.cntlid = cntlid;
	p.fdp.enable = false;
	ret = ctrl_alloc(&p, primary->dma, &c);
	if (ret)
		return ret;
	sync_init(c);
	free(c->subnqn);
	c->subnqn = strdup(primary->subnqn);
	if (!c->subnqn) {
		ucmd_ctrl_destroy(c);
		return -ENOMEM;
	}
	c->primary = primary;
	c->idx = (uint8_t)(cntlid - primary->p.cntlid);
	c->created_ns = primary->created_ns;
	/* its saved features are controller 1's to keep: current from them at power on */
	c->saved = primary->sib_saved[c->idx - 1];
	c->cur = c->saved;
	/* its health counters too, each controller its own */
	c->smart = primary->sib_smart[c->idx - 1];
	/* and its error log */
	memcpy(c->errlog, primary->sib_err[c->idx - 1].e, sizeof(c->errlog));
	c->error_count = primary->sib_err[c->idx - 1].count;
	/*
	 * The endurance group is the subsystem's: controller 1's, reached
	 * under its lock as the namespaces are (never freed through this one)
	 */
	c->fdp = primary->fdp;
	c->cap = initial_cap(c);
	c->nsqa = c->ncqa = (uint16_t)(c->qmax - 1);
	memcpy(c->cur_boot_id, primary->cur_boot_id, sizeof(c->cur_boot_id));
	if (c->p.mode == UCMD_CTRL_THREAD && (ret = ctrl_thread_start(c))) {
		ucmd_ctrl_destroy(c);
		return ret;
	}
	c->up = true;
	*out = c;
	return 0;
}

int ctrl_create_dma(const struct ucmd_ctrl_params *p, const struct ucmd_dma *dma,
		    struct ucmd_ctrl **out)
{
	struct ucmd_ctrl *c;
	bool found = false;
	int ret;

	last_error_clear();
	if (!p || !out)
		return last_error_set(-EINVAL, "ucmd_ctrl_create: %s is NULL",
				      p ? "out" : "params");
	ret = ctrl_alloc(p, dma, &c);
	if (ret)
		return last_error_default(ret, "ucmd_ctrl_create");
	sync_init(c);
	ret = ctrl_state_check_identity(c);
	if (ret)
		goto fail;
	read_boot_id(c->cur_boot_id, sizeof(c->cur_boot_id));
	c->created_ns = ktime_get_ns();
	ctrl_features_defaults(&c->cur);
	c->saved = c->cur;
	for (unsigned i = 0; i < UCMD_CTRL_MAX_CONTROLLERS - 1; i++)
		c->sib_saved[i] = c->cur;
	c->cap = initial_cap(c);
	c->nsqa = c->ncqa = (uint16_t)(c->qmax - 1);

	if (c->dir) {
		ret = ctrl_dir_open(c);
		if (!ret)
			ret = ctrl_persist_load(c, &found);
		if (!ret && !found)
			ret = no_state(c);
		if (!ret && !found)
			ret = new_identity(c);
		if (ret)
			goto fail;
	}
	/* a loaded state keeps its endurance group; a new one takes the params' */
	if (!found && (ret = ctrl_fdp_setup(c, &c->p.fdp)))
		goto fail;
	/* a loaded state keeps its controllers too */
	if (!found)
		c->nr_ctrls = c->p.controllers;
	if (!c->nr_ctrls)
		c->nr_ctrls = 1;
	if ((ret = ctrl_subsys_populate(c, c->nr_ctrls)))
		goto fail;
	power_on(c, found);
	/* an image being downloaded survives only while the device stays powered */
	if (c->dir && !c->power_cycled)
		ret = ctrl_fw_load_download(c);
	if (ret)
		goto fail;
	if (c->dir && !c->p.read_only) {
		/* Marks the state "in use" so that a crash counts as unsafe. */
		ret = ctrl_persist_save(c, false);
		if (ret) {
			ctrl_ctrl_why(c, ret, "cannot write %s/ctrl.json: %s (open it read-only "
				      "to read from a full or read-only directory)", c->dir,
				      strerror(-ret));
			goto fail;
		}
	}
	if (c->p.mode == UCMD_CTRL_THREAD) {
		ret = ctrl_thread_start(c);
		if (ret)
			goto fail;
	}
	c->up = true;
	c->fresh = !found;
	*out = c;
	return 0;
fail:
	/* c->up is false: a refused or partly loaded state is never written back */
	ucmd_ctrl_destroy(c);
	return last_error_default(ret, "ucmd_ctrl_create");
}

int ucmd_ctrl_create(const struct ucmd_ctrl_params *p, struct ucmd_ctrl **out)
{
	return ctrl_create_dma(p, NULL, out);
}

int ctrl_set_irq(struct ucmd_ctrl *c, void (*irq)(void *arg, uint16_t vector), void *arg)
{
	int ret = 0;

	pthread_rwlock_wrlock(&c->irq_lock);
	if (irq && c->irq) {
		ret = -EBUSY;
	} else {
		c->irq = irq;
		c->irq_arg = irq ? arg : NULL;
	}
	pthread_rwlock_unlock(&c->irq_lock);
	return ret;
}

void ctrl_set_dma_window(struct ucmd_ctrl *c, ctrl_dma_window_fn window, void *arg)
{
	/* every mapping runs under the lock: none sees a half-changed pair */
	pthread_mutex_lock(&c->lock);
	c->dma_window = window;
	c->dma_window_arg = window ? arg : NULL;
	pthread_mutex_unlock(&c->lock);
}

/*
 * The state on disk after a failed final save is the last ctrl.json plus
 * the journal, consistent but older: the caller must hear of it (ucmdd
 * exits non-zero), not find it at the next start.
 */
static int unsaved(struct ucmd_ctrl *c, int err, const char *what)
{
	/* not ctrl_ctrl_why(): the caller's errbuf may be gone by now */
	return last_error_set(err, "%s: %s: %s; the controller state was not saved (the next "
			      "start finds the last saved ctrl.json and ctrl.journal)", c->dir, what,
			      strerror(-err));
}

int ucmd_ctrl_destroy(struct ucmd_ctrl *c)
{
	int ret = 0, r;

	if (!c)
		return 0;
	/* the other controllers of the subsystem first: they reach c's namespaces */
	ctrl_subsys_free(c);
	ctrl_thread_stop(c);
	if (c->sq && c->cq) {
		pthread_mutex_lock(&c->lock);
		/* the device stays powered for the next user: its current values stay */
		if (!c->shn_valid) {
			c->shn_cur = c->cur;
			c->shn_valid = true;
		}
		ctrl_ctrl_reset_locked(c);
		for (unsigned i = 1; i <= UCMD_MAX_NS; i++) {
			if (!c->ns[i] || !c->ns[i]->st)
				continue;
			r = c->ns[i]->st->ops->flush(c->ns[i]->st);
			if (r && !ret && c->up && c->dir && !c->p.read_only)
				ret = unsaved(c, r, "flushing a namespace image");
		}
		/* a controller that failed to come up never writes: it changes nothing */
		if (c->up && c->dir && !c->p.read_only) {
			if (c->persist_failed)
				r = unsaved(c, c->persist_err, "an earlier save failed");
			else if ((r = ctrl_persist_save(c, true)))
				r = unsaved(c, r, "writing ctrl.json");
			ret = ret ? ret : r;
		}
		pthread_mutex_unlock(&c->lock);
	}
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i])
			ctrl_ns_free(c, c->ns[i], false);
	ctrl_dir_close(c);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->db_lock);
	pthread_rwlock_destroy(&c->irq_lock);
	pthread_cond_destroy(&c->db_cond);
	ctrl_journal_close(c);
	free(c->req_spare);
	free(c->iov_spare);
	free(c->sq);
	free(c->cq);
	free(c->db_val);
	free(c->db_dirty);
	free(c->cq_waiting);
	free(c->iv_cd);
	free(c->dir);
	free(c->serial);
	free(c->model);
	free(c->firmware);
	free(c->subnqn);
	ctrl_fw_free(c);
	ctrl_fdp_free(c);
	ctrl_log_dyn_free(c);
	free(c);
	return ret;
}

bool ucmd_ctrl_power_cycled(struct ucmd_ctrl *c)
{
	return c->power_cycled;
}

unsigned ucmd_ctrl_controllers(struct ucmd_ctrl *c)
{
	return c && c->nr_ctrls ? c->nr_ctrls : 1;
}

struct ucmd_ctrl *ucmd_ctrl_controller(struct ucmd_ctrl *c, unsigned i)
{
	if (!c || i >= ucmd_ctrl_controllers(c))
		return NULL;
	return i ? c->sib[i - 1] : c;
}

bool ucmd_ctrl_is_new(struct ucmd_ctrl *c)
{
	return c->fresh;
}

void ctrl_test_sanitize_clock(struct ucmd_ctrl *c, uint64_t plan_ms, uint64_t ago_ms)
{
	pthread_mutex_lock(&c->lock);
	c->san.plan_ms = plan_ms;
	c->san.start_rt_ms = realtime_ms() - ago_ms;
	pthread_mutex_unlock(&c->lock);
}

void ctrl_test_knobs(struct ucmd_ctrl *c, uint64_t dst_short_ms, uint64_t dst_ext_ms,
		     bool sanitize_fail)
{
	pthread_mutex_lock(&c->lock);
	c->san.chunk = 4u << 20;	/* small namespaces take several passes */
	c->san.plan_ms = 3600000;
	c->dst.short_ms = dst_short_ms;
	c->dst.ext_ms = dst_ext_ms;
	c->san.fail_next = sanitize_fail;
	pthread_mutex_unlock(&c->lock);
}

int ucmd_ctrl_ns_create(struct ucmd_ctrl *c, const struct ucmd_ns_params *p)
{
	int ret;

	if (c->p.read_only)
		return -EROFS;
	pthread_mutex_lock(&c->lock);
	ret = ctrl_ns_add(c, p, 0);
	if (ret > 0)
		ctrl_persist(c);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

unsigned ucmd_ctrl_ns_count(struct ucmd_ctrl *c)
{
	unsigned n = 0;

	pthread_mutex_lock(&c->lock);
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		n += c->ns[i] != NULL;
	pthread_mutex_unlock(&c->lock);
	return n;
}

void ctrl_inject_delay(struct ucmd_ctrl *c, bool admin, uint8_t opcode, unsigned delay_ms)
{
	pthread_mutex_lock(&c->lock);
	c->delay_ms[admin ? 1 : 0][opcode] = delay_ms;
	pthread_mutex_unlock(&c->lock);
}

void ucmd_ctrl_get_stats(struct ucmd_ctrl *c, struct ucmd_ctrl_stats *st)
{
	pthread_mutex_lock(&c->db_lock);
	st->wakeups = c->wakeups;
	st->poll_hits = c->poll_hits;
	st->doorbells = c->doorbells;
	pthread_mutex_unlock(&c->db_lock);
	pthread_mutex_lock(&c->lock);
	st->commands = c->commands;
	st->interrupts = c->irqs;
	pthread_mutex_unlock(&c->lock);
}
