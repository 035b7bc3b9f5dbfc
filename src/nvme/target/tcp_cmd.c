// SPDX-License-Identifier: MIT
/*
 * One command on the target: the fabrics commands (Connect, Property
 * Get/Set, Disconnect), the admin commands a fabrics controller answers
 * itself because they concern the association, not the device (Keep
 * Alive, Asynchronous Event Request, the Number of Queues, the Keep Alive
 * Timer), the discovery controller, and everything else passed to the
 * daemon's engine as a passthrough ioctl on the connection's own engine
 * files: the policy and the audit judge it as the connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/nvme_ioctl.h>

#include "nvme/target/tcp.h"
#include "ucmd/ucmd.h"

#define OPC_IDENTIFY	0x06
#define OPC_GET_LOG	0x02
#define OPC_SET_FEAT	0x09
#define OPC_GET_FEAT	0x0a
#define OPC_AER		0x0c
#define OPC_KEEP_ALIVE	0x18
#define FID_NUM_QUEUES	0x07
#define FID_AEC		0x0b
#define FID_KATO	0x0f

#define CC_EN		1u
#define CC_SHN_MASK	(3u << 14)
#define CSTS_RDY	1u
#define CSTS_SHST_DONE	(2u << 2)

static void set_status(struct ucmd_nvme_cqe *cqe, uint16_t st)
{
	cqe->status = htole16((uint16_t)(st << 1));
}

static void set_result(struct ucmd_nvme_cqe *cqe, uint64_t r)
{
	cqe->dw0 = htole32((uint32_t)r);
	cqe->dw1 = htole32((uint32_t)(r >> 32));
}

bool nvmet_tcp_cmd_parks(const struct nvmet_tcp_conn *c, const struct ucmd_nvme_sqe *sqe)
{
	return c->qid == 0 && sqe->opcode == OPC_AER;
}

void nvmet_tcp_cmd_conn_close(struct nvmet_tcp_conn *c)
{
	if (c->efd >= 0)
		ucmd_close(c->t->e, c->efd);
	c->efd = -1;
	for (unsigned i = 0; i < sizeof(c->ns_fd) / sizeof(c->ns_fd[0]); i++) {
		if (c->ns_fd[i] >= 0)
			ucmd_close(c->t->e, c->ns_fd[i]);
		c->ns_fd[i] = -1;
	}
}

/* ---- fabrics commands ---------------------------------------------------- */

static uint16_t connect_invalid(struct ucmd_nvme_cqe *cqe, bool in_data, unsigned off)
{
	set_result(cqe, (in_data ? NVMF_CONNECT_IATTR_DATA : 0) | off);
	return NVMET_TCP_SC(1, NVMF_SC_CONNECT_INVALID_PARAM, 1);
}

/* The 16 bytes of a host ID as the credentials carry it: UUID text, in byte order. */
static void hostid_text(const uint8_t id[16], char out[UCMD_HOSTID_LEN])
{
	static const char hex[] = "0123456789abcdef";
	unsigned o = 0;

	for (unsigned i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[id[i] >> 4];
		out[o++] = hex[id[i] & 15];
	}
	out[o] = 0;
}

static uint16_t fab_connect(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe)
{
	const struct nvmf_connect_sqe *cs = (const void *)&s->sqe;
	struct nvmf_connect_data d;
	uint16_t qid = le16toh(cs->qid), sqsize = le16toh(cs->sqsize);
	struct nvmet_tcp_ctrl *ctrl;
	int subsys;

	if (c->ctrl)
		return NVMET_TCP_SC(0, NVME_SC_CMD_SEQ_ERROR, 1);
	if (s->len < sizeof(d))
		return NVMET_TCP_SC(0, NVME_SC_SGL_INVALID_DATA, 1);
	if (le16toh(cs->recfmt))
		return NVMET_TCP_SC(1, NVMF_SC_CONNECT_INCOMPAT_FMT, 1);
	memcpy(&d, s->buf, sizeof(d));
	d.subsysnqn[sizeof(d.subsysnqn) - 1] = 0;
	d.hostnqn[sizeof(d.hostnqn) - 1] = 0;
	if (!sqsize || sqsize >= NVMET_TCP_QUEUE_SIZE)
		return connect_invalid(cqe, false, offsetof(struct nvmf_connect_sqe, sqsize));
	if (!d.hostnqn[0] || strlen(d.hostnqn) > NVMF_NQN_SIZE)
		return connect_invalid(cqe, true, offsetof(struct nvmf_connect_data, hostnqn));
	subsys = nvmet_tcp_subsys_find(c->t, d.subsysnqn);
	if (subsys == -2)
		return connect_invalid(cqe, true, offsetof(struct nvmf_connect_data, subsysnqn));
	if (qid == 0) {
		uint32_t kato = le32toh(cs->kato);

		/*
		 * A host that asks for no keep-alive timeout gets kato0: an
		 * association nobody uses ends (nvmet does so for discovery
		 * controllers; here for every one, so that none is held forever)
		 */
		ctrl = nvmet_tcp_ctrl_new(c, subsys, d.hostnqn, d.hostid, kato ? kato : c->t->lim.kato0_ms);
		if (!ctrl)
			return NVMET_TCP_SC(1, NVMF_SC_CONNECT_CTRL_BUSY, 1);
	} else {
		/* the association's host: the same NQN and host ID as its admin queue's */
		ctrl = nvmet_tcp_ctrl_get(c->t, le16toh(d.cntlid), subsys, d.hostnqn, d.hostid);
		if (!ctrl)
			return connect_invalid(cqe, true, offsetof(struct nvmf_connect_data, cntlid));
		if (subsys < 0 || qid > ctrl->nr_io_queues) {
			nvmet_tcp_ctrl_put(ctrl);
			return connect_invalid(cqe, false, offsetof(struct nvmf_connect_sqe, qid));
		}
	}
	/* from now on the engine sees this host NQN and host ID in the connection's identity */
	snprintf(c->cred.hostnqn, sizeof(c->cred.hostnqn), "%.*s", NVMF_NQN_SIZE, d.hostnqn);	/* checked above */
	hostid_text(d.hostid, c->cred.hostid);
	if (qid == 0 && subsys >= 0) {
		char name[32];

		snprintf(name, sizeof(name), "nvme%u", c->t->subsys[subsys].instance);
		c->efd = ucmd_open(c->t->e, name, O_RDWR);
		if (c->efd < 0) {
			c->cred.hostnqn[0] = 0;
			c->cred.hostid[0] = 0;
			atomic_store(&ctrl->dead, true);
			nvmet_tcp_ctrl_put(ctrl);
			return NVMET_TCP_SC(1, NVMF_SC_CONNECT_INVALID_HOST, 1);
		}
	}
	/* the ring is the connection's identity from now on: made after the NQN is in it */
	if (subsys >= 0 && nvmet_tcp_io_start(c)) {
		nvmet_tcp_cmd_conn_close(c);
		c->cred.hostnqn[0] = 0;
		c->cred.hostid[0] = 0;
		if (qid == 0)
			atomic_store(&ctrl->dead, true);
		nvmet_tcp_ctrl_put(ctrl);
		return NVMET_TCP_SC(0, NVME_SC_INTERNAL, 0);
	}
	c->qid = qid;
	c->sqsize = sqsize;
	c->sqflow_off = cs->cattr & NVMF_CONNECT_DISABLE_SQFLOW;
	c->last_ka = nvmet_tcp_now_ms();
	/* what the host reads at connect is the state it knows: notices are for changes after */
	c->ana_seen = atomic_load(&c->t->ana_chgcnt);
	c->ctrl = ctrl;
	if (c->t->log && qid == 0 && c->local)
		c->t->log("nvme-tcp: %s (host ID %s) connected to %s as controller %u (kato %u ms) "
			  "from %s, local uid %u pid %d", d.hostnqn, c->cred.hostid, d.subsysnqn,
			  ctrl->cntlid, ctrl->kato_ms, c->peer, (unsigned)c->cred.euid,
			  (int)c->cred.pid);
	else if (c->t->log && qid == 0)
		c->t->log("nvme-tcp: %s (host ID %s) connected to %s as controller %u (kato %u ms) "
			  "from %s, remote", d.hostnqn, c->cred.hostid, d.subsysnqn, ctrl->cntlid,
			  ctrl->kato_ms, c->peer);
	set_result(cqe, ctrl->cntlid);
	return 0;
}

#define CAP_VALUE ((uint64_t)(NVMET_TCP_QUEUE_SIZE - 1) | (1ull << 16) | (30ull << 24) | (1ull << 37))

static uint16_t fab_prop(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe)
{
	const struct nvmf_prop_sqe *p = (const void *)&s->sqe;
	struct nvmet_tcp_ctrl *ctrl = c->ctrl;
	uint32_t off = le32toh(p->offset);
	bool size8 = p->attrib & NVMF_PROP_ATTR_SIZE8;
	uint64_t v = le64toh(p->value);
	uint16_t st = 0;

	if (c->qid)	/* properties belong to the admin queue */
		return NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
	pthread_mutex_lock(&ctrl->lock);
	if (p->fctype == NVMF_FCTYPE_PROP_GET) {
		switch (off) {
		case NVMF_PROP_CAP:
			set_result(cqe, size8 ? CAP_VALUE : (uint32_t)CAP_VALUE);
			break;
		case NVMF_PROP_VS:
			set_result(cqe, 0x00010400);
			break;
		case NVMF_PROP_CC:
			set_result(cqe, ctrl->cc);
			break;
		case NVMF_PROP_CSTS:
			set_result(cqe, ctrl->csts);
			break;
		default:
			st = NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
		}
	} else if (off == NVMF_PROP_CC && !size8) {
		uint32_t cc = (uint32_t)v;

		if ((cc & CC_EN) && !(ctrl->cc & CC_EN))
			ctrl->csts = CSTS_RDY;
		else if (!(cc & CC_EN))
			ctrl->csts &= ~CSTS_RDY;
		/* nothing to flush: the daemon's controller outlives the association */
		if (cc & CC_SHN_MASK)
			ctrl->csts |= CSTS_SHST_DONE;
		ctrl->cc = cc;
	} else {
		st = NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
	}
	pthread_mutex_unlock(&ctrl->lock);
	return st;
}

static uint16_t fabrics(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe)
{
	const struct nvmf_common_sqe *f = (const void *)&s->sqe;

	switch (f->fctype) {
	case NVMF_FCTYPE_CONNECT:
		return fab_connect(c, s, cqe);
	case NVMF_FCTYPE_PROP_GET:
	case NVMF_FCTYPE_PROP_SET:
		return fab_prop(c, s, cqe);
	case NVMF_FCTYPE_DISCONNECT:
		c->disconnecting = true;
		return 0;
	}
	return NVMET_TCP_SC(0, NVME_SC_INVALID_OPCODE, 1);
}

/* ---- the engine ------------------------------------------------------------ */

static uint16_t errno_status(int ret)
{
	switch (ret) {
	case -EACCES:
	case -EPERM:	/* the policy said no */
		return NVMET_TCP_SC(2, NVME_SC_ACCESS_DENIED, 1);
	case -EINVAL:
	case -EFAULT:
		return NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
	case -ENOTTY:
		return NVMET_TCP_SC(0, NVME_SC_INVALID_OPCODE, 1);
	case -ENOENT:
	case -ENODEV:
		return NVMET_TCP_SC(0, NVME_SC_INVALID_NS, 1);
	}
	return NVMET_TCP_SC(0, NVME_SC_INTERNAL, 0);
}

/* The engine file of namespace nsid on an I/O queue, opened on first use. */
static int ns_fd(struct nvmet_tcp_conn *c, uint32_t nsid)
{
	unsigned n = sizeof(c->ns_fd) / sizeof(c->ns_fd[0]);
	char name[32];
	int fd;

	if (!nsid || nsid > n)
		return -ENOENT;
	fd = c->ns_fd[nsid - 1];
	if (fd < 0) {
		snprintf(name, sizeof(name), "ng%un%u", c->t->subsys[c->ctrl->subsys].instance, nsid);
		fd = ucmd_open(c->t->e, name, O_RDWR);
		if (fd >= 0)
			c->ns_fd[nsid - 1] = fd;
	}
	return fd;
}

/* Marks a passthrough submitted to the engine: its completion answers it. */
#define ST_SUBMITTED	0xffffu

static uint16_t passthru(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s)
{
	bool admin = c->qid == 0;
	int fd, ret;

	fd = admin ? c->efd : ns_fd(c, le32toh(s->sqe.nsid));
	if (fd < 0)
		return NVMET_TCP_SC(0, NVME_SC_INVALID_NS, 1);
	/* the namespace exists: its group's state on this port decides whether I/O may reach it */
	if (!admin && (ret = nvmet_tcp_ana_io_status(c->t, le32toh(s->sqe.nsid))))
		return (uint16_t)ret;
	ret = nvmet_tcp_io_submit(c, s, fd, admin);
	return ret ? errno_status(ret) : ST_SUBMITTED;
}

/*
 * Identify Controller over fabrics: the device's answer with what a
 * fabrics host needs told differently (NVMe-oF 1.1 section 4.1): this
 * association's controller ID, SGL support with offsets (in-capsule data),
 * the capsule sizes, keep-alive support, the command limit, a transfer
 * size this target bounds, and the subsystem NQN it exports.
 */
static void fabrics_id_ctrl(struct nvmet_tcp_conn *c, struct nvme_id_ctrl *id)
{
	id->cntlid = htole16(c->ctrl->cntlid);
	if (!id->mdts || id->mdts > NVMET_TCP_MDTS)
		id->mdts = NVMET_TCP_MDTS;
	id->sgls = htole32((le32toh(id->sgls) & ~3u) | 1u | (1u << 20));
	id->kas = htole16(10);	/* 100 ms units: Keep Alive supported */
	id->maxcmd = htole16(NVMET_TCP_QUEUE_SIZE);
	id->ioccsz = htole32((sizeof(struct ucmd_nvme_sqe) + NVMET_TCP_ICD_LEN) / 16);
	id->iorcsz = htole32(sizeof(struct ucmd_nvme_cqe) / 16);
	id->icdoff = 0;
	id->fcatt = 0;	/* dynamic controller model */
	id->msdbd = 1;
	id->ofcs = 0;
	nvmet_tcp_ana_id_ctrl(id);
	/* the NQN the host connected to (target.c makes duplicates unique) */
	memset(id->subnqn, 0, sizeof(id->subnqn));
	snprintf(id->subnqn, sizeof(id->subnqn), "%s", c->t->subsys[c->ctrl->subsys].nqn);
}

static uint16_t admin(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe,
		      uint32_t *out_len)
{
	const struct ucmd_nvme_sqe *q = &s->sqe;
	struct nvmet_tcp_ctrl *ctrl = c->ctrl;
	uint32_t cdw10 = le32toh(q->cdw10), cdw11 = le32toh(q->cdw11);

	switch (q->opcode) {
	case OPC_KEEP_ALIVE:
		return 0;
	case OPC_SET_FEAT:
		switch (cdw10 & 0xff) {
		case FID_NUM_QUEUES: {
			/* the queues are connections of this association, not the device's */
			uint32_t n = (cdw11 & 0xffff) < (cdw11 >> 16) ? (cdw11 & 0xffff) : (cdw11 >> 16);

			if (n == 0xffff)
				return NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
			if (n + 1 > NVMET_TCP_MAX_IO_QUEUES)
				n = NVMET_TCP_MAX_IO_QUEUES - 1;
			ctrl->nr_io_queues = (uint16_t)(n + 1);
			set_result(cqe, n | (n << 16));
			return 0;
		}
		case FID_AEC:
			/* the association's only event is ANA Change (target_ana.c) */
			ctrl->aec = cdw11;
			return 0;
		case FID_KATO:
			ctrl->kato_ms = cdw11 ? cdw11 : c->t->lim.kato0_ms;
			return 0;
		}
		break;
	case OPC_GET_FEAT:
		switch (cdw10 & 0xff) {
		case FID_NUM_QUEUES: {
			uint32_t n = ctrl->nr_io_queues ? ctrl->nr_io_queues - 1u : 0;

			set_result(cqe, n | (n << 16));
			return 0;
		}
		case FID_KATO:
			set_result(cqe, ctrl->kato_ms);
			return 0;
		case FID_AEC:
			set_result(cqe, ctrl->aec);
			return 0;
		}
		break;
	case OPC_GET_LOG:
		/* the port's ANA log: the device has no ports */
		if ((cdw10 & 0xff) == NVME_LOG_LID_ANA)
			return nvmet_tcp_ana_log(c, s, out_len);
		break;
	}
	return passthru(c, s);
}

/* ---- the discovery controller ---------------------------------------------- */

static void disc_id_ctrl(struct nvmet_tcp_conn *c, struct nvme_id_ctrl *id)
{
	memset(id, 0, sizeof(*id));
	memset(id->sn, ' ', sizeof(id->sn));
	memcpy(id->sn, "ucmd-discovery", 14);
	memset(id->mn, ' ', sizeof(id->mn));
	memcpy(id->mn, "ucmd NVMe/TCP discovery", 23);
	memset(id->fr, ' ', sizeof(id->fr));
	memcpy(id->fr, "1.0", 3);
	id->mdts = NVMET_TCP_MDTS;
	id->cntlid = htole16(c->ctrl->cntlid);
	id->ver = htole32(0x00010400);
	id->cntrltype = NVME_CTRL_CNTRLTYPE_DISCOVERY;
	id->lpa = NVME_CTRL_LPA_EXTENDED;	/* Get Log Page offsets */
	id->kas = htole16(10);
	id->maxcmd = htole16(NVMET_TCP_QUEUE_SIZE);
	id->sgls = htole32(1u | (1u << 20));
	id->msdbd = 1;
	snprintf(id->subnqn, sizeof(id->subnqn), "%s", NVME_DISC_SUBSYS_NAME);
}

/* The Discovery Log Page (NVMe-oF 1.1 section 5.3): one entry per subsystem. */
static uint16_t disc_log(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, uint32_t *out_len)
{
	const struct ucmd_nvme_sqe *q = &s->sqe;
	struct nvmet_tcp_port *t = c->t;
	uint64_t off = le32toh(q->cdw12) | (uint64_t)le32toh(q->cdw13) << 32;
	size_t size = NVMF_DISC_HDR_LEN + (size_t)t->nr_subsys * NVMF_DISC_ENTRY_LEN;
	struct nvmf_discovery_log *log;

	if (off & 3)
		return NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
	log = calloc(1, size);
	if (!log)
		return NVMET_TCP_SC(0, NVME_SC_INTERNAL, 0);
	log->genctr = htole64(t->genctr);
	log->numrec = htole64(t->nr_subsys);
	log->recfmt = 0;
	for (unsigned i = 0; i < t->nr_subsys; i++) {
		struct nvmf_disc_log_entry *e = &log->entries[i];

		e->trtype = NVMF_TRTYPE_TCP;
		e->adrfam = (uint8_t)t->adrfam;
		e->subtype = NVME_NQN_NVME;
		/* a host may disable SQ flow control (C2HData SUCCESS then ends reads) */
		e->treq = NVMF_TREQ_NOT_SPECIFIED | NVMF_TREQ_DISABLE_SQFLOW;
		e->portid = htole16(t->portid);
		e->cntlid = htole16(NVMF_CNTLID_DYNAMIC);
		e->asqsz = htole16(32);
		snprintf(e->trsvcid, sizeof(e->trsvcid), "%s", t->trsvcid);
		snprintf(e->subnqn, sizeof(e->subnqn), "%s", t->subsys[i].nqn);
		snprintf(e->traddr, sizeof(e->traddr), "%s", t->traddr);
		e->tsas.tcp.sectype = 0;	/* no TLS */
	}
	if (off < size)
		memcpy(s->buf, (uint8_t *)log + off, size - off < s->len ? size - off : s->len);
	free(log);
	*out_len = s->len;
	return 0;
}

static uint16_t discovery(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe,
			  uint32_t *out_len)
{
	const struct ucmd_nvme_sqe *q = &s->sqe;
	uint32_t cdw10 = le32toh(q->cdw10);

	(void)cqe;
	switch (q->opcode) {
	case OPC_KEEP_ALIVE:
		return 0;
	case OPC_IDENTIFY:
		if ((cdw10 & 0xff) != 1 || s->len < sizeof(struct nvme_id_ctrl))
			return NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
		disc_id_ctrl(c, (struct nvme_id_ctrl *)(void *)s->buf);
		*out_len = sizeof(struct nvme_id_ctrl);
		return 0;
	case OPC_GET_LOG:
		if ((cdw10 & 0xff) != NVMF_LOG_DISCOVERY || !s->len)
			return NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
		return disc_log(c, s, out_len);
	case OPC_SET_FEAT:
		if ((cdw10 & 0xff) == FID_KATO) {
			c->ctrl->kato_ms = q->cdw11 ? le32toh(q->cdw11) : c->t->lim.kato0_ms;
			return 0;
		}
		return (cdw10 & 0xff) == FID_AEC ? 0 : NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1);
	}
	return NVMET_TCP_SC(0, NVME_SC_INVALID_OPCODE, 1);
}

int nvmet_tcp_cmd_exec(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe,
		  uint32_t *out_len)
{
	uint16_t st;

	*out_len = 0;
	if (s->sqe.opcode == NVMF_OPC_FABRICS)
		st = fabrics(c, s, cqe);
	else if (c->ctrl->subsys < 0)
		st = discovery(c, s, cqe, out_len);
	else if (c->qid == 0)
		st = admin(c, s, cqe, out_len);
	else
		st = passthru(c, s);
	if (st == ST_SUBMITTED)
		return -EINPROGRESS;
	if (st)
		*out_len = 0;
	set_status(cqe, st);
	return 0;
}

void nvmet_tcp_cmd_done(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, int res, uint64_t result,
		   struct ucmd_nvme_cqe *cqe, uint32_t *out_len)
{
	const struct ucmd_nvme_sqe *q = &s->sqe;
	uint16_t st = res < 0 ? errno_status(res) : (uint16_t)(res & 0x7fff);

	*out_len = 0;
	set_status(cqe, st);
	if (st)
		return;
	set_result(cqe, result);
	/* what the device filled goes back: a read, or both ways */
	if (s->len && (q->opcode & 2))
		*out_len = s->len;
	if (c->qid == 0 && q->opcode == OPC_IDENTIFY && (le32toh(q->cdw10) & 0xff) == 1 &&
	    s->len >= 4096)
		fabrics_id_ctrl(c, (struct nvme_id_ctrl *)(void *)s->buf);
	else if (c->qid == 0 && q->opcode == OPC_IDENTIFY && s->len >= 4096)
		nvmet_tcp_ana_id_ns((uint8_t)le32toh(q->cdw10), s->buf);
}
