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
#include <sys/stat.h>
#include <time.h>

#include "ctrl_int.h"
#include "lib/error.h"

static void *identity_map(const struct ucmd_dma *dma, uint64_t addr, uint64_t len)
{
	(void)dma;
	/* Address 0 is never host memory the device may touch. */
	if (!addr || addr + len < addr)
		return NULL;
	return (void *)(uintptr_t)addr;
}

const struct ucmd_dma ucmd_dma_identity = { .map = identity_map };

static char *dup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
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
	c->dma = dma ? dma : &ucmd_dma_identity;
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
	if (p->dir)
		c->dir = strdup(p->dir);
	c->serial = dup_or(p->serial, "UCMD0001");
	c->model = dup_or(p->model, "ucmd emulated NVMe controller");
	c->firmware = dup_or(p->firmware, "0.1");
	if (!c->sq || !c->cq || !c->db_val || !c->db_dirty || !c->cq_waiting || (p->dir && !c->dir) ||
	    !c->serial || !c->model || !c->firmware) {
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

	if (nvmet_dir_find_image(c, img, sizeof(img)))
		return nvmet_ctrl_why(c, -EUCLEAN,
				      "%s has namespace images (%s) but no ctrl.json: nothing was "
				     "changed; restore ctrl.json from a backup, or remove the images "
				     "(%s/ns*.img) yourself to start over", c->dir, img, c->dir);
	if (c->p.read_only)
		return nvmet_ctrl_why(c, -ENOENT, "%s has no ctrl.json: no controller to open "
				      "read-only", c->dir);
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
	ret = nvmet_state_check_identity(c);
	if (ret)
		goto fail;
	c->created_ns = ktime_get_ns();
	nvmet_features_defaults(&c->cur);
	c->saved = c->cur;
	c->cap = (uint64_t)c->p.mqes |
		 (1ull << 16) |			/* CQR: queues physically contiguous */
		 (30ull << 24) |		/* TO: 15 s in 500 ms units */
		 (0ull << 32) |			/* DSTRD 0 */
		 ((1ull | (1ull << 6)) << 37) |	/* CSS: NVM, I/O command sets */
		 (0ull << 48) | (0ull << 52);	/* MPSMIN = MPSMAX = 4 KiB */
	c->nsqa = c->ncqa = (uint16_t)(c->qmax - 1);

	if (c->dir) {
		ret = nvmet_dir_open(c);
		if (!ret)
			ret = nvmet_persist_load(c, &found);
		if (!ret && !found)
			ret = no_state(c);
		if (ret)
			goto fail;
	}
	c->cur = c->saved;
	c->smart.power_cycles++;
	if (c->dir && !c->p.read_only) {
		/* Marks the state "in use" so that a crash counts as unsafe. */
		ret = nvmet_persist_save(c, false);
		if (ret) {
			nvmet_ctrl_why(c, ret, "cannot write %s/ctrl.json: %s (open it read-only "
				      "to read from a full or read-only directory)", c->dir,
				      strerror(-ret));
			goto fail;
		}
	}
	if (c->p.mode == UCMD_CTRL_THREAD) {
		ret = nvmet_thread_start(c);
		if (ret)
			goto fail;
	}
	c->up = true;
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

void ucmd_ctrl_destroy(struct ucmd_ctrl *c)
{
	if (!c)
		return;
	nvmet_thread_stop(c);
	if (c->sq && c->cq) {
		pthread_mutex_lock(&c->lock);
		nvmet_ctrl_reset_locked(c);
		for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
			if (c->ns[i] && c->ns[i]->st)
				c->ns[i]->st->ops->flush(c->ns[i]->st);
		/* a controller that failed to come up never writes: it changes nothing */
		if (c->up && c->dir && !c->persist_failed && !c->p.read_only)
			nvmet_persist_save(c, true);
		pthread_mutex_unlock(&c->lock);
	}
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i])
			nvmet_ns_free(c, c->ns[i], false);
	nvmet_dir_close(c);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->db_lock);
	pthread_rwlock_destroy(&c->irq_lock);
	pthread_cond_destroy(&c->db_cond);
	nvmet_journal_close(c);
	free(c->req_spare);
	free(c->iov_spare);
	free(c->sq);
	free(c->cq);
	free(c->db_val);
	free(c->db_dirty);
	free(c->cq_waiting);
	free(c->dir);
	free(c->serial);
	free(c->model);
	free(c->firmware);
	free(c);
}

int ucmd_ctrl_ns_create(struct ucmd_ctrl *c, const struct ucmd_ns_params *p)
{
	int ret;

	if (c->p.read_only)
		return -EROFS;
	pthread_mutex_lock(&c->lock);
	ret = nvmet_ns_add(c, p, 0);
	if (ret > 0)
		nvmet_persist(c);
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

void ucmd_ctrl_inject_delay(struct ucmd_ctrl *c, bool admin, uint8_t opcode, unsigned delay_ms)
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
