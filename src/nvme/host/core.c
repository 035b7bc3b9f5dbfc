/* SPDX-License-Identifier: MIT */
/*
 * Controller bring-up beyond the registers (Identify, the Commands Supported
 * and Effects log, I/O queues), namespace scan, and the engine devices:
 * nvmeX, ngXnY and nvmeXnY: what Linux's nvme-core does for every
 * transport, reaching the controller only through the transport's ops
 * (struct nvme_ctrl_ops), given when the transport attaches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <endian.h>
#include "lib/error.h"
#include "host.h"

int nvme_reg_read32(struct nvme_host *h, uint32_t off, uint32_t *val)
{
	return h->ops->reg_read32(h, off, val);
}

int nvme_reg_read64(struct nvme_host *h, uint32_t off, uint64_t *val)
{
	return h->ops->reg_read64(h, off, val);
}

int nvme_reg_write32(struct nvme_host *h, uint32_t off, uint32_t val)
{
	return h->ops->reg_write32(h, off, val);
}

static void nvme_sleep_us(unsigned us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	nanosleep(&ts, NULL);
}

/* CSTS.RDY follows CC.EN; the spec bounds the wait by CAP.TO (500 ms units). */
int nvme_wait_ready(struct nvme_host *h, bool enabled)
{
	uint64_t cap;
	unsigned to_ms;
	int ret = nvme_reg_read64(h, UCMD_NVME_REG_CAP, &cap);

	if (ret)
		return ret;
	to_ms = (unsigned)((cap >> 24) & 0xff) * 500u + 500u;
	for (unsigned waited = 0; waited <= to_ms * 10; waited++) {
		uint32_t csts;

		ret = nvme_reg_read32(h, UCMD_NVME_REG_CSTS, &csts);
		if (ret)
			return ret;
		if (csts & UCMD_NVME_CSTS_CFS)
			return -EIO;
		if (!!(csts & UCMD_NVME_CSTS_RDY) == enabled)
			return 0;
		nvme_sleep_us(100);
	}
	return -ETIMEDOUT;
}

/* Linux's nvme_enable_ctrl: queue entry sizes, NVM command set, 4 KiB pages, EN. */
int nvme_enable_ctrl(struct nvme_host *h)
{
	uint64_t cap;
	uint32_t mqes;
	int ret = nvme_reg_read64(h, UCMD_NVME_REG_CAP, &cap);

	if (ret)
		return ret;
	mqes = (uint32_t)(cap & 0xffff) + 1;
	if (h->opts.queue_depth + 1 > mqes)
		h->opts.queue_depth = mqes - 1;
	/* IOCQES 16 bytes (4), IOSQES 64 bytes (6), NVM command set, 4 KiB pages */
	h->ctrl_config = 4u << 20 | 6u << 16 | UCMD_NVME_CC_EN;
	ret = nvme_reg_write32(h, UCMD_NVME_REG_CC, h->ctrl_config);
	if (!ret)
		ret = nvme_wait_ready(h, true);
	if (!ret)
		h->queues[0].live = true;
	return ret;
}

/* Normal shutdown notification first, then disable (a gone controller: nothing to do). */
static void nvme_shutdown_ctrl(struct nvme_host *h)
{
	uint32_t cc;

	if (nvme_reg_read32(h, UCMD_NVME_REG_CC, &cc))
		return;
	if (nvme_reg_write32(h, UCMD_NVME_REG_CC, cc | 1u << UCMD_NVME_CC_SHN_SHIFT) ||
	    nvme_reg_write32(h, UCMD_NVME_REG_CC, 0))
		return;
	nvme_wait_ready(h, false);
}

uint32_t nvme_command_effects(struct nvme_host *h, bool admin, uint8_t opcode)
{
	if (!h->effects)
		return 0;
	return le32toh(admin ? h->effects->acs[opcode] : h->effects->iocs[opcode]);
}

/*
 * Effects the driver knows whatever the log says (Linux's
 * nvme_init_known_nvm_effects): format and sanitize change everything,
 * the basic NVM data commands are supported, writes change LBA contents.
 */
static void nvme_init_known_effects(struct nvme_cmd_effects_log *log)
{
	log->acs[nvme_admin_format_nvm] |= htole32(NVME_CMD_EFFECTS_LBCC | NVME_CMD_EFFECTS_NCC |
						   NVME_CMD_EFFECTS_CSE_MASK);
	log->acs[nvme_admin_sanitize_nvm] |= htole32(NVME_CMD_EFFECTS_LBCC |
						     NVME_CMD_EFFECTS_CSE_MASK);
	log->acs[nvme_admin_security_recv] &= htole32(~(uint32_t)NVME_CMD_EFFECTS_CSE_MASK);
	log->iocs[nvme_cmd_read] |= htole32(NVME_CMD_EFFECTS_CSUPP);
	log->iocs[nvme_cmd_write] |= htole32(NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC);
	log->iocs[nvme_cmd_write_zeroes] |= htole32(NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC);
	log->iocs[nvme_cmd_write_uncor] |= htole32(NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC);
}

static void *page_alloc(size_t len)
{
	void *p = aligned_alloc(NVME_PAGE_SIZE, (len + NVME_PAGE_SIZE - 1) & ~(size_t)4095);

	if (p)
		memset(p, 0, len);
	return p;
}

static int nvme_identify(struct nvme_host *h, uint8_t cns, uint32_t nsid, void *buf)
{
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_identify, .nsid = nsid };
	int st;

	c.cdw10 = cns;
	st = nvme_submit_sync_cmd(h, &c, buf, NVME_IDENTIFY_DATA_SIZE, NULL);
	return st > 0 ? -EIO : st;
}

/*
 * The effects of the Zoned Namespace Command Set's own I/O opcodes (the log
 * with CSI 02h), for the opcodes the NVM log does not name. Linux keeps one
 * log per command set and judges a namespace's commands by its set's; the
 * opcodes only mean something on a zoned namespace (an NVM one rejects them
 * with Invalid Opcode), so one merged table judges every command as Linux
 * would. A controller without the set fails the log: nothing is added.
 */
static void nvme_merge_zns_effects(struct nvme_host *h, struct ucmd_nvme_sqe *c)
{
	struct nvme_cmd_effects_log *z = page_alloc(sizeof(*z));

	if (!z)
		return;
	c->cdw14 = (uint32_t)NVME_CSI_ZNS << 24;
	if (!nvme_submit_sync_cmd(h, c, z, sizeof(*z), NULL))
		for (unsigned op = 0; op < 256; op++)
			if (!h->effects->iocs[op])
				h->effects->iocs[op] = z->iocs[op];
	free(z);
}

static int nvme_read_effects(struct nvme_host *h)
{
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_get_log_page };
	uint32_t numd = sizeof(struct nvme_cmd_effects_log) / 4 - 1;

	h->effects = page_alloc(sizeof(*h->effects));
	if (!h->effects)
		return -ENOMEM;
	if (h->id->lpa & NVME_CTRL_LPA_CMD_EFFECTS) {
		c.cdw10 = NVME_LOG_LID_CMD_EFFECTS | (numd & 0xffff) << 16;
		c.cdw11 = numd >> 16;
		/* A controller that fails the log just gets the known effects. */
		if (nvme_submit_sync_cmd(h, &c, h->effects, sizeof(*h->effects), NULL))
			memset(h->effects, 0, sizeof(*h->effects));
		else
			nvme_merge_zns_effects(h, &c);
	}
	nvme_init_known_effects(h->effects);
	return 0;
}

static int nvme_alloc_ns(struct nvme_host *h, uint32_t nsid, const struct nvme_id_ns *id)
{
	struct nvme_ns *ns = calloc(1, sizeof(*ns));
	uint8_t idx = (uint8_t)((id->flbas & NVME_NS_FLBAS_LOWER_MASK) |
				((id->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 5) << 4);

	if (!ns)
		return -ENOMEM;
	ns->host = h;
	ns->nsid = nsid;
	ns->nsze = le64toh(id->nsze);
	ns->lba_shift = id->lbaf[idx].ds;
	ns->ms = le16toh(id->lbaf[idx].ms);
	ns->ext = ns->ms && (id->flbas & NVME_NS_FLBAS_META_EXT);
	if (ns->lba_shift < 9 || ns->lba_shift > 16) {
		free(ns);
		return -EINVAL;
	}
	nvme_ns_pi(h, ns, id, idx);
	if (nvme_ns_query_csi(h, ns, idx) == -ENOMEM) {
		free(ns);
		return -ENOMEM;
	}
	blk_mq_init_queue(&ns->q, &h->io_set, ns);
	blk_mq_init_queue(&ns->pq, h->opts.nr_poll_queues ? &h->poll_set : &h->io_set, ns);
	ns->q.stats = ns->pq.stats = &ns->stats;
	snprintf(ns->ng_name, sizeof(ns->ng_name), "ng%un%u", h->opts.instance, nsid);
	snprintf(ns->blk_name, sizeof(ns->blk_name), "nvme%un%u", h->opts.instance, nsid);
	h->ns[h->nr_ns++] = ns;
	return 0;
}

static int nvme_scan_ns(struct nvme_host *h)
{
	uint32_t *list = page_alloc(NVME_IDENTIFY_DATA_SIZE);
	struct nvme_id_ns *id = page_alloc(NVME_IDENTIFY_DATA_SIZE);
	int ret = -ENOMEM;

	if (!list || !id)
		goto out;
	ret = nvme_identify(h, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list);
	if (ret == -EIO) {
		/*
		 * Linux's nvme_scan_ns_sequential: a controller that will not
		 * list its namespaces (a fabrics target whose policy refuses
		 * the list to this host, as Linux's own rules refuse it to
		 * the unprivileged) is asked about each of 1..NN instead.
		 */
		uint32_t nn = le32toh(h->id->nn);

		if (nn > NVME_IDENTIFY_DATA_SIZE / 4)
			nn = NVME_IDENTIFY_DATA_SIZE / 4;
		memset(list, 0, NVME_IDENTIFY_DATA_SIZE);
		for (uint32_t i = 0; i < nn; i++)
			list[i] = htole32(i + 1);
		ret = 0;
	}
	if (ret)
		goto out;
	h->ns = calloc(NVME_IDENTIFY_DATA_SIZE / 4, sizeof(*h->ns));
	if (!h->ns) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < NVME_IDENTIFY_DATA_SIZE / 4 && list[i]; i++) {
		uint32_t nsid = le32toh(list[i]);

		memset(id, 0, sizeof(*id));
		if (nvme_identify(h, NVME_IDENTIFY_CNS_NS, nsid, id) || !id->nsze)
			continue;	/* a namespace that will not identify is skipped */
		ret = nvme_alloc_ns(h, nsid, id);
		if (ret == -ENOMEM)
			goto out;
	}
	ret = 0;
out:
	free(list);
	free(id);
	return ret;
}

/* Identify Namespace's geometry into ns; false if it does not describe one we can use. */
static bool nvme_ns_geometry(struct nvme_ns *ns, const struct nvme_id_ns *id)
{
	uint8_t idx = (uint8_t)((id->flbas & NVME_NS_FLBAS_LOWER_MASK) |
				((id->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 5) << 4);

	if (!id->nsze || id->lbaf[idx].ds < 9 || id->lbaf[idx].ds > 16)
		return false;
	ns->nsze = le64toh(id->nsze);
	ns->lba_shift = id->lbaf[idx].ds;
	ns->ms = le16toh(id->lbaf[idx].ms);
	ns->ext = ns->ms && (id->flbas & NVME_NS_FLBAS_META_EXT);
	nvme_ns_pi(ns->host, ns, id, idx);
	return true;
}

static struct nvme_ns *nvme_find_ns(struct nvme_host *h, uint32_t nsid)
{
	for (unsigned i = 0; i < h->nr_ns; i++)
		if (!h->ns[i]->gone && h->ns[i]->nsid == nsid)
			return h->ns[i];
	return NULL;
}

static bool in_list(const uint32_t *list, uint32_t nsid)
{
	for (unsigned i = 0; i < NVME_IDENTIFY_DATA_SIZE / 4 && list[i]; i++)
		if (le32toh(list[i]) == nsid)
			return true;
	return false;
}

static void nvme_ns_unlink(struct nvme_host *h, struct nvme_ns *ns)
{
	ns->gone = true;
	if (h->ns_hidden)
		return;	/* never registered: the names are the head's */
	engine_unlink_device(h->engine, ns->ng_name);
	engine_unlink_device(h->engine, ns->blk_name);
}

/* ngXnY always; nvmeXnY unless Linux would hide the disk (zns.c). */
static int nvme_ns_add_devices(struct nvme_host *h, struct nvme_ns *ns)
{
	int ret;

	if (h->ns_hidden)
		return 0;
	ret = engine_add_device(h->engine, ns->ng_name, &nvme_ns_chr_fops, ns);

	if (!ret && !ns->no_bdev)
		ret = engine_add_device(h->engine, ns->blk_name, &nvme_bdev_fops, ns);
	return ret;
}

int nvme_rescan(struct nvme_host *h)
{
	uint32_t *list = page_alloc(NVME_IDENTIFY_DATA_SIZE);
	struct nvme_id_ns *id = page_alloc(NVME_IDENTIFY_DATA_SIZE);
	int ret = -ENOMEM;

	if (!list || !id)
		goto out;
	pthread_mutex_lock(&h->scan_lock);
	ret = nvme_identify(h, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list);
	if (ret)
		goto unlock;
	for (unsigned i = 0; i < h->nr_ns; i++) {
		struct nvme_ns *ns = h->ns[i];

		if (ns->gone)
			continue;
		memset(id, 0, sizeof(*id));
		if (in_list(list, ns->nsid) && !nvme_identify(h, NVME_IDENTIFY_CNS_NS, ns->nsid, id) &&
		    nvme_ns_geometry(ns, id))
			continue;
		nvme_ns_unlink(h, ns);
	}
	for (unsigned i = 0; i < NVME_IDENTIFY_DATA_SIZE / 4 && list[i]; i++) {
		uint32_t nsid = le32toh(list[i]);
		struct nvme_ns *ns;

		if (nvme_find_ns(h, nsid) || h->nr_ns == NVME_IDENTIFY_DATA_SIZE / 4)
			continue;
		memset(id, 0, sizeof(*id));
		if (nvme_identify(h, NVME_IDENTIFY_CNS_NS, nsid, id) || !id->nsze ||
		    nvme_alloc_ns(h, nsid, id))
			continue;
		ns = h->ns[h->nr_ns - 1];
		if (!h->devices_added)
			continue;
		if (nvme_ns_add_devices(h, ns))
			nvme_ns_unlink(h, ns);
	}
	ret = 0;
unlock:
	pthread_mutex_unlock(&h->scan_lock);
out:
	free(list);
	free(id);
	return ret;
}

void nvme_passthru_end(struct nvme_host *h, uint8_t opcode)
{
	if (nvme_command_effects(h, true, opcode) & (NVME_CMD_EFFECTS_NIC | NVME_CMD_EFFECTS_NCC))
		nvme_rescan(h);
}

static int nvme_add_devices(struct nvme_host *h)
{
	int ret = engine_add_device(h->engine, h->name, &nvme_dev_fops, h);

	if (ret)
		return ret;
	h->devices_added = true;
	for (unsigned i = 0; i < h->nr_ns; i++) {
		ret = nvme_ns_add_devices(h, h->ns[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static void nvme_remove_devices(struct nvme_host *h)
{
	if (!h->devices_added)
		return;
	for (unsigned i = 0; i < h->nr_ns && !h->ns_hidden; i++) {
		engine_remove_device(h->engine, h->ns[i]->ng_name);
		if (!h->ns[i]->no_bdev)
			engine_remove_device(h->engine, h->ns[i]->blk_name);
	}
	engine_remove_device(h->engine, h->name);
	h->devices_added = false;
}

static int nvme_init_admin(struct nvme_host *h)
{
	struct blk_mq_tag_set *set = &h->admin_set;

	set->ops = h->ops->admin_mq_ops;
	set->nr_hw_queues = 1;
	/* One SQ slot stays empty so the SQ never looks empty when full. */
	set->queue_depth = NVME_ADMIN_DEPTH - 1;
	set->cmd_size = sizeof(struct nvme_request);
	set->driver_data = &h->queues[0];
	set->timeout_ms = h->admin_timeout_ms;
	blk_mq_init_queue(&h->admin_q, set, NULL);
	return blk_mq_alloc_tag_set(set);
}

/*
 * Linux's nvme_enable_aen(): turn on the asynchronous event notices the
 * controller supports and the driver understands (namespace attribute,
 * firmware activation, ANA, discovery log changes). Linux then keeps an
 * Async Event Request outstanding; this driver does not yet rescan on
 * events, so it sends none (docs/compat.md).
 */
int nvme_enable_aen(struct nvme_host *h)
{
	const uint32_t known = NVME_CTRL_OAES_NA | NVME_CTRL_OAES_FA | NVME_CTRL_OAES_ANA |
			       NVME_CTRL_OAES_DL;
	uint32_t aens = le32toh(h->id->oaes) & known;
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_set_features };

	if (!aens)
		return 0;
	c.cdw10 = NVME_FEAT_FID_ASYNC_EVENT;
	c.cdw11 = aens;
	int st = nvme_submit_sync_cmd(h, &c, NULL, 0, NULL);
	/* a controller that refuses leaves events off; Linux only warns too */
	return st < 0 ? st : 0;
}

int nvme_host_start(struct nvme_host *h)
{
	int ret;

	pthread_mutex_init(&h->scan_lock, NULL);
	if (!h->opts.nr_io_queues)
		h->opts.nr_io_queues = 2;
	if (!h->opts.queue_depth)
		h->opts.queue_depth = 64;
	if (h->opts.queue_depth < 2)
		h->opts.queue_depth = 2;
	if (h->opts.queue_depth > NVME_TAG_MASK)
		h->opts.queue_depth = NVME_TAG_MASK;
	snprintf(h->name, sizeof(h->name), "nvme%u", h->opts.instance);
	h->queues = calloc(1 + h->opts.nr_io_queues + h->opts.nr_poll_queues, sizeof(*h->queues));
	h->id = page_alloc(sizeof(*h->id));
	if (!h->queues || !h->id)
		return -ENOMEM;
	/*
	 * The admin tag set before the queue, as Linux's nvme-tcp allocates
	 * it before nvme_tcp_start_queue(): a fabrics transport starts
	 * threads there (the receiver, the keep-alive) that allocate and look
	 * up admin requests, so the set they use must exist before they do;
	 * pthread_create() then orders its writes before their reads.
	 */
	ret = nvme_init_admin(h);
	if (ret)
		return ret;
	ret = h->ops->setup_admin_queue(h);
	if (ret)
		return ret;
	h->nr_queues = 1;
	h->regs_ok = true;
	ret = nvme_enable_ctrl(h);
	if (!ret)
		ret = nvme_identify(h, NVME_IDENTIFY_CNS_CTRL, 0, h->id);
	if (ret)
		return ret;
	h->max_hw_bytes = h->id->mdts ? NVME_PAGE_SIZE << h->id->mdts : 0;
	h->sgl_supported = (le32toh(h->id->sgls) & NVME_CTRL_SGLS_SUPPORTED) != 0;
	ret = nvme_read_effects(h);
	if (!ret)
		ret = nvme_enable_aen(h);
	if (!ret)
		ret = nvme_create_io_queues(h);
	if (!ret)
		ret = nvme_scan_ns(h);
	if (!ret)
		ret = nvme_add_devices(h);
	return ret;
}

void nvme_init_ctrl(struct nvme_host *h, struct ucmd_engine *e,
		    const struct nvme_ctrl_ops *ops, const struct ucmd_nvme_host_opts *opts)
{
	h->engine = e;
	h->ops = ops;
	if (opts)
		h->opts = *opts;
}

void nvme_host_free(struct nvme_host *h)
{
	nvme_remove_devices(h);
	if (h->ops->disconnect)
		h->ops->disconnect(h);
	/* A transport whose admin queue is gone fails the accesses at once. */
	if (h->regs_ok)
		nvme_shutdown_ctrl(h);
	if (h->queues && h->ops->stop_queues)
		h->ops->stop_queues(h);
	nvme_cancel_inflight(h);
	blk_mq_free_tag_set(&h->poll_set);
	blk_mq_free_tag_set(&h->io_set);
	blk_mq_free_tag_set(&h->admin_set);
	for (unsigned i = 0; h->queues && i <= h->opts.nr_io_queues + h->opts.nr_poll_queues; i++) {
		struct nvme_queue *q = &h->queues[i];

		if (!q->host)
			continue;	/* never set up */
		h->ops->free_queue(q);
		pthread_mutex_destroy(&q->sq_lock);
		pthread_mutex_destroy(&q->cq_lock);
	}
	for (unsigned i = 0; i < h->nr_ns; i++)
		free(h->ns[i]);
	free(h->ns);
	free(h->queues);
	free(h->effects);
	free(h->id);
	/* last: the transport's controller holds h */
	h->ops->free_ctrl(h);
}

int nvme_reset_ctrl(struct nvme_host *h)
{
	bool idle = false;
	int ret;

	if (!h->ops->reset)
		return -ENOTTY;
	if (!atomic_compare_exchange_strong(&h->resetting, &idle, true))
		return -EBUSY;
	ret = h->ops->reset(h);
	atomic_store(&h->resetting, false);
	return ret;
}

int ucmd_nvme_reset(struct ucmd_nvme_host *host)
{
	if (!host)
		return -EINVAL;
	return nvme_reset_ctrl((struct nvme_host *)host);
}

void ucmd_nvme_detach(struct ucmd_nvme_host *host)
{
	if (host)
		nvme_host_free((struct nvme_host *)host);
}

int ucmd_nvme_queue_stats(struct ucmd_nvme_host *host, unsigned qid, unsigned long *dispatched,
			  unsigned long *batches)
{
	struct nvme_host *h = (struct nvme_host *)host;

	if (!h || qid >= h->nr_queues || !h->queues[qid].hctx)
		return -EINVAL;
	*dispatched = atomic_load(&h->queues[qid].hctx->nr_dispatched);
	*batches = atomic_load(&h->queues[qid].hctx->nr_batches);
	return 0;
}
