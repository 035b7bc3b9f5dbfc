/* SPDX-License-Identifier: MIT */
/*
 * Zoned namespaces: geometry, the zone state machine with its open and
 * active resource limits (ZNS 1.1 section 2.1.1), the write pointer rules
 * the NVM commands obey on a zoned namespace, Identify data, and the
 * Changed Zone List. The commands of the set are in zns_mgmt.c, the state
 * file in zns_persist.c.
 *
 * Resources: a zone in an open state holds an open and an active resource,
 * a Closed zone an active one. When opening a zone needs an open resource
 * and all are held, the oldest implicitly opened zone is closed to make
 * room, as the spec allows and QEMU does; with none to close the command
 * fails with Too Many Open Zones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "zns.h"

#define ST_INVALID	(UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR)
#define ST_LBA_RANGE	(UCMD_GEN(NVME_SC_LBA_RANGE) | UCMD_DNR)
#define ZST(sc)		(UCMD_CMD(sc) | UCMD_DNR)
/* Notice information of a Zone Descriptor Changed event (ZNS 1.1; libnvme has no name) */
#define AER_NOTICE_ZONE_DESCR_CHANGED	0xef

static bool zs_open(uint8_t zs)
{
	return zs == NVME_ZNS_ZS_IMPL_OPEN || zs == NVME_ZNS_ZS_EXPL_OPEN;
}

static bool zs_active(uint8_t zs)
{
	return zs_open(zs) || zs == NVME_ZNS_ZS_CLOSED;
}

static void imp_unlink(struct ctrl_zoned *zn, uint32_t zid)
{
	uint32_t p = zn->imp_prev[zid], n = zn->imp_next[zid];

	if (p == CTRL_ZONE_NONE)
		zn->imp_head = n;
	else
		zn->imp_next[p] = n;
	if (n == CTRL_ZONE_NONE)
		zn->imp_tail = p;
	else
		zn->imp_prev[n] = p;
}

static void imp_append(struct ctrl_zoned *zn, uint32_t zid)
{
	zn->imp_prev[zid] = zn->imp_tail;
	zn->imp_next[zid] = CTRL_ZONE_NONE;
	if (zn->imp_tail == CTRL_ZONE_NONE)
		zn->imp_head = zid;
	else
		zn->imp_next[zn->imp_tail] = zid;
	zn->imp_tail = zid;
}

void ctrl_zone_set_state(struct ctrl_ns *ns, uint32_t zid, uint8_t zs)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint8_t old = zn->z[zid].zs;

	if (old == zs)
		return;
	zn->nr_open -= zs_open(old);
	zn->nr_active -= zs_active(old);
	if (old == NVME_ZNS_ZS_IMPL_OPEN)
		imp_unlink(zn, zid);
	zn->nr_open += zs_open(zs);
	zn->nr_active += zs_active(zs);
	if (zs == NVME_ZNS_ZS_IMPL_OPEN)
		imp_append(zn, zid);
	zn->z[zid].zs = zs;
}

static unsigned imp_count(const struct ctrl_zoned *zn, unsigned upto)
{
	unsigned n = 0;

	for (uint32_t z = zn->imp_head; z != CTRL_ZONE_NONE && n < upto; z = zn->imp_next[z])
		n++;
	return n;
}

uint16_t ctrl_zone_room(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t act, uint32_t opn,
			 bool make)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint64_t over;

	(void)c;
	if (zn->mar && (uint64_t)zn->nr_active + act > zn->mar)
		return ZST(NVME_SC_ZNS_TOO_MANY_ACTIVE);
	if (!zn->mor || (uint64_t)zn->nr_open + opn <= zn->mor)
		return 0;
	over = (uint64_t)zn->nr_open + opn - zn->mor;
	if (over > zn->nr_open || imp_count(zn, (unsigned)over) < over)
		return ZST(NVME_SC_ZNS_TOO_MANY_OPENS);
	while (make && over--)
		ctrl_zone_set_state(ns, zn->imp_head, NVME_ZNS_ZS_CLOSED);
	return 0;
}

uint16_t ctrl_zone_open(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid, bool implicit)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint16_t st;

	switch (zn->z[zid].zs) {
	case NVME_ZNS_ZS_EMPTY:
	case NVME_ZNS_ZS_CLOSED:
		st = ctrl_zone_room(c, ns, zn->z[zid].zs == NVME_ZNS_ZS_EMPTY, 1, true);
		if (st)
			return st;
		ctrl_zone_set_state(ns, zid, implicit ? NVME_ZNS_ZS_IMPL_OPEN
						       : NVME_ZNS_ZS_EXPL_OPEN);
		return 0;
	case NVME_ZNS_ZS_IMPL_OPEN:
		if (!implicit)
			ctrl_zone_set_state(ns, zid, NVME_ZNS_ZS_EXPL_OPEN);
		return 0;
	case NVME_ZNS_ZS_EXPL_OPEN:
		return 0;
	default:
		return ZST(NVME_SC_ZNS_INVAL_TRANSITION);
	}
}

uint16_t ctrl_zone_close(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid)
{
	(void)c;
	switch (ns->zoned->z[zid].zs) {
	case NVME_ZNS_ZS_IMPL_OPEN:
	case NVME_ZNS_ZS_EXPL_OPEN:
		ctrl_zone_set_state(ns, zid, NVME_ZNS_ZS_CLOSED);
		/* fallthrough */
	case NVME_ZNS_ZS_CLOSED:
		return 0;
	default:
		return ZST(NVME_SC_ZNS_INVAL_TRANSITION);
	}
}

uint16_t ctrl_zone_finish(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid)
{
	struct ctrl_zoned *zn = ns->zoned;

	(void)c;
	switch (zn->z[zid].zs) {
	case NVME_ZNS_ZS_EMPTY:
	case NVME_ZNS_ZS_IMPL_OPEN:
	case NVME_ZNS_ZS_EXPL_OPEN:
	case NVME_ZNS_ZS_CLOSED:
		/* the state first: a crash between the two leaves a zone that
		 * load_fixup() still reads as Full */
		ctrl_zone_set_state(ns, zid, NVME_ZNS_ZS_FULL);
		zn->z[zid].wp = htole64(ctrl_zone_slba(zn, zid) + zn->zcap);
		/* fallthrough */
	case NVME_ZNS_ZS_FULL:
		return 0;
	default:
		return ZST(NVME_SC_ZNS_INVAL_TRANSITION);
	}
}

uint16_t ctrl_zone_reset(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint64_t slba = ctrl_zone_slba(zn, zid);
	int ret;

	switch (zn->z[zid].zs) {
	case NVME_ZNS_ZS_IMPL_OPEN:
	case NVME_ZNS_ZS_EXPL_OPEN:
	case NVME_ZNS_ZS_CLOSED:
	case NVME_ZNS_ZS_FULL:
	case NVME_ZNS_ZS_EMPTY:
		break;
	default:
		return ZST(NVME_SC_ZNS_INVAL_TRANSITION);
	}
	/* A reset zone reads as zeros, as a deallocated block does here. */
	ret = ctrl_ns_discard(c, ns, slba, zn->zsze, true);
	if (ret)
		return ctrl_store_status(ret);
	zn->z[zid].wp = htole64(slba);
	zn->z[zid].za = 0;
	ctrl_zone_set_state(ns, zid, NVME_ZNS_ZS_EMPTY);
	if (zn->zdes)
		memset(zn->ext + (size_t)zid * zn->zdes * 64, 0, (size_t)zn->zdes * 64);
	return 0;
}

uint16_t ctrl_zone_offline(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid)
{
	struct ctrl_zoned *zn = ns->zoned;

	(void)c;
	switch (zn->z[zid].zs) {
	case NVME_ZNS_ZS_READ_ONLY:
		ctrl_zone_set_state(ns, zid, NVME_ZNS_ZS_OFFLINE);
		zn->z[zid].za = 0;
		/* fallthrough */
	case NVME_ZNS_ZS_OFFLINE:
		return 0;
	default:
		return ZST(NVME_SC_ZNS_INVAL_TRANSITION);
	}
}

void ctrl_zone_changed(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint64_t slba = ctrl_zone_slba(zn, zid);

	for (unsigned i = 0; i < zn->nr_changed; i++)
		if (zn->changed[i] == slba)
			goto event;
	if (zn->nr_changed < NVME_ZNS_CHANGED_ZONES_MAX)
		zn->changed[zn->nr_changed++] = slba;
	else
		zn->changed_overflow = true;
event:
	/* only when the host asked for Zone Descriptor Changed notices */
	if (c->cur.async_event & NVME_CTRL_OAES_ZD)
		ctrl_event(c, NVME_AER_NOTICE, AER_NOTICE_ZONE_DESCR_CHANGED,
			    NVME_LOG_LID_ZNS_CHANGED_ZONES);
}

int ctrl_zns_fail_zone(struct ucmd_ctrl *c, uint32_t nsid, uint32_t zid, bool offline)
{
	struct ctrl_ns *ns;
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	ns = ctrl_ns_active(c, nsid);
	if (!ns || !ns->zoned || zid >= ns->zoned->nr_zones) {
		ret = -EINVAL;
	} else {
		ctrl_zone_set_state(ns, zid, offline ? NVME_ZNS_ZS_OFFLINE
						      : NVME_ZNS_ZS_READ_ONLY);
		ns->zoned->z[zid].za = 0;
		ctrl_zone_changed(c, ns, zid);
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* The zone of slba (slba < nsze) */
static uint32_t zone_of(const struct ctrl_zoned *zn, uint64_t slba)
{
	return (uint32_t)(slba / zn->zsze);
}

uint16_t ctrl_zns_read_check(struct ctrl_ns *ns, uint64_t slba, uint64_t nlb)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint32_t first = zone_of(zn, slba), last = zone_of(zn, slba + nlb - 1);

	if (first != last && !zn->cross_read)
		return ZST(NVME_SC_ZNS_BOUNDARY_ERROR);
	for (uint32_t z = first; z <= last; z++)
		if (zn->z[z].zs == NVME_ZNS_ZS_OFFLINE)
			return ZST(NVME_SC_ZNS_OFFLINE);
	return 0;
}

uint16_t ctrl_zns_write_check(struct ctrl_ns *ns, uint64_t slba, uint64_t nlb)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint32_t zid = zone_of(zn, slba);
	uint64_t zslba = ctrl_zone_slba(zn, zid);
	const struct ctrl_zone_rec *z = &zn->z[zid];
	uint16_t st = ctrl_zone_writable(z->zs);

	if (st)
		return st;
	if (slba + nlb > zslba + zn->zcap)
		return ZST(NVME_SC_ZNS_BOUNDARY_ERROR);
	if (slba != le64toh(z->wp))
		return ZST(NVME_SC_ZNS_INVALID_WRITE);
	if (z->zs == NVME_ZNS_ZS_EMPTY || z->zs == NVME_ZNS_ZS_CLOSED)
		return ctrl_zone_room(NULL, ns, z->zs == NVME_ZNS_ZS_EMPTY, 1, false);
	return 0;
}

void ctrl_zns_write_commit(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba,
			    uint64_t nlb, bool fua)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint32_t zid = zone_of(zn, slba);
	uint64_t wp = slba + nlb;

	/* checked by ctrl_zns_write_check(): cannot fail */
	(void)ctrl_zone_open(c, ns, zid, true);
	zn->z[zid].wp = htole64(wp);
	if (wp == ctrl_zone_slba(zn, zid) + zn->zcap)
		ctrl_zone_set_state(ns, zid, NVME_ZNS_ZS_FULL);
	if (fua && ctrl_zns_sync(ns)) {
		c->persist_failed = true;
		ctrl_ctrl_fatal(c);
	}
}

int ctrl_zns_flush(struct ctrl_ns *ns)
{
	return ns->zoned ? ctrl_zns_sync(ns) : 0;
}

/* Recount resources; open zones come back Closed (a power cycle closes them) */
static void zones_settle(struct ctrl_ns *ns)
{
	struct ctrl_zoned *zn = ns->zoned;

	zn->nr_open = zn->nr_active = 0;
	zn->imp_head = zn->imp_tail = CTRL_ZONE_NONE;
	for (uint32_t i = 0; i < zn->nr_zones; i++) {
		struct ctrl_zone_rec *z = &zn->z[i];
		uint64_t zslba = ctrl_zone_slba(zn, i), wp = le64toh(z->wp);

		switch (z->zs) {
		case NVME_ZNS_ZS_READ_ONLY:
		case NVME_ZNS_ZS_OFFLINE:
		case NVME_ZNS_ZS_FULL:
			continue;
		}
		/* damaged or torn: a write pointer outside the zone is no data */
		if (wp < zslba || wp > zslba + zn->zcap)
			wp = zslba;
		z->wp = htole64(wp);
		if (wp == zslba + zn->zcap)
			z->zs = NVME_ZNS_ZS_FULL;
		else if (wp == zslba && !(z->za & NVME_ZNS_ZA_ZDEV))
			z->zs = NVME_ZNS_ZS_EMPTY;
		else
			z->zs = NVME_ZNS_ZS_CLOSED;
		zn->nr_active += z->zs == NVME_ZNS_ZS_CLOSED;
	}
}

void ctrl_zns_reset(struct ucmd_ctrl *c)
{
	for (uint32_t i = 1; i <= UCMD_MAX_NS; i++) {
		struct ctrl_ns *ns = c->ns[i];

		if (!ns || !ns->zoned)
			continue;
		for (uint32_t z = 0; z < ns->zoned->nr_zones; z++)
			if (zs_open(ns->zoned->z[z].zs))
				ctrl_zone_set_state(ns, z, NVME_ZNS_ZS_CLOSED);
	}
}

static int zones_alloc(struct ctrl_zoned *zn)
{
	zn->imp_prev = calloc(zn->nr_zones, sizeof(uint32_t));
	zn->imp_next = calloc(zn->nr_zones, sizeof(uint32_t));
	return zn->imp_prev && zn->imp_next ? 0 : -ENOMEM;
}

int ctrl_zns_init(struct ucmd_ctrl *c, struct ctrl_ns *ns, const struct ucmd_zns_params *zp,
		   bool create)
{
	struct ctrl_zoned *zn;
	uint64_t zcap = zp->zone_cap ? zp->zone_cap : zp->zone_size;
	int ret;

	if (!zp->zone_size || zp->zone_size > ns->nsze || zcap > zp->zone_size ||
	    ns->nsze / zp->zone_size > UINT32_MAX - 1)
		return ctrl_ctrl_why(c, -EINVAL, "zone size %llu and capacity %llu blocks do not "
				      "fit a namespace of %llu blocks",
				      (unsigned long long)zp->zone_size, (unsigned long long)zcap,
				      (unsigned long long)ns->nsze);
	if (zp->max_active && zp->max_open > zp->max_active)
		return ctrl_ctrl_why(c, -EINVAL, "max_open %u is more than max_active %u",
				      zp->max_open, zp->max_active);
	zn = calloc(1, sizeof(*zn));
	if (!zn)
		return -ENOMEM;
	zn->zsze = zp->zone_size;
	zn->zcap = zcap;
	zn->nr_zones = (uint32_t)(ns->nsze / zp->zone_size);
	zn->mor = zp->max_open;
	zn->mar = zp->max_active;
	zn->zdes = zp->zdes;
	zn->zasl = zp->zasl;
	zn->cross_read = zp->cross_read;
	/* whole zones only: the tail past the last one is not addressable */
	ns->nsze = (uint64_t)zn->nr_zones * zn->zsze;
	ns->zoned = zn;
	ret = zones_alloc(zn);
	if (!ret)
		ret = ctrl_zns_map(c, ns, create);
	if (ret) {
		ctrl_zns_free(c, ns, false);
		return ret;
	}
	if (create)
		for (uint32_t i = 0; i < zn->nr_zones; i++) {
			zn->z[i].wp = htole64(ctrl_zone_slba(zn, i));
			zn->z[i].zs = NVME_ZNS_ZS_EMPTY;
		}
	zones_settle(ns);
	return 0;
}

void ctrl_zns_free(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool remove_file)
{
	struct ctrl_zoned *zn = ns->zoned;

	if (!zn)
		return;
	ctrl_zns_unmap(c, ns, remove_file);
	free(zn->imp_prev);
	free(zn->imp_next);
	free(zn);
	ns->zoned = NULL;
}

void ctrl_zns_params(const struct ctrl_ns *ns, struct ucmd_zns_params *zp)
{
	const struct ctrl_zoned *zn = ns->zoned;

	memset(zp, 0, sizeof(*zp));
	if (!zn)
		return;
	zp->zone_size = zn->zsze;
	zp->zone_cap = zn->zcap;
	zp->max_open = zn->mor;
	zp->max_active = zn->mar;
	zp->zasl = zn->zasl;
	zp->zdes = zn->zdes;
	zp->cross_read = zn->cross_read;
}

void ctrl_zns_erase(struct ctrl_ns *ns)
{
	struct ctrl_zoned *zn = ns->zoned;

	if (!zn)
		return;
	for (uint32_t i = 0; i < zn->nr_zones; i++) {
		/* a zone whose media failed cannot be erased: it goes offline */
		if (zn->z[i].zs == NVME_ZNS_ZS_READ_ONLY || zn->z[i].zs == NVME_ZNS_ZS_OFFLINE) {
			zn->z[i].zs = NVME_ZNS_ZS_OFFLINE;
		} else {
			zn->z[i].wp = htole64(ctrl_zone_slba(zn, i));
			zn->z[i].zs = NVME_ZNS_ZS_EMPTY;
		}
		zn->z[i].za = 0;
	}
	if (zn->zdes)
		memset(zn->ext, 0, (size_t)zn->nr_zones * zn->zdes * 64);
	zones_settle(ns);
}

uint16_t ctrl_zns_format(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t old_ds)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint32_t ds = ctrl_ns_ds(ns);

	if (!zn)
		return 0;
	/* the zone keeps its size in bytes; its block count follows the format */
	zn->zsze = zn->zsze * old_ds / ds;
	zn->zcap = zn->zcap * old_ds / ds;
	ctrl_zns_erase(ns);
	zn->nr_changed = 0;
	zn->changed_overflow = false;
	(void)c;
	return 0;
}

void ctrl_zns_id_ns(struct ucmd_ctrl *c, const struct ctrl_ns *ns, struct nvme_zns_id_ns *id)
{
	const struct ctrl_zoned *zn = ns->zoned;

	(void)c;
	/* no variable capacity, no zone active excursions */
	id->zoc = 0;
	id->ozcs = htole16(zn->cross_read ? 1 : 0);	/* RAZB */
	/* 0's based, FFFFFFFFh: no limit */
	id->mar = htole32(zn->mar ? zn->mar - 1 : 0xffffffffu);
	id->mor = htole32(zn->mor ? zn->mor - 1 : 0xffffffffu);
	/* the zone size of the current format; its extension for every one */
	for (unsigned i = 0; i < UCMD_NR_LBAF; i++) {
		id->lbafe[i].zsze = htole64(zn->zsze * ctrl_ns_ds(ns) / ctrl_lbaf_ds((uint8_t)i));
		id->lbafe[i].zdes = zn->zdes;
	}
}

void ctrl_zns_id_ctrl(struct ucmd_ctrl *c, struct nvme_zns_id_ctrl *id)
{
	uint8_t zasl = 0;

	/* one controller-wide limit: the smallest any zoned namespace asks for */
	for (uint32_t i = 1; i <= UCMD_MAX_NS; i++) {
		const struct ctrl_ns *ns = c->ns[i];

		if (ns && ns->zoned && ns->zoned->zasl && (!zasl || ns->zoned->zasl < zasl))
			zasl = ns->zoned->zasl;
	}
	if (c->p.mdts && (!zasl || zasl > c->p.mdts))
		zasl = zasl ? c->p.mdts : 0;
	id->zasl = zasl;
}

uint16_t ctrl_zns_log_changed(struct ucmd_ctrl *c, uint32_t nsid, bool rae,
			       struct nvme_zns_changed_zone_log *l)
{
	struct ctrl_ns *ns = ctrl_ns_active(c, nsid);
	struct ctrl_zoned *zn;

	if (!ns || !ns->zoned)
		return UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
	zn = ns->zoned;
	if (zn->changed_overflow) {
		l->nrzid = htole16(0xffff);
	} else {
		l->nrzid = htole16((uint16_t)zn->nr_changed);
		for (unsigned i = 0; i < zn->nr_changed; i++)
			l->zid[i] = htole64(zn->changed[i]);
	}
	if (!rae) {
		zn->nr_changed = 0;
		zn->changed_overflow = false;
	}
	return 0;
}
