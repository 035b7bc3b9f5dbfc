/* SPDX-License-Identifier: MIT */
/*
 * Flexible Data Placement: endurance group 1 and its one configuration,
 * placement identifiers on writes, Features 1Dh (FDP) and 1Eh (FDP
 * Events), logs 20h-23h and I/O Management Receive/Send. A namespace's
 * placement handle N is the N-th reclaim unit handle of its list (handle N
 * when it has every handle): commands and events name the namespace's.
 */
#include <stdlib.h>
#include <string.h>

#include "fdp.h"

#define ST_INVALID	(UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR)
#define ST_INVALID_NS	(UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR)
#define ST_SEQ		(UCMD_GEN(NVME_SC_CMD_SEQ_ERROR) | UCMD_DNR)
#define ST_INTERNAL	UCMD_GEN(NVME_SC_INTERNAL)
#define DTYPE_PLACEMENT	2
#define LSP_HOST_EVENTS	1

/* The event types the model reports, in the order of ev_mask's bits */
static const uint8_t ev_types[] = {
	NVME_FDP_EVENT_RUNFW, NVME_FDP_EVENT_PID, NVME_FDP_EVENT_REALLOC, NVME_FDP_EVENT_MODIFY,
	NVME_FDP_EVENT_RUTLE, NVME_FDP_EVENT_RESET,
};
#define NR_EV_TYPES	(sizeof(ev_types) / sizeof(ev_types[0]))

static int ev_bit(uint8_t type)
{
	for (unsigned i = 0; i < NR_EV_TYPES; i++)
		if (ev_types[i] == type)
			return (int)i;
	return -1;
}

/* Bits of a placement identifier that name the reclaim group (RGIF) */
static unsigned rgif(const struct ctrl_fdp *f)
{
	return f->nrg <= 1 ? 0 : 32u - (unsigned)__builtin_clz(f->nrg - 1u);
}

static bool parse_pid(const struct ctrl_fdp *f, uint16_t pid, uint16_t *rg, uint16_t *ph)
{
	unsigned b = rgif(f);

	*ph = b ? (uint16_t)(pid & ((1u << (16 - b)) - 1)) : pid;
	*rg = b ? (uint16_t)(pid >> (16 - b)) : 0;
	return *rg < f->nrg && *ph < f->nruh;
}

_Static_assert(sizeof(((struct ctrl_ns *)0)->phndl) == UCMD_FDP_MAX_RUH * sizeof(uint16_t),
	       "a placement handle list holds every handle");

/* The namespace's placement handle ph as a reclaim unit handle of the group */
static bool ns_ruh(const struct ctrl_fdp *f, const struct ctrl_ns *ns, uint16_t ph,
		   uint16_t *ruh)
{
	if (!ns->nphndl)
		*ruh = ph;
	else if (ph < ns->nphndl)
		*ruh = ns->phndl[ph];
	else
		return false;
	return *ruh < f->nruh;
}

static uint16_t ns_nph(const struct ctrl_fdp *f, const struct ctrl_ns *ns)
{
	return ns->nphndl ? ns->nphndl : f->nruh;
}

static uint16_t make_pid(const struct ctrl_fdp *f, uint16_t rg, uint16_t ph)
{
	unsigned b = rgif(f);

	return b ? (uint16_t)(rg << (16 - b) | ph) : ph;
}

int ctrl_fdp_setup(struct ucmd_ctrl *c, const struct ucmd_fdp_params *p)
{
	struct ctrl_fdp *f;

	if (!p->enable)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->nruh = p->nruh ? p->nruh : UCMD_FDP_DFLT_RUH;
	f->nrg = p->nrg ? p->nrg : 1;
	f->ru_size = p->ru_size ? p->ru_size : UCMD_FDP_DFLT_RU_SIZE;
	f->op_pct = p->op_pct ? p->op_pct : UCMD_FDP_DFLT_OP;
	f->persistent = !p->initially;
	f->enabled = true;
	f->rutl = p->ru_time_limit;
	if (f->nruh > UCMD_FDP_MAX_RUH || f->nrg > UCMD_FDP_MAX_RG || f->op_pct > 100 ||
	    f->ru_size % 4096 || f->ru_size > (1ull << 30)) {
		free(f);
		return ctrl_ctrl_why(c, -EINVAL, "FDP: handles 1..%u, reclaim groups 1..%u, "
				      "reclaim unit a multiple of 4 KiB up to 1 GiB, "
				      "overprovisioning 1..100%%", UCMD_FDP_MAX_RUH, UCMD_FDP_MAX_RG);
	}
	c->fdp = f;
	return 0;
}

void ctrl_fdp_free(struct ucmd_ctrl *c)
{
	/* another controller of the subsystem only borrows controller 1's */
	if (!c->primary)
		free(c->fdp);
	c->fdp = NULL;
}

/* The namespace's placement handle that is reclaim unit handle ruh (false: none) */
static bool ns_ph_of(const struct ctrl_fdp *f, const struct ctrl_ns *ns, uint16_t ruh,
		     uint16_t *ph)
{
	if (!ns->nphndl) {
		*ph = ruh;
		return ruh < f->nruh;
	}
	for (uint16_t i = 0; i < ns->nphndl; i++)
		if (ns->phndl[i] == ruh) {
			*ph = i;
			return true;
		}
	return false;
}

/*
 * An event of namespace ns about stream owner (rg * nruh + ruh, or
 * FDP_SHARED for none), when the handle's filter has it: an event without
 * a handle is reported when the namespace's placement handle 0 asks for
 * it. The event names the namespace's placement handle (PID) and the
 * reclaim unit handle (RUHID), with NSID.
 */
static struct nvme_fdp_event *event_add(struct ucmd_ctrl *c, const struct ctrl_ns *ns, bool host,
					uint8_t type, uint16_t owner)
{
	struct ctrl_fdp *f = c->fdp;
	struct ctrl_fdp_event_ring *r = host ? &f->host_ev : &f->ctrl_ev;
	bool handle = owner < f->nrg * f->nruh;
	uint16_t ruh = 0, ph;
	struct nvme_fdp_event *e;
	uint64_t ms;
	int bit = ev_bit(type);

	if (handle)
		ruh = owner % f->nruh;
	else if (!ns_ruh(f, ns, 0, &ruh))
		return NULL;
	if (bit < 0 || !(f->ev_mask[ruh] >> bit & 1))
		return NULL;
	ms = realtime_ms();
	e = &r->ev[r->next];
	r->next = (r->next + 1) % UCMD_FDP_EVENTS;
	if (r->n < UCMD_FDP_EVENTS)
		r->n++;
	memset(e, 0, sizeof(*e));
	e->type = type;
	memcpy(e->ts.timestamp, &ms, sizeof(e->ts.timestamp));
	e->flags = NVME_FDP_EVENT_F_NSIDV;
	e->nsid = htole32(ns->nsid);
	if (handle) {
		uint16_t rg = owner / f->nruh;

		if (ns_ph_of(f, ns, ruh, &ph)) {
			e->flags |= NVME_FDP_EVENT_F_PIV;
			e->pid = htole16(make_pid(f, rg, ph));
		}
		e->rgid = htole16(rg);
		e->ruhid = (uint8_t)ruh;
	}
	return e;
}

static void on_realloc(void *arg, uint16_t owner, uint64_t lba, uint32_t nmoved)
{
	struct ctrl_ns *ns = arg;
	struct ucmd_ctrl *c = ns->fdp_ctrl;
	struct nvme_fdp_event *e = event_add(c, ns, false, NVME_FDP_EVENT_REALLOC, owner);
	struct nvme_fdp_event_realloc r = { .flags = NVME_FDP_EVENT_REALLOC_F_LBAV };

	if (!e)
		return;
	r.nlbam = htole16(nmoved > 0xffff ? 0xffff : (uint16_t)nmoved);
	r.lba = htole64(lba);
	memcpy(e->type_specific, &r, sizeof(r));
}

int ctrl_fdp_ns_init(struct ucmd_ctrl *c, struct ctrl_ns *ns)
{
	struct ctrl_fdp *f = c->fdp;
	int ret;

	if (!f || !f->enabled)
		return 0;
	ns->fdpm = calloc(1, sizeof(*ns->fdpm));
	if (!ns->fdpm)
		return -ENOMEM;
	ret = fdp_media_init(ns->fdpm, ns->nsze, (uint32_t)(f->ru_size / ctrl_ns_ds(ns)), f->nruh,
			     f->nrg, f->op_pct, f->persistent);
	if (ret) {
		free(ns->fdpm);
		ns->fdpm = NULL;
		return ret == -EINVAL ? ctrl_ctrl_why(c, ret, "FDP: a namespace of at most %llu "
						       "blocks", UCMD_FDP_MAX_BLOCKS) : ret;
	}
	ns->fdpm->realloc = on_realloc;
	ns->fdpm->arg = ns;
	ns->fdp_ctrl = c;
	return 0;
}

void ctrl_fdp_ns_free(struct ctrl_ns *ns)
{
	if (!ns->fdpm)
		return;
	fdp_media_free(ns->fdpm);
	free(ns->fdpm);
	ns->fdpm = NULL;
}

void ctrl_fdp_ns_erase(struct ucmd_ctrl *c, struct ctrl_ns *ns)
{
	struct fdp_media *m = ns->fdpm;

	if (!m)
		return;
	/* a new block size gives the units a new number of blocks */
	if (m->bpr != c->fdp->ru_size / ctrl_ns_ds(ns) || m->nlba != ns->nsze) {
		ctrl_fdp_ns_free(ns);
		if (ctrl_fdp_ns_init(c, ns))
			return;	/* no memory: the namespace goes on without a model */
	} else {
		fdp_media_reset(m);
	}
	/* every handle of the namespace now points at no unit */
	for (uint32_t s = 0; s < (uint32_t)c->fdp->nrg * c->fdp->nruh; s++) {
		uint16_t ph;

		if (ns_ph_of(c->fdp, ns, (uint16_t)(s % c->fdp->nruh), &ph))
			event_add(c, ns, false, NVME_FDP_EVENT_MODIFY, (uint16_t)s);
	}
}

void ctrl_fdp_reset(struct ucmd_ctrl *c)
{
	struct ctrl_fdp *f = c->fdp;

	if (!f || !f->enabled)
		return;
	/*
	 * The model keeps no unit open across a reset the host asked for:
	 * what a handle's unit did not take stays unwritten until it is
	 * erased, and the handle gets a new unit at its next write.
	 */
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++) {
		struct ctrl_ns *ns = c->ns[i];

		if (!ns || !ns->fdpm)
			continue;
		for (uint32_t s = 0; s < (uint32_t)f->nrg * f->nruh; s++)
			if (fdp_media_ruh_update(ns->fdpm, s))
				event_add(c, ns, true, NVME_FDP_EVENT_RESET, (uint16_t)s);
	}
}

/* The handles of ns whose unit was active for longer than the time limit */
static void expire_ns(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t now)
{
	struct ctrl_fdp *f = c->fdp;

	for (uint32_t s = 0; s < (uint32_t)f->nrg * f->nruh; s++)
		if (fdp_media_expire(ns->fdpm, s, (uint64_t)f->rutl * 1000, now))
			event_add(c, ns, true, NVME_FDP_EVENT_RUTLE, (uint16_t)s);
}

/* Scans at most every 100 ms: a write costs a clock read, not a scan */
static bool expiry_due(struct ctrl_fdp *f, uint64_t *now)
{
	if (!f->rutl)
		return false;
	*now = realtime_ms();
	if (*now >= f->rutl_checked_ms && *now - f->rutl_checked_ms < 100)
		return false;
	f->rutl_checked_ms = *now;
	return true;
}

void ctrl_fdp_expire_all(struct ucmd_ctrl *c)
{
	struct ctrl_fdp *f = c->fdp;
	uint64_t now;

	if (!f || !f->enabled || !f->rutl)
		return;
	now = realtime_ms();
	f->rutl_checked_ms = now;
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i] && c->ns[i]->fdpm)
			expire_ns(c, c->ns[i], now);
}

static void count_media(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t ds, uint64_t bs)
{
	c->fdp->mbmw += ns->fdpm->moved * bs;
	c->fdp->gc_bytes += ns->fdpm->moved * ds;
	c->fdp->mbe += ns->fdpm->erased * bs;
	ns->fdpm->moved = ns->fdpm->erased = 0;
}

uint16_t ctrl_fdp_write_check(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t cdw12,
			       uint32_t cdw13, uint32_t *stream)
{
	uint8_t dtype = (cdw12 >> 20) & 0xf;
	uint16_t pid = (uint16_t)(cdw13 >> 16), rg, ph;
	uint64_t now;

	/* units past their time limit are replaced before this write goes in */
	if (ns->fdpm && expiry_due(c->fdp, &now))
		expire_ns(c, ns, now);
	*stream = 0;	/* no placement asked for: handle 0 of group 0 */
	if (dtype != DTYPE_PLACEMENT)
		return 0;
	if (!ns->fdpm)
		return ST_INVALID;
	if (!parse_pid(c->fdp, pid, &rg, &ph) || !ns_ruh(c->fdp, ns, ph, &ph)) {
		struct nvme_fdp_event *e = event_add(c, ns, true, NVME_FDP_EVENT_PID, FDP_SHARED);

		if (e) {
			e->flags |= NVME_FDP_EVENT_F_PIV;
			e->pid = htole16(pid);
		}
		return ST_INVALID;
	}
	*stream = (uint32_t)rg * c->fdp->nruh + ph;
	return 0;
}

void ctrl_fdp_write_commit(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t stream,
			    uint64_t slba, uint64_t nlb)
{
	uint64_t ds, bs;

	if (!ns->fdpm)
		return;
	ds = ctrl_ns_ds(ns);
	bs = ds + ctrl_ns_ms(ns);
	c->fdp->hbmw += nlb * bs;
	c->fdp->mbmw += nlb * bs;
	if (c->fdp->rutl)
		ns->fdpm->now_ms = realtime_ms();
	/* -ENOSPC cannot happen with the units the model sized for itself */
	(void)fdp_media_write(ns->fdpm, stream, slba, nlb);
	count_media(c, ns, ds, bs);
}

void ctrl_fdp_zeroes_commit(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t nlb)
{
	/*
	 * The NVM Command Set counts Write Zeroes among the host's writes; the
	 * model keeps no copy of zeroes (ctrl_fdp_trim), so the media wrote
	 * nothing.
	 */
	if (ns->fdpm)
		c->fdp->hbmw += nlb * (ctrl_ns_ds(ns) + ctrl_ns_ms(ns));
}

void ctrl_fdp_trim(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba, uint64_t nlb)
{
	(void)c;
	if (ns->fdpm)
		fdp_media_trim(ns->fdpm, slba, nlb);
}

/* NVMe 2.1's offsets in the Create data structure (libnvme 1.3 has no fields) */
#define CREATE_NPHNDLS_OFF	392
#define CREATE_PHNDL_OFF	512
#define ST_BAD_PHNDL_LIST	(UCMD_CMD(0x2a) | UCMD_DNR)

uint16_t ctrl_fdp_phndl_check(struct ucmd_ctrl *c, const uint8_t *data, uint16_t *n,
			       uint16_t *list)
{
	const struct ctrl_fdp *f = c->fdp;
	uint8_t seen[UCMD_FDP_MAX_RUH] = { 0 };
	uint16_t v;

	*n = 0;
	if (!f || !f->enabled)
		return 0;
	memcpy(&v, data + CREATE_NPHNDLS_OFF, sizeof(v));
	v = le16toh(v);
	/* each handle once, at most MAXPIDS + 1 (every handle of the configuration) */
	if (v > f->nruh)
		return ST_BAD_PHNDL_LIST;
	for (uint16_t i = 0; i < v; i++) {
		uint16_t h;

		memcpy(&h, data + CREATE_PHNDL_OFF + 2 * i, sizeof(h));
		h = le16toh(h);
		if (h >= f->nruh || seen[h]++)
			return ST_BAD_PHNDL_LIST;
		list[i] = h;
	}
	*n = v;
	return 0;
}

void ctrl_fdp_id_ctrl(struct ucmd_ctrl *c, struct nvme_id_ctrl *id)
{
	if (!c->fdp)
		return;
	id->ctratt |= htole32(NVME_CTRL_CTRATT_FDPS | NVME_CTRL_CTRATT_ENDURANCE_GROUPS);
	id->endgidmax = htole16(UCMD_FDP_ENDGID);
}

/* ---- logs ---- */

bool ctrl_fdp_is_log(uint8_t lid)
{
	return lid >= NVME_LOG_LID_FDP_CONFIGS && lid <= NVME_LOG_LID_FDP_EVENTS;
}

void ctrl_fdp_supported_logs(struct ucmd_ctrl *c, uint32_t *lids)
{
	if (!c->fdp)
		return;
	for (unsigned lid = NVME_LOG_LID_FDP_CONFIGS; lid <= NVME_LOG_LID_FDP_EVENTS; lid++)
		lids[lid] = htole32(1);
}

static size_t config_size(const struct ctrl_fdp *f)
{
	return sizeof(struct nvme_fdp_config_desc) + f->nruh * sizeof(struct nvme_fdp_ruh_desc);
}

static void log_configs(const struct ctrl_fdp *f, uint8_t *buf, size_t size)
{
	struct nvme_fdp_config_log *l = (void *)buf;
	struct nvme_fdp_config_desc *d = l->configs;

	l->n = 0;		/* 0's based: one configuration */
	l->size = htole32((uint32_t)size);
	d->size = htole16((uint16_t)config_size(f));
	d->fdpa = (uint8_t)(rgif(f) | 1u << NVME_FDP_CONFIG_FDPA_VALID_SHIFT);
	d->nrg = htole32(f->nrg);
	d->nruh = htole16(f->nruh);
	d->maxpids = htole16((uint16_t)(f->nruh - 1));
	d->nnss = htole32(UCMD_MAX_NS);
	d->runs = htole64(f->ru_size);
	d->erutl = htole32(f->rutl);
	for (unsigned i = 0; i < f->nruh; i++)
		d->ruhs[i].ruht = f->persistent ? NVME_FDP_RUHT_PERSISTENTLY_ISOLATED
						: NVME_FDP_RUHT_INITIALLY_ISOLATED;
}

static void log_usage(struct ucmd_ctrl *c, uint8_t *buf)
{
	const struct ctrl_fdp *f = c->fdp;
	struct nvme_fdp_ruhu_log *l = (void *)buf;

	l->nruh = htole16(f->nruh);
	/*
	 * Host Specified: in some namespace's placement handle list; a handle
	 * in none is Unused (0h). The controller specifies none by itself.
	 */
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++) {
		const struct ctrl_ns *ns = c->ns[i];

		if (!ns || !ns->fdpm)
			continue;
		for (uint16_t h = 0; h < ns_nph(f, ns); h++) {
			uint16_t ruh;

			if (ns_ruh(f, ns, h, &ruh))
				l->ruhus[ruh].ruha = 1u << NVME_FDP_RUHA_HOST_SHIFT;
		}
	}
}

static void put128(uint8_t dst[16], uint64_t v)
{
	memset(dst, 0, 16);
	v = htole64(v);
	memcpy(dst, &v, sizeof(v));
}

static void log_events(const struct ctrl_fdp_event_ring *r, uint8_t *buf)
{
	struct nvme_fdp_events_log *l = (void *)buf;

	l->n = htole32(r->n);
	/* oldest first */
	for (uint32_t i = 0; i < r->n; i++)
		l->events[i] = r->ev[(r->next + UCMD_FDP_EVENTS - r->n + i) % UCMD_FDP_EVENTS];
}

uint16_t ctrl_fdp_get_log(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_fdp *f = c->fdp;
	uint8_t lid = req->cmd.cdw10 & 0xff, lsp = (req->cmd.cdw10 >> 8) & 0x7f;
	uint16_t lsi = (uint16_t)(req->cmd.cdw11 >> 16);
	uint64_t numd = ((uint64_t)(req->cmd.cdw11 & 0xffff) << 16 | (req->cmd.cdw10 >> 16)) + 1;
	uint64_t len = numd * 4, off = (uint64_t)req->cmd.cdw13 << 32 | req->cmd.cdw12;
	struct ctrl_iovs v;
	size_t size;
	uint8_t *buf;
	uint16_t st;

	if (!f)
		return UCMD_CMD(NVME_SC_INVALID_LOG_PAGE) | UCMD_DNR;
	/* endurance group scope: LSI names the group */
	if (lsi != UCMD_FDP_ENDGID || (off & 3))
		return ST_INVALID;
	if (lid != NVME_LOG_LID_FDP_CONFIGS && !f->enabled)
		return UCMD_ST_FDP_DISABLED;
	/* a look at the logs finds what the wall clock did to the units */
	ctrl_fdp_expire_all(c);
	switch (lid) {
	case NVME_LOG_LID_FDP_CONFIGS:
		size = sizeof(struct nvme_fdp_config_log) + config_size(f);
		break;
	case NVME_LOG_LID_FDP_RUH_USAGE:
		size = sizeof(struct nvme_fdp_ruhu_log) + f->nruh * sizeof(struct nvme_fdp_ruhu_desc);
		break;
	case NVME_LOG_LID_FDP_STATS:
		size = sizeof(struct nvme_fdp_stats_log);
		break;
	default:
		if (lsp & ~LSP_HOST_EVENTS)
			return ST_INVALID;
		size = sizeof(struct nvme_fdp_events_log);
		break;
	}
	if (off >= size)
		return ST_INVALID;
	buf = calloc(1, size);
	if (!buf)
		return ST_INTERNAL;
	switch (lid) {
	case NVME_LOG_LID_FDP_CONFIGS: log_configs(f, buf, size); break;
	case NVME_LOG_LID_FDP_RUH_USAGE: log_usage(c, buf); break;
	case NVME_LOG_LID_FDP_STATS: {
		struct nvme_fdp_stats_log *s = (void *)buf;

		put128(s->hbmw, f->hbmw);
		put128(s->mbmw, f->mbmw);
		put128(s->mbe, f->mbe);
		break;
	}
	default:
		log_events(lsp & LSP_HOST_EVENTS ? &f->host_ev : &f->ctrl_ev, buf);
	}
	ctrl_iovs_init(&v);
	st = ctrl_map_data(c, req, len, &v);
	if (!st) {
		uint64_t n = size - off < len ? size - off : len;

		st = ctrl_iovs_copy_out(&v, buf + off, n);
		if (!st)
			st = ctrl_iovs_zero_from(&v, n);
	}
	ctrl_iovs_free(&v);
	free(buf);
	return st;
}

/* ---- features ---- */

bool ctrl_fdp_is_feature(uint8_t fid)
{
	return fid == NVME_FEAT_FID_FDP || fid == NVME_FEAT_FID_FDP_EVENTS;
}

static bool ns_exist(struct ucmd_ctrl *c)
{
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i])
			return true;
	return false;
}

/* The handle of Feature 1Eh: PHNDL of an active namespace, as its RUH */
static uint16_t events_handle(struct ucmd_ctrl *c, struct ctrl_req *req, uint16_t *ph)
{
	struct ctrl_ns *ns = ctrl_ns_active(c, req->cmd.nsid);

	if (!ns)
		return ST_INVALID_NS;
	if (!c->fdp->enabled)
		return UCMD_ST_FDP_DISABLED;
	return ns_ruh(c->fdp, ns, (uint16_t)(req->cmd.cdw11 & 0xffff), ph) ? 0 : ST_INVALID;
}

uint16_t ctrl_fdp_get_feature(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_fdp *f = c->fdp;
	uint8_t fid = req->cmd.cdw10 & 0xff, sel = (req->cmd.cdw10 >> 8) & 7;
	struct nvme_fdp_supported_event_desc d[NR_EV_TYPES];
	unsigned noet = (req->cmd.cdw11 >> 16) & 0xff, n;
	uint16_t ph, st;

	if (!f || sel > 3)
		return ST_INVALID;
	if (sel == 3) {
		/* changeable; 1Eh is per namespace */
		req->dw0 = 1u << 2 | (fid == NVME_FEAT_FID_FDP_EVENTS ? 1u << 1 : 0);
		return 0;
	}
	if (fid == NVME_FEAT_FID_FDP) {
		if ((req->cmd.cdw11 & 0xffff) != UCMD_FDP_ENDGID)
			return ST_INVALID;
		/* the default is the configuration the controller was made with */
		req->dw0 = sel == 1 ? 1 : f->enabled;
		return 0;
	}
	if ((st = events_handle(c, req, &ph)))
		return st;
	n = noet < NR_EV_TYPES ? noet : NR_EV_TYPES;
	for (unsigned i = 0; i < n; i++) {
		d[i].evt = ev_types[i];
		d[i].evta = sel == 1 ? 0 : (f->ev_mask[ph] >> i) & 1;
	}
	req->dw0 = n;
	return ctrl_data_to_host(c, req, d, n * sizeof(d[0]));
}

uint16_t ctrl_fdp_set_feature(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_fdp *f = c->fdp;
	uint8_t fid = req->cmd.cdw10 & 0xff, types[256], mask = 0;
	unsigned noet = (req->cmd.cdw11 >> 16) & 0xff;
	bool enable = req->cmd.cdw12 & 1;
	uint16_t ph, st;

	if (!f)
		return ST_INVALID;
	if (fid == NVME_FEAT_FID_FDP) {
		uint8_t cidx = (req->cmd.cdw12 >> 8) & 0xff;

		if ((req->cmd.cdw11 & 0xffff) != UCMD_FDP_ENDGID || (enable && cidx))
			return ST_INVALID;
		if (enable == f->enabled)
			return 0;
		/* the configuration of a group changes only while it holds no namespace */
		if (ns_exist(c))
			return ST_SEQ;
		f->enabled = enable;
		/* statistics are of the life of a configuration */
		f->hbmw = f->mbmw = f->mbe = 0;
		memset(&f->host_ev, 0, sizeof(f->host_ev));
		memset(&f->ctrl_ev, 0, sizeof(f->ctrl_ev));
		memset(f->ev_mask, 0, sizeof(f->ev_mask));
		ctrl_persist(c);
		return 0;
	}
	if ((st = events_handle(c, req, &ph)))
		return st;
	if (!noet)
		return ST_INVALID;
	if ((st = ctrl_data_from_host(c, req, types, noet)))
		return st;
	for (unsigned i = 0; i < noet; i++) {
		int bit = ev_bit(types[i]);

		if (bit < 0)
			return ST_INVALID;
		mask |= (uint8_t)(1u << bit);
	}
	if (enable)
		f->ev_mask[ph] |= mask;
	else
		f->ev_mask[ph] &= (uint8_t)~mask;
	return 0;
}

/* ---- I/O Management ---- */

uint16_t ctrl_fdp_io_mgmt_recv(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_ns *ns = ctrl_ns_active(c, req->cmd.nsid);
	uint8_t mo = req->cmd.cdw10 & 0xff;
	uint64_t len = ((uint64_t)req->cmd.cdw11 + 1) * 4;
	struct ctrl_fdp *f = c->fdp;
	struct nvme_fdp_ruh_status *hdr;
	struct ctrl_iovs v;
	uint64_t now;
	uint32_t nd;
	size_t size;
	uint16_t st;

	if (!ns)
		return ST_INVALID_NS;
	if (mo != NVME_IO_MGMT_RECV_RUH_STATUS)
		return ST_INVALID;
	if (!f || !f->enabled || !ns->fdpm)
		return UCMD_ST_FDP_DISABLED;
	ctrl_fdp_expire_all(c);
	now = realtime_ms();
	/* a descriptor per reclaim group and handle of the namespace's list */
	nd = (uint32_t)f->nrg * ns_nph(f, ns);
	size = sizeof(*hdr) + nd * sizeof(hdr->ruhss[0]);
	hdr = calloc(1, size);
	if (!hdr)
		return ST_INTERNAL;
	hdr->nruhsd = htole16((uint16_t)nd);
	for (uint32_t i = 0; i < nd; i++) {
		uint16_t rg = (uint16_t)(i / ns_nph(f, ns)), ph = (uint16_t)(i % ns_nph(f, ns)), ruh;

		if (!ns_ruh(f, ns, ph, &ruh))
			continue;	/* a list of another configuration: no such handle */
		hdr->ruhss[i].pid = htole16(make_pid(f, rg, ph));
		hdr->ruhss[i].ruhid = htole16(ruh);
		hdr->ruhss[i].ruamw = htole64(fdp_media_ruamw(ns->fdpm,
							      (uint32_t)rg * f->nruh + ruh));
		/* EARUTR: the seconds left of the time limit, rounded up (0: no limit) */
		if (f->rutl) {
			uint64_t lim = (uint64_t)f->rutl * 1000, act = fdp_media_active_ms(
				ns->fdpm, (uint32_t)rg * f->nruh + ruh, now);

			hdr->ruhss[i].earutr = htole32((uint32_t)((lim - (act < lim ? act : lim) +
								   999) / 1000));
		}
	}
	ctrl_iovs_init(&v);
	st = ctrl_map_data(c, req, len, &v);
	if (!st) {
		uint64_t n = size < len ? size : len;

		st = ctrl_iovs_copy_out(&v, hdr, n);
		if (!st)
			st = ctrl_iovs_zero_from(&v, n);
	}
	ctrl_iovs_free(&v);
	free(hdr);
	return st;
}

uint16_t ctrl_fdp_io_mgmt_send(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_ns *ns = ctrl_ns_active(c, req->cmd.nsid);
	uint8_t mo = req->cmd.cdw10 & 0xff;
	uint32_t npid = (req->cmd.cdw10 >> 16) + 1;
	struct ctrl_fdp *f = c->fdp;
	uint16_t pids[UCMD_FDP_MAX_RUH * UCMD_FDP_MAX_RG], rg[UCMD_FDP_MAX_RUH * UCMD_FDP_MAX_RG];
	uint16_t ph[UCMD_FDP_MAX_RUH * UCMD_FDP_MAX_RG], st;

	if (!ns)
		return ST_INVALID_NS;
	if (mo != NVME_IO_MGMT_SEND_RUH_UPDATE)
		return ST_INVALID;
	if (!f || !f->enabled || !ns->fdpm)
		return UCMD_ST_FDP_DISABLED;
	if (npid > (uint32_t)f->nrg * f->nruh)
		return ST_INVALID;
	if ((st = ctrl_data_from_host(c, req, pids, npid * sizeof(pids[0]))))
		return st;
	/* all of them valid, or none is updated */
	for (uint32_t i = 0; i < npid; i++)
		if (!parse_pid(f, le16toh(pids[i]), &rg[i], &ph[i]) ||
		    !ns_ruh(f, ns, ph[i], &ph[i]))
			return ST_INVALID;
	for (uint32_t i = 0; i < npid; i++) {
		uint32_t s = (uint32_t)rg[i] * f->nruh + ph[i];

		if (fdp_media_ruh_update(ns->fdpm, s))
			event_add(c, ns, true, NVME_FDP_EVENT_RUNFW, (uint16_t)s);
	}
	return 0;
}
