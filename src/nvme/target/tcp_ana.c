// SPDX-License-Identifier: MIT
/*
 * Asymmetric Namespace Access on the target (NVMe 2.0 section 8.1.1): each
 * listener is a port of every subsystem it exports, the associations made
 * through it are its controllers, and the port has an ANA state for each
 * ANA group, which the owner changes at run time (ucmdd's UCMDD_ANA_STATE,
 * as nvmet's configfs ana_state). A subsystem has one ANA group, 1, that
 * holds all of its namespaces: what nvmet makes by default.
 *
 * What the state changes, as the spec says and nvmet does: I/O commands
 * through a port whose group is inaccessible, in persistent loss or in
 * change fail with the path-related Asymmetric Access status (never DNR:
 * a multipath host retries them on another path); the ANA log page (0Ch)
 * of the port's controllers reports it; and each controller whose host
 * enabled ANA Change notices gets one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <linux/nvme_ioctl.h>

#include "nvme/target/tcp.h"
#include "ucmd/ucmd.h"

static const struct {
	const char *name;
	uint8_t state;
} ana_names[] = {
	/* nvmet's configfs names, and nvme-cli's words */
	{ "optimized", NVME_ANA_STATE_OPTIMIZED },
	{ "non-optimized", NVME_ANA_STATE_NONOPTIMIZED },
	{ "inaccessible", NVME_ANA_STATE_INACCESSIBLE },
	{ "persistent-loss", NVME_ANA_STATE_PERSISTENT_LOSS },
	{ "change", NVME_ANA_STATE_CHANGE },
};

int nvmet_tcp_ana_state_parse(const char *s)
{
	for (unsigned i = 0; i < sizeof(ana_names) / sizeof(ana_names[0]); i++)
		if (!strcmp(s, ana_names[i].name))
			return ana_names[i].state;
	return -EINVAL;
}

const char *nvmet_tcp_ana_state_name(uint8_t state)
{
	for (unsigned i = 0; i < sizeof(ana_names) / sizeof(ana_names[0]); i++)
		if (ana_names[i].state == state)
			return ana_names[i].name;
	return NULL;
}

void nvmet_tcp_ana_init(struct nvmet_tcp_port *t)
{
	for (unsigned g = 1; g <= NVMET_TCP_ANA_GRPS; g++)
		atomic_init(&t->ana_state[g], NVME_ANA_STATE_OPTIMIZED);
	atomic_init(&t->ana_chgcnt, 0);
}

int nvmet_tcp_ana_set(struct nvmet_tcp_port *t, uint32_t grpid, uint8_t state)
{
	if (!grpid || grpid > NVMET_TCP_ANA_GRPS || !nvmet_tcp_ana_state_name(state))
		return -EINVAL;
	if (atomic_exchange(&t->ana_state[grpid], state) == state)
		return 0;	/* no change: no count, no notice */
	/* the receivers see the new count and send the notices (nvmet_tcp_ana_notice) */
	atomic_fetch_add(&t->ana_chgcnt, 1);
	if (t->log)
		t->log("nvme-tcp: port %u (%s:%s): ANA group %u %s", t->portid, t->traddr,
		       t->trsvcid, grpid, nvmet_tcp_ana_state_name(state));
	return 0;
}

uint8_t nvmet_tcp_ana_get(struct nvmet_tcp_port *t, uint32_t grpid)
{
	return grpid && grpid <= NVMET_TCP_ANA_GRPS ? atomic_load(&t->ana_state[grpid]) : 0;
}

uint16_t nvmet_tcp_ana_io_status(struct nvmet_tcp_port *t, uint32_t nsid)
{
	(void)nsid;	/* every namespace is in group 1 */
	switch (atomic_load(&t->ana_state[1])) {
	case NVME_ANA_STATE_INACCESSIBLE:
		return NVMET_TCP_SC(NVME_SCT_PATH, NVME_SC_ANA_INACCESSIBLE, 0);
	case NVME_ANA_STATE_PERSISTENT_LOSS:
		return NVMET_TCP_SC(NVME_SCT_PATH, NVME_SC_ANA_PERSISTENT_LOSS, 0);
	case NVME_ANA_STATE_CHANGE:
		return NVMET_TCP_SC(NVME_SCT_PATH, NVME_SC_ANA_TRANSITION, 0);
	}
	return 0;
}

void nvmet_tcp_ana_id_ctrl(struct nvme_id_ctrl *id)
{
	/* several ports, several controllers, ANA reporting */
	id->cmic = NVME_CTRL_CMIC_MULTI_PORT | NVME_CTRL_CMIC_MULTI_CTRL |
		   NVME_CTRL_CMIC_MULTI_ANA_REPORTING;
	id->oaes = htole32(le32toh(id->oaes) | NVME_CTRL_OAES_ANA);
	id->anatt = NVMET_TCP_ANATT;
	/* every state (nvmet's ANACAP: hosts size the log by it, bit 6 would leave out the namespaces) */
	id->anacap = NVME_CTRL_ANACAP_OPT | NVME_CTRL_ANACAP_NON_OPT |
		     NVME_CTRL_ANACAP_INACCESSIBLE | NVME_CTRL_ANACAP_PERSISTENT_LOSS |
		     NVME_CTRL_ANACAP_CHANGE;
	id->anagrpmax = htole32(NVMET_TCP_ANA_GRPS);
	id->nanagrpid = htole32(NVMET_TCP_ANA_GRPS);
}

void nvmet_tcp_ana_id_ns(uint8_t cns, void *buf)
{
	if (cns == NVME_IDENTIFY_CNS_NS) {
		struct nvme_id_ns *id = buf;

		if (!id->nsze)	/* not an active namespace: all zeroes, as it came */
			return;
		id->nmic = NVME_NS_NMIC_SHARED;
		id->anagrpid = htole32(1);
	} else if (cns == NVME_IDENTIFY_CNS_CSI_INDEPENDENT_ID_NS) {
		struct nvme_id_independent_id_ns *id = buf;

		if (!id->nstat)	/* Namespace Status: 0 for one not ready or not active */
			return;
		id->nmic = NVME_NS_NMIC_SHARED;
		id->anagrpid = htole32(1);
	}
}

/*
 * The active namespace IDs of the connection's controller (Identify CNS
 * 02h), asked as the daemon: the members of a group are the subsystem's to
 * report (nvmet lists them from its own tables), not a command of the
 * host's, whom Linux's rules would refuse a namespace list without
 * CAP_SYS_ADMIN.
 */
static int active_nsids(struct nvmet_tcp_conn *c, uint32_t *list)
{
	struct nvme_passthru_cmd64 cmd = { 0 };
	int ret, n = 0;

	cmd.opcode = 0x06;
	cmd.cdw10 = NVME_IDENTIFY_CNS_NS_ACTIVE_LIST;
	cmd.addr = (uint64_t)(uintptr_t)list;
	cmd.data_len = 4096;
	cred_override_set(NULL);
	ret = ucmd_ioctl(c->t->e, c->efd, NVME_IOCTL_ADMIN64_CMD, &cmd);
	cred_override_set(&c->cred);
	if (ret)
		return ret > 0 ? -EIO : ret;
	while (n < 1024 && list[n])
		n++;
	return n;
}

uint16_t nvmet_tcp_ana_log(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, uint32_t *out_len)
{
	const struct ucmd_nvme_sqe *q = &s->sqe;
	uint32_t cdw10 = le32toh(q->cdw10);
	uint64_t off = le32toh(q->cdw12) | (uint64_t)le32toh(q->cdw13) << 32;
	bool rgo = (cdw10 >> 8) & 1;	/* LSP bit 0: Return Groups Only */
	uint64_t chg = atomic_load(&c->t->ana_chgcnt);
	struct nvme_ana_group_desc *d;
	struct nvme_ana_log *log;
	uint32_t *nsids;
	size_t size;
	int n = 0;

	if (off & 3)
		return NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
	nsids = calloc(1024, sizeof(*nsids));
	if (!nsids)
		return NVMET_TCP_SC(0, NVME_SC_INTERNAL, 0);
	if (!rgo && (n = active_nsids(c, nsids)) < 0) {
		free(nsids);
		return NVMET_TCP_SC(0, NVME_SC_INTERNAL, 0);
	}
	size = sizeof(*log) + NVMET_TCP_ANA_GRPS * sizeof(*d) + (size_t)n * 4;
	log = calloc(1, size);
	if (!log) {
		free(nsids);
		return NVMET_TCP_SC(0, NVME_SC_INTERNAL, 0);
	}
	log->chgcnt = htole64(chg);
	log->ngrps = htole16(NVMET_TCP_ANA_GRPS);
	d = log->descs;
	for (uint32_t g = 1; g <= NVMET_TCP_ANA_GRPS; g++) {
		d->grpid = htole32(g);
		d->chgcnt = htole64(chg);
		d->state = nvmet_tcp_ana_get(c->t, g);
		if (g == 1) {
			d->nnsids = htole32((uint32_t)n);
			for (int i = 0; i < n; i++)
				d->nsids[i] = htole32(nsids[i]);
		}
		d = (void *)((uint8_t *)d + sizeof(*d) + le32toh(d->nnsids) * 4);
	}
	free(nsids);
	/* the host saw this change: the next notice is for a later one */
	atomic_store(&c->ana_seen, chg);
	if (s->len)
		memset(s->buf, 0, s->len);
	if (off < size && s->len)
		memcpy(s->buf, (uint8_t *)log + off, size - off < s->len ? size - off : s->len);
	free(log);
	*out_len = s->len;
	return 0;
}

void nvmet_tcp_ana_notice(struct nvmet_tcp_conn *c)
{
	struct nvmet_tcp_ctrl *ctrl = c->ctrl;
	struct ucmd_nvme_cqe cqe = { 0 };
	struct nvmet_tcp_slot *aer = NULL;
	uint64_t chg = atomic_load(&c->t->ana_chgcnt);

	if (!ctrl || c->qid || ctrl->subsys < 0 || chg == atomic_load(&c->ana_seen))
		return;
	if (!(atomic_load(&ctrl->aec) & NVMET_TCP_AEN_CFG_ANA))
		return;
	for (unsigned i = 0; i < NVMET_TCP_QUEUE_SIZE && !aer; i++)
		if (c->slots[i].state == SLOT_PARKED)
			aer = &c->slots[i];
	if (aer)
		aer->state = SLOT_RUNNING;
	if (!aer)
		return;	/* told once the host sends an AER again */
	atomic_store(&c->ana_seen, chg);
	/* Notice, ANA Change, log page 0Ch */
	cqe.dw0 = htole32(NVME_AER_NOTICE | (NVME_AER_NOTICE_ANA << 8) |
			  ((uint32_t)NVME_LOG_LID_ANA << 16));
	nvmet_tcp_conn_respond(c, aer, &cqe, 0);
}
