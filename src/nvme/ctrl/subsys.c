/* SPDX-License-Identifier: MIT */
/*
 * The NVM subsystem of a controller directory: controller 1 and, when the
 * state says so, controllers 2..N that share its namespaces (NMIC), each a
 * path a multipath host reaches: their own controller ID, registers,
 * queues, features, error log and events. What the subsystem holds (the
 * namespaces, the directory, sanitize, firmware, self-test) is controller
 * 1's and its lock guards it: another controller takes that lock for each
 * processing pass. Every controller is a port of its own in one ANA group,
 * whose state the owner sets (ucmd_ctrl_ana_state, as nvmet's configfs
 * ana_state): optimized at first, kept in ctrl.json.
 *
 * What one controller does for another (a namespace attached through
 * controller 2 to controller 3, an ANA change) is left in the other's
 * structure under controller 1's lock and delivered by its next pass
 * (ctrl_subsys_notices), which the first one asks for once its own locks
 * are released (ctrl_subsys_kick): a controller's lock is never taken
 * while controller 1's is held.
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
	if (n > 1 && c->p.cntlid > 0xffef - (n - 1))
		return ctrl_ctrl_why(c, -EINVAL, "controller IDs from %u for %u controllers pass "
				     "FFEFh", c->p.cntlid, n);
	for (unsigned i = 0; i < n; i++)
		if (!c->ana_state[i])	/* not in the loaded state: a new one */
			c->ana_state[i] = NVME_ANA_STATE_OPTIMIZED;
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
		/* its counters for the final save, which comes after it */
		c->sib_smart[i - 1] = s->smart;
		memcpy(c->sib_err[i - 1].e, s->errlog, sizeof(s->errlog));
		c->sib_err[i - 1].count = s->error_count;
		memset(s->ns, 0, sizeof(s->ns));
		ucmd_ctrl_destroy(s);
		c->sib[i - 1] = NULL;
	}
	/* nr_ctrls stays: the final save of the state writes it */
}

void ctrl_subsys_smart(struct ucmd_ctrl *c, struct ctrl_smart *sum, uint64_t *errors)
{
	struct ucmd_ctrl *p = ctrl_primary(c);
	unsigned n = p->nr_ctrls ? p->nr_ctrls : 1;

	memset(sum, 0, sizeof(*sum));
	*errors = 0;
	for (unsigned i = 0; i < n; i++) {
		struct ucmd_ctrl *x = i ? p->sib[i - 1] : p;

		if (!x)
			continue;
		sum->units_read_512 += x->smart.units_read_512;
		sum->units_written_512 += x->smart.units_written_512;
		sum->host_reads += x->smart.host_reads;
		sum->host_writes += x->smart.host_writes;
		sum->media_errors += x->smart.media_errors;
		*errors += x->error_count;
	}
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
	/* namespace management, Format and Sanitize change the subsystem's state from any */
	switch (req->cmd.opcode) {
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
	id->oaes = htole32(le32toh(id->oaes) | NVME_CTRL_OAES_ANA);
	id->anatt = UCMD_ANATT;
	/* every state the owner may set (nvmet's) */
	id->anacap = NVME_CTRL_ANACAP_OPT | NVME_CTRL_ANACAP_NON_OPT |
		     NVME_CTRL_ANACAP_INACCESSIBLE | NVME_CTRL_ANACAP_PERSISTENT_LOSS |
		     NVME_CTRL_ANACAP_CHANGE;
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

void ctrl_subsys_ctrl_list(struct ucmd_ctrl *c, uint16_t from, uint8_t mask,
			   struct nvme_ctrl_list *l)
{
	struct ucmd_ctrl *p = ctrl_primary(c);
	unsigned n = 0, nr = p->nr_ctrls ? p->nr_ctrls : 1;

	for (unsigned i = 0; i < nr; i++) {
		uint16_t id = (uint16_t)(p->p.cntlid + i);

		if (id >= from && (mask & (1u << i)))
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
	h->chgcnt = htole64(ctrl_primary(c)->ana_chgcnt);
	h->ngrps = htole16(1);
	d->grpid = htole32(UCMD_ANAGRPID);
	d->chgcnt = h->chgcnt;
	d->state = ctrl_primary(c)->ana_state[c->idx];
	for (uint32_t i = 1; i <= UCMD_MAX_NS && !rgo; i++)
		if (ctrl_ns_active(c, i))
			d->nsids[nn++] = htole32(i);
	d->nnsids = htole32(nn);
}

uint16_t ctrl_subsys_ana_io(struct ucmd_ctrl *c, const struct ctrl_req *req)
{
	uint32_t nsid = req->cmd.nsid;

	/* a namespace not active here gets the command's own answer */
	if (!ctrl_multi(c) || (nsid != 0xffffffffu && !ctrl_ns_active(c, nsid)))
		return 0;
	/* path errors without DNR: a multipath host retries on another path (nvmet's) */
	switch (ctrl_primary(c)->ana_state[c->idx]) {
	case NVME_ANA_STATE_INACCESSIBLE:
		return UCMD_SC(NVME_SCT_PATH, NVME_SC_ANA_INACCESSIBLE);
	case NVME_ANA_STATE_PERSISTENT_LOSS:
		return UCMD_SC(NVME_SCT_PATH, NVME_SC_ANA_PERSISTENT_LOSS);
	case NVME_ANA_STATE_CHANGE:
		return UCMD_SC(NVME_SCT_PATH, NVME_SC_ANA_TRANSITION);
	}
	return 0;
}

void ctrl_subsys_notices(struct ucmd_ctrl *c)
{
	/* each only when its host enabled it (Asynchronous Event Configuration) */
	if (c->ana_notice && (c->cur.async_event & NVME_CTRL_OAES_ANA))
		ctrl_event(c, NVME_AER_NOTICE, NVME_AER_NOTICE_ANA, NVME_LOG_LID_ANA);
	if (c->ns_notice && (c->cur.async_event & NVME_CTRL_OAES_NA))
		ctrl_event(c, NVME_AER_NOTICE, NVME_AER_NOTICE_NS_CHANGED,
			    NVME_LOG_LID_CHANGED_NS);
	c->ana_notice = c->ns_notice = false;
}

static struct ucmd_ctrl *controller(struct ucmd_ctrl *p, unsigned i)
{
	return i ? p->sib[i - 1] : p;
}

void ctrl_subsys_ns_changed(struct ucmd_ctrl *c, struct ucmd_ctrl *x, uint32_t nsid)
{
	if (x == c) {
		ctrl_ns_changed(c, nsid);
		return;
	}
	/* x's Changed Namespace List and notice are under controller 1's lock too */
	ctrl_ns_changed_note(x, nsid);
	x->ns_notice = true;
	ctrl_primary(c)->kick |= ctrl_bit(x);
}

void ctrl_subsys_ns_changed_all(struct ucmd_ctrl *c, uint8_t attached, uint32_t nsid)
{
	struct ucmd_ctrl *p = ctrl_primary(c);

	for (unsigned i = 0; i < UCMD_CTRL_MAX_CONTROLLERS; i++)
		if ((attached & (1u << i)) && i < (p->nr_ctrls ? p->nr_ctrls : 1) &&
		    controller(p, i))
			ctrl_subsys_ns_changed(c, controller(p, i), nsid);
}

uint8_t ctrl_subsys_kick_take(struct ucmd_ctrl *c)
{
	struct ucmd_ctrl *p = ctrl_primary(c);
	uint8_t m = p->kick;

	p->kick = 0;
	return (uint8_t)(m & ~ctrl_bit(c));
}

void ctrl_subsys_kick(struct ucmd_ctrl *c, uint8_t mask)
{
	struct ucmd_ctrl *p = ctrl_primary(c);

	/* the controllers live as long as controller 1: nothing frees them meanwhile */
	for (unsigned i = 0; i < UCMD_CTRL_MAX_CONTROLLERS; i++)
		if ((mask & (1u << i)) && i < p->nr_ctrls && controller(p, i))
			ctrl_wake(controller(p, i));
}

static bool ana_state_valid(unsigned state)
{
	return state == NVME_ANA_STATE_OPTIMIZED || state == NVME_ANA_STATE_NONOPTIMIZED ||
	       state == NVME_ANA_STATE_INACCESSIBLE || state == NVME_ANA_STATE_PERSISTENT_LOSS ||
	       state == NVME_ANA_STATE_CHANGE;
}

int ucmd_ctrl_ana_state(struct ucmd_ctrl *c, unsigned grpid, unsigned state)
{
	struct ucmd_ctrl *p;
	bool changed = false;
	int ret;

	if (!c || grpid != UCMD_ANAGRPID || (state && !ana_state_valid(state)))
		return -EINVAL;
	if (!ctrl_multi(c))
		return -EOPNOTSUPP;	/* no ANA reporting: CMIC says so */
	p = ctrl_primary(c);
	if (state && p->p.read_only)
		return -EROFS;
	pthread_mutex_lock(&p->lock);
	if (state && p->ana_state[c->idx] != state) {
		p->ana_state[c->idx] = (uint8_t)state;
		p->ana_chgcnt++;
		c->ana_notice = true;
		changed = true;
		ctrl_persist(p);
	}
	ret = p->ana_state[c->idx];
	pthread_mutex_unlock(&p->lock);
	/* the notice goes out with c's next pass: now */
	if (changed)
		ctrl_wake(c);
	return ret;
}
