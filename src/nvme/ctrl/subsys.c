/* SPDX-License-Identifier: MIT */
/*
 * The NVM subsystem of a controller directory: controller 1 and, when the
 * state says so, controllers 2..N that share its namespaces (NMIC), each a
 * path a multipath host reaches: their own controller ID, registers,
 * queues, features, error log and events. What the subsystem holds (the
 * namespaces, the directory, sanitize, firmware, self-test) is controller
 * 1's and its lock guards it: another controller takes that lock for each
 * processing pass. Every controller is a port of its own in one ANA group,
 * always optimized (a local controller has no path to lose).
 */
#include <string.h>

#include "ctrl_int.h"

int ctrl_subsys_populate(struct ucmd_ctrl *c, unsigned n)
{
	/* the controllers made so far: what ctrl_subsys_free() undoes */
	c->nr_ctrls = 1;
	if (n < 1 || n > UCMD_CTRL_MAX_CONTROLLERS)
		return ctrl_ctrl_why(c, -EINVAL, "%u controllers: a subsystem has 1 to %u", n,
				     UCMD_CTRL_MAX_CONTROLLERS);
	/* FDP's endurance group and its events belong to one controller */
	if (n > 1 && c->fdp)
		return ctrl_ctrl_why(c, -EINVAL, "%u controllers with FDP: Flexible Data "
				     "Placement is offered by a subsystem of one controller", n);
	if (n > 1 && c->p.cntlid > 0xffef - (n - 1))
		return ctrl_ctrl_why(c, -EINVAL, "controller IDs from %u for %u controllers pass "
				     "FFEFh", c->p.cntlid, n);
	for (unsigned i = 1; i < n; i++) {
		int ret = ctrl_sibling_create(c, (uint16_t)(c->p.cntlid + i), &c->sib[i - 1]);

		if (ret)
			return ctrl_ctrl_why(c, ret, "creating controller %u of the subsystem",
					     i + 1);
		c->nr_ctrls = i + 1;
	}
	return 0;
}

void ctrl_subsys_free(struct ucmd_ctrl *c)
{
	for (unsigned i = c->nr_ctrls; i-- > 1;) {
		struct ucmd_ctrl *s = c->sib[i - 1];

		if (!s)
			continue;
		/* its thread first: then nothing of it reaches the namespaces */
		ctrl_thread_stop(s);
		memset(s->ns, 0, sizeof(s->ns));
		ucmd_ctrl_destroy(s);
		c->sib[i - 1] = NULL;
	}
	/* nr_ctrls stays: the final save of the state writes it */
}

void ctrl_subsys_enter(struct ucmd_ctrl *c)
{
	if (!c->primary)
		return;
	pthread_mutex_lock(&c->primary->lock);
	/* the table as controller 1 has it now (namespaces created or deleted) */
	memcpy(c->ns, c->primary->ns, sizeof(c->ns));
}

void ctrl_subsys_leave(struct ucmd_ctrl *c)
{
	if (c->primary)
		pthread_mutex_unlock(&c->primary->lock);
}

bool ctrl_subsys_cmd_allowed(struct ucmd_ctrl *c, const struct ctrl_req *req)
{
	if (!c->primary || req->sqid)
		return true;
	switch (req->cmd.opcode) {
	case nvme_admin_ns_mgmt:
	case nvme_admin_ns_attach:
	case nvme_admin_format_nvm:
	case nvme_admin_sanitize_nvm:
	case nvme_admin_fw_commit:
	case nvme_admin_fw_download:
	case nvme_admin_dev_self_test:
		return false;
	default:
		return true;
	}
}

void ctrl_subsys_id_ctrl(struct ucmd_ctrl *c, struct nvme_id_ctrl *id)
{
	if (!ctrl_multi(c))
		return;
	/* each controller its own port, several controllers, ANA reporting */
	id->cmic = NVME_CTRL_CMIC_MULTI_PORT | NVME_CTRL_CMIC_MULTI_CTRL |
		   NVME_CTRL_CMIC_MULTI_ANA_REPORTING;
	id->anatt = UCMD_ANATT;
	/* optimized is the only state it reports */
	id->anacap = NVME_CTRL_ANACAP_OPT;
	id->anagrpmax = htole32(UCMD_ANAGRPID);
	id->nanagrpid = htole32(UCMD_ANAGRPID);
}

void ctrl_subsys_id_ns(struct ucmd_ctrl *c, struct nvme_id_ns *id)
{
	if (!ctrl_multi(c))
		return;
	id->nmic = NVME_NS_NMIC_SHARED;
	id->anagrpid = htole32(UCMD_ANAGRPID);
}

void ctrl_subsys_ctrl_list(struct ucmd_ctrl *c, uint16_t from, struct nvme_ctrl_list *l)
{
	struct ucmd_ctrl *p = ctrl_primary(c);
	unsigned n = 0, nr = p->nr_ctrls ? p->nr_ctrls : 1;

	for (unsigned i = 0; i < nr; i++) {
		uint16_t id = (uint16_t)(p->p.cntlid + i);

		if (id >= from)
			l->identifier[n++] = htole16(id);
	}
	l->num = htole16((uint16_t)n);
}

bool ctrl_subsys_ana_log_size(struct ucmd_ctrl *c, size_t *size)
{
	if (!ctrl_multi(c))
		return false;
	*size = sizeof(struct nvme_ana_log) + sizeof(struct nvme_ana_group_desc) +
		UCMD_MAX_NS * sizeof(uint32_t);
	return true;
}

void ctrl_subsys_ana_log(struct ucmd_ctrl *c, uint32_t cdw10, uint8_t *buf, size_t size)
{
	struct nvme_ana_log *h = (void *)buf;
	struct nvme_ana_group_desc *d = (void *)(buf + sizeof(*h));
	/* LSP bit 0, Return Groups Only: the descriptors without their NSIDs */
	bool rgo = cdw10 & (1u << 8);
	uint32_t nn = 0;

	(void)size;
	h->ngrps = htole16(1);
	d->grpid = htole32(UCMD_ANAGRPID);
	d->state = NVME_ANA_STATE_OPTIMIZED;
	for (uint32_t i = 1; i <= UCMD_MAX_NS && !rgo; i++)
		if (c->ns[i] && c->ns[i]->attached)
			d->nsids[nn++] = htole32(i);
	d->nnsids = htole32(nn);
}
