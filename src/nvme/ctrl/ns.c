/* SPDX-License-Identifier: MIT */
/*
 * Namespaces: the LBA format table, backing stores and their layout, and the
 * Identify Namespace data derived from them.
 *
 * Store layout: the data of every LBA (nsze * ds bytes), then the metadata of
 * every LBA (nsze * ms bytes). Keeping metadata apart makes the extended and
 * the separate-buffer host layouts two views of the same bytes, so a
 * namespace can be reformatted between them without moving data.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "fdp.h"
#include "zns.h"

/*
 * pif: the extended LBA format's Protection Information Format (2h: 64b
 * guard); sts: its Storage Tag Size, the storage tag's share of the 48-bit
 * Storage and Reference Space (pi.h)
 */
static const struct { uint8_t ds_shift; uint16_t ms; uint8_t pif, sts; } lbafs[UCMD_NR_LBAF] = {
	{ 9, 0, 0, 0 }, { 9, 8, 0, 0 }, { 9, 16, 0, 0 }, { 9, 64, 0, 0 },
	{ 12, 0, 0, 0 }, { 12, 8, 0, 0 }, { 12, 16, 0, 0 }, { 12, 64, 0, 0 },
	{ 9, 16, 2, 0 }, { 9, 64, 2, 0 }, { 12, 16, 2, 0 }, { 12, 64, 2, 0 },
	{ 12, 16, 2, 8 }, { 12, 16, 2, 16 },
};

uint32_t ctrl_lbaf_ds(uint8_t lbaf)
{
	return 1u << lbafs[lbaf % UCMD_NR_LBAF].ds_shift;
}

void ctrl_ns_set_lbaf(struct ctrl_ns *ns, uint8_t lbaf)
{
	ns->lbaf = lbaf;
	ns->lba_shift = lbafs[lbaf % UCMD_NR_LBAF].ds_shift;
	ns->ms = lbafs[lbaf % UCMD_NR_LBAF].ms;
}

uint16_t ctrl_lbaf_ms(uint8_t lbaf)
{
	return lbafs[lbaf % UCMD_NR_LBAF].ms;
}

uint8_t ctrl_lbaf_pif(uint8_t lbaf)
{
	return lbafs[lbaf % UCMD_NR_LBAF].pif;
}

uint8_t ctrl_lbaf_sts(uint8_t lbaf)
{
	return lbafs[lbaf % UCMD_NR_LBAF].sts;
}

bool ctrl_lbaf_pi_fits(uint8_t lbaf)
{
	return ctrl_lbaf_ms(lbaf) >= (ctrl_lbaf_pif(lbaf) ? 16 : 8);
}

struct ctrl_ns *ctrl_ns_active(struct ucmd_ctrl *c, uint32_t nsid)
{
	if (!nsid || nsid > UCMD_MAX_NS || !c->ns[nsid] || !(c->ns[nsid]->attached & ctrl_bit(c)))
		return NULL;
	return c->ns[nsid];
}

/*
 * A file namespace's image is <dir>/nsN.img, opened relative to the
 * directory (dir.c); create makes a new one and never takes over an existing
 * file. A device namespace's path passes dir.c's checks every time.
 */
int ctrl_ns_open_store(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool create)
{
	uint64_t size = ctrl_ns_store_size(ns->nsze, ns->lbaf);

	switch (ns->kind) {
	case UCMD_NS_STORE_FILE:
		return ctrl_dir_image_open(c, ns->nsid, size, create, &ns->st);
	case UCMD_NS_STORE_RAM:
		return store_ram_open(size, &ns->st);
	case UCMD_NS_STORE_DEVICE:
		return ctrl_dir_device_open(c, ns->path, size, &ns->st);
	}
	return -EINVAL;
}

void ctrl_ns_uuid(struct ucmd_ctrl *c, struct ctrl_ns *ns)
{
	(void)c;
	if (getrandom(ns->uuid, sizeof(ns->uuid), 0) != sizeof(ns->uuid)) {
		/* Unique enough without entropy: time and nsid. */
		uint64_t t = ktime_get_ns();

		memcpy(ns->uuid, &t, sizeof(t));
		memcpy(ns->uuid + 8, &ns->nsid, sizeof(ns->nsid));
	}
	ns->uuid[6] = (ns->uuid[6] & 0x0f) | 0x40;	/* RFC 4122 version 4 */
	ns->uuid[8] = (ns->uuid[8] & 0x3f) | 0x80;
}

/* Add a namespace; nsid 0 picks the lowest free one. Returns nsid or -errno. */
int ctrl_ns_add(struct ucmd_ctrl *c, const struct ucmd_ns_params *p, uint32_t nsid)
{
	struct ctrl_ns *ns;
	int ret;

	if (!p || !p->nsze || p->lbaf >= UCMD_NR_LBAF)
		return -EINVAL;
	if (p->store == UCMD_NS_STORE_DEVICE && !p->path)
		return -EINVAL;
	if (!nsid)
		for (uint32_t i = 1; i <= UCMD_MAX_NS && !nsid; i++)
			if (!c->ns[i])
				nsid = i;
	if (!nsid)
		return -ENOSPC;
	if (nsid > UCMD_MAX_NS || c->ns[nsid])
		return -EEXIST;
	if (c->p.ram_capacity && (p->store == UCMD_NS_STORE_RAM || !c->dir) &&
	    p->store != UCMD_NS_STORE_DEVICE) {
		uint64_t used;
		bool over = __builtin_mul_overflow(p->nsze, (uint64_t)ctrl_lbaf_ds(p->lbaf) +
						   ctrl_lbaf_ms(p->lbaf), &used);

		for (uint32_t i = 1; i <= UCMD_MAX_NS && !over; i++)
			if (c->ns[i] && c->ns[i]->kind == UCMD_NS_STORE_RAM)
				over = __builtin_add_overflow(used, ctrl_ns_store_size(
						c->ns[i]->nsze, c->ns[i]->lbaf), &used);
		if (over || used > c->p.ram_capacity)
			return ctrl_ctrl_why(c, -EDQUOT, "RAM namespaces would hold more than "
					      "the controller's ram_capacity of %llu bytes",
					      (unsigned long long)c->p.ram_capacity);
	}
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	/* every storage tag bit checked; Namespace Management sets the host's mask */
	ns->lbstm = ctrl_lbaf_sts(p->lbaf) ? (1ull << ctrl_lbaf_sts(p->lbaf)) - 1 : 0;
	ns->nsid = nsid;
	ns->nsze = p->nsze;
	ctrl_ns_set_lbaf(ns, p->lbaf);
	ns->extended = p->extended && ctrl_lbaf_ms(p->lbaf);
	/* a namespace made attached is attached to every controller of the subsystem */
	ns->attached = p->attach ? ctrl_all_bits(c) : 0;
	/* Without a directory there is nowhere to put a file: stay volatile. */
	ns->kind = (p->store == UCMD_NS_STORE_FILE && !c->dir) ? UCMD_NS_STORE_RAM : p->store;
	/*
	 * The caller names the device: it is resolved once, here, so that the
	 * state file records a path that reopens without following symlinks.
	 */
	if (ns->kind == UCMD_NS_STORE_DEVICE && !(ns->path = realpath(p->path, NULL))) {
		ret = ctrl_ctrl_why(c, -errno, "device path %s: %s", p->path, strerror(errno));
		free(ns);
		return ret;
	}
	ctrl_ns_uuid(c, ns);
	/* a zoned namespace is whole zones: the tail past the last one goes */
	if (p->zoned.zone_size && p->zoned.zone_size <= ns->nsze)
		ns->nsze -= ns->nsze % p->zoned.zone_size;
	/* An existing nsN.img is never reused or deleted here: -EEXIST. */
	ret = ctrl_ns_open_store(c, ns, true);
	if (!ret && p->zoned.zone_size && (ret = ctrl_zns_init(c, ns, &p->zoned, true))) {
		store_close(ns->st);
		if (ns->kind == UCMD_NS_STORE_FILE)
			ctrl_dir_image_remove(c, nsid);
	} else if (!ret && (ret = ctrl_fdp_ns_init(c, ns))) {
		ctrl_zns_free(c, ns, true);
		store_close(ns->st);
		if (ns->kind == UCMD_NS_STORE_FILE)
			ctrl_dir_image_remove(c, nsid);
	}
	if (ret) {
		free(ns->path);
		free(ns);
		return ret;
	}
	c->ns[nsid] = ns;
	return (int)nsid;
}

void ctrl_ns_free(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool remove_file)
{
	c->ns[ns->nsid] = NULL;
	ctrl_zns_free(c, ns, remove_file);
	ctrl_fdp_ns_free(ns);
	if (remove_file)
		ctrl_fdp_remove_model(c, ns->nsid);
	store_close(ns->st);
	if (remove_file && ns->kind == UCMD_NS_STORE_FILE && c->dir)
		ctrl_dir_image_remove(c, ns->nsid);
	ctrl_ranges_clear(&ns->uncor);
	free(ns->path);
	free(ns);
}

int ctrl_ns_discard(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba, uint64_t nlb,
		     bool deallocate)
{
	struct store *st = ns->st;
	uint16_t ms = ctrl_ns_ms(ns);
	int ret;

	/* Nothing changes when the range table could not record the result. */
	if (!ctrl_ranges_remove_fits(&ns->uncor, slba, nlb))
		return -ENOSPC;
	if (deallocate)
		ret = st->ops->deallocate(st, ctrl_ns_data_off(ns, slba), nlb * ctrl_ns_ds(ns));
	else
		ret = st->ops->write_zeroes(st, ctrl_ns_data_off(ns, slba), nlb * ctrl_ns_ds(ns));
	if (!ret && ms) {
		if (deallocate)
			ret = st->ops->deallocate(st, ctrl_ns_meta_off(ns, slba), nlb * ms);
		else
			ret = st->ops->write_zeroes(st, ctrl_ns_meta_off(ns, slba), nlb * ms);
	}
	if (!ret)
		ret = ctrl_ranges_remove(&ns->uncor, slba, nlb);
	/* the media holds no copy of zeroes or of deallocated blocks */
	if (ret >= 0)
		ctrl_fdp_trim(c, ns, slba, nlb);
	if (ret > 0)
		ctrl_persist_range(c, ns, false, slba, nlb);
	return ret < 0 ? ret : 0;
}

void ctrl_ns_fill_id(struct ucmd_ctrl *c, const struct ctrl_ns *ns, struct nvme_id_ns *id)
{
	uint64_t alloc;
	uint32_t ds;

	memset(id, 0, sizeof(*id));
	id->nlbaf = UCMD_NR_LBAF - 1;
	/* Metadata: extended LBA and separate buffer both supported. */
	id->mc = 0x3;
	/* Protection: types 1-3, the tuple first or last in the metadata (pi_io.c) */
	id->dpc = NVME_NS_DPC_PI_TYPE1 | NVME_NS_DPC_PI_TYPE2 | NVME_NS_DPC_PI_TYPE3 |
		  NVME_NS_DPC_PI_FIRST | NVME_NS_DPC_PI_LAST;
	/* Deallocated blocks read as zeros; Write Zeroes may deallocate. */
	id->dlfeat = NVME_NS_DLFEAT_RB_ALL_0S | NVME_NS_DLFEAT_WRITE_ZEROES;
	id->mssrl = htole16(UCMD_COPY_MSSRL);
	id->mcl = htole32(UCMD_COPY_MCL);
	id->msrc = UCMD_COPY_MSRC;
	for (unsigned i = 0; i < UCMD_NR_LBAF; i++) {
		id->lbaf[i].ms = htole16(ctrl_lbaf_ms((uint8_t)i));
		id->lbaf[i].ds = lbafs[i].ds_shift;
		id->lbaf[i].rp = 0;
	}
	if (!ns)
		return;	/* common capabilities (NSID FFFFFFFFh) */
	(void)c;
	ds = ctrl_ns_ds(ns);
	id->nsze = htole64(ns->nsze);
	id->ncap = htole64(ns->nsze);
	alloc = ns->st && ns->st->ops->allocated ? ns->st->ops->allocated(ns->st) : 0;
	if (alloc > ns->nsze * ds)
		alloc = ns->nsze * ds;
	id->nuse = htole64((alloc + ds - 1) / ds);
	/* Thin provisioned: NUSE reports what the store really holds. */
	id->nsfeat = NVME_NS_FEAT_THIN;
	id->flbas = (ns->lbaf & NVME_NS_FLBAS_LOWER_MASK) | (ns->extended ? NVME_NS_FLBAS_META_EXT : 0);
	id->dps = ns->dps;
	/* a zoned namespace takes no PI (the write pointer path has none): say so */
	if (ns->zoned)
		id->dpc = 0;
	uint64_t cap = ns->nsze * ds;
	memcpy(id->nvmcap, &cap, sizeof(cap));
	memcpy(id->nguid, ns->uuid, sizeof(id->nguid));
	memcpy(id->eui64, ns->uuid, sizeof(id->eui64));
	id->endgid = htole16(UCMD_ENDGID);
}
