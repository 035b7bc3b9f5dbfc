/* SPDX-License-Identifier: MIT */
/*
 * The Zoned Namespace Command Set's own commands: Zone Management Send
 * (79h), Zone Management Receive (7Ah) and Zone Append (7Dh). Every check
 * comes before the first change, so a command that fails changes nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "zns.h"

#define ST_INVALID	(UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR)
#define ST_INVALID_NS	(UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR)
#define ST_LBA_RANGE	(UCMD_GEN(NVME_SC_LBA_RANGE) | UCMD_DNR)
#define ST_INTERNAL	UCMD_GEN(NVME_SC_INTERNAL)
#define ZST(sc)		(UCMD_CMD(sc) | UCMD_DNR)
#define ZMS_SELECT_ALL	(1u << 8)
#define ZMR_PARTIAL	(1u << 16)
#define DESC_LEN	sizeof(struct nvme_zns_desc)
#define HDR_LEN		sizeof(struct nvme_zone_report)

static const struct ctrl_ctrl_opdef zns_cmds[256] = {
	/* resets deallocate, finishes move write pointers */
	[nvme_zns_cmd_mgmt_send] = { ctrl_zns_mgmt_send, NVME_CMD_EFFECTS_CSUPP |
							  NVME_CMD_EFFECTS_LBCC },
	[nvme_zns_cmd_mgmt_recv] = { ctrl_zns_mgmt_recv, NVME_CMD_EFFECTS_CSUPP },
	[nvme_zns_cmd_append]    = { ctrl_zns_append, NVME_CMD_EFFECTS_CSUPP |
						       NVME_CMD_EFFECTS_LBCC },
};

const struct ctrl_ctrl_opdef *ctrl_zns_op(uint8_t opcode)
{
	return &zns_cmds[opcode];
}

static uint16_t zoned_ns(struct ucmd_ctrl *c, const struct ctrl_req *req, struct ctrl_ns **ns)
{
	*ns = ctrl_ns_active(c, req->cmd.nsid);
	if (!*ns)
		return ST_INVALID_NS;
	/* the command set's opcodes mean nothing to an NVM namespace */
	if (!(*ns)->zoned)
		return UCMD_GEN(NVME_SC_INVALID_OPCODE) | UCMD_DNR;
	return 0;
}

/* The zone that starts at slba: LBA Out of Range past the end, Invalid Field inside a zone */
static uint16_t zone_at(const struct ctrl_ns *ns, uint64_t slba, uint32_t *zid)
{
	const struct ctrl_zoned *zn = ns->zoned;

	if (slba >= ns->nsze)
		return ST_LBA_RANGE;
	if (slba % zn->zsze)
		return ST_INVALID;
	*zid = (uint32_t)(slba / zn->zsze);
	return 0;
}

typedef uint16_t (*zone_fn)(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid);

/* Select All: fn on every zone in one of the states of mask (bit per state) */
static uint16_t for_all(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t mask, zone_fn fn)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint16_t st;

	for (uint32_t z = 0; z < zn->nr_zones; z++)
		if ((mask & (1u << ctrl_zone_state(zn, z))) && (st = fn(c, ns, z)))
			return st;
	return 0;
}

static uint16_t open_all(struct ucmd_ctrl *c, struct ctrl_ns *ns)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint32_t closed = 0;
	uint16_t st;

	for (uint32_t z = 0; z < zn->nr_zones; z++)
		closed += ctrl_zone_state(zn, z) == NVME_ZNS_ZS_CLOSED;
	/* all of them or none: the resources are checked for the lot first */
	st = ctrl_zone_room(c, ns, 0, closed, false);
	if (st)
		return st;
	/*
	 * Open exactly the zones that were Closed when the command began, and
	 * only then close the oldest implicitly opened zones for room. Making
	 * room zone by zone would close an implicitly opened zone that a later
	 * step of the same loop finds Closed and opens in turn, until a step
	 * fails with zones already changed. Closed to open takes no active
	 * resource, so the count checked above is all this needs.
	 */
	for (uint32_t z = 0; z < zn->nr_zones; z++)
		if (ctrl_zone_state(zn, z) == NVME_ZNS_ZS_CLOSED)
			ctrl_zone_set_state(ns, z, NVME_ZNS_ZS_EXPL_OPEN);
	return ctrl_zone_room(c, ns, 0, 0, true);
}

static uint16_t reset_one(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid)
{
	/* an Empty zone holds nothing to deallocate */
	if (ctrl_zone_state(ns->zoned, zid) == NVME_ZNS_ZS_EMPTY)
		return 0;
	return ctrl_zone_reset(c, ns, zid);
}

static uint16_t set_ext(struct ucmd_ctrl *c, struct ctrl_req *req, struct ctrl_ns *ns,
			uint32_t zid)
{
	struct ctrl_zoned *zn = ns->zoned;
	size_t len = (size_t)zn->zdes * 64;
	uint8_t *buf;
	uint16_t st;

	if (!zn->zdes)
		return ST_INVALID;
	if (ctrl_zone_state(zn, zid) != NVME_ZNS_ZS_EMPTY)
		return ZST(NVME_SC_ZNS_INVAL_TRANSITION);
	/* the zone becomes Closed: it takes an active resource */
	st = ctrl_zone_room(c, ns, 1, 0, false);
	if (st)
		return st;
	buf = malloc(len);
	if (!buf)
		return ST_INTERNAL;
	st = ctrl_data_from_host(c, req, buf, len);
	if (!st) {
		memcpy(zn->ext + (size_t)zid * len, buf, len);
		zn->z[zid].za |= NVME_ZNS_ZA_ZDEV;
		ctrl_zone_set_state(ns, zid, NVME_ZNS_ZS_CLOSED);
	}
	free(buf);
	return st;
}

#define M(zs)	(1u << NVME_ZNS_ZS_##zs)

uint16_t ctrl_zns_mgmt_send(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint64_t slba = (uint64_t)req->cmd.cdw11 << 32 | req->cmd.cdw10;
	uint8_t zsa = req->cmd.cdw13 & 0xff;
	bool all = req->cmd.cdw13 & ZMS_SELECT_ALL;
	struct ctrl_ns *ns;
	uint32_t zid = 0;
	uint16_t st;

	if ((st = zoned_ns(c, req, &ns)))
		return st;
	/* Select All ignores the SLBA; ZSASO (ZRWA) is not supported */
	if (req->cmd.cdw13 & ~(0xffu | ZMS_SELECT_ALL))
		return ST_INVALID;
	if (!all && (st = zone_at(ns, slba, &zid)))
		return st;
	switch (zsa) {
	case NVME_ZNS_ZSA_CLOSE:
		st = all ? for_all(c, ns, M(IMPL_OPEN) | M(EXPL_OPEN), ctrl_zone_close)
			 : ctrl_zone_close(c, ns, zid);
		break;
	case NVME_ZNS_ZSA_FINISH:
		st = all ? for_all(c, ns, M(IMPL_OPEN) | M(EXPL_OPEN) | M(CLOSED), ctrl_zone_finish)
			 : ctrl_zone_finish(c, ns, zid);
		break;
	case NVME_ZNS_ZSA_OPEN:
		st = all ? open_all(c, ns) : ctrl_zone_open(c, ns, zid, false);
		break;
	case NVME_ZNS_ZSA_RESET:
		st = all ? for_all(c, ns, M(IMPL_OPEN) | M(EXPL_OPEN) | M(CLOSED) | M(FULL),
				   reset_one)
			 : reset_one(c, ns, zid);
		break;
	case NVME_ZNS_ZSA_OFFLINE:
		st = all ? for_all(c, ns, M(READ_ONLY), ctrl_zone_offline)
			 : ctrl_zone_offline(c, ns, zid);
		break;
	case NVME_ZNS_ZSA_SET_DESC_EXT:
		st = all ? ST_INVALID : set_ext(c, req, ns, zid);
		break;
	default:
		return ST_INVALID;
	}
	return st;
}

static bool report_match(uint8_t zrasf, uint8_t zs)
{
	static const uint8_t want[8] = {
		0, NVME_ZNS_ZS_EMPTY, NVME_ZNS_ZS_IMPL_OPEN, NVME_ZNS_ZS_EXPL_OPEN,
		NVME_ZNS_ZS_CLOSED, NVME_ZNS_ZS_FULL, NVME_ZNS_ZS_READ_ONLY, NVME_ZNS_ZS_OFFLINE,
	};

	return zrasf == NVME_ZNS_ZRAS_REPORT_ALL || want[zrasf] == zs;
}

static void fill_desc(const struct ctrl_zoned *zn, uint32_t zid, struct nvme_zns_desc *d)
{
	const struct ctrl_zone_rec *z = &zn->z[zid];

	memset(d, 0, sizeof(*d));
	d->zt = NVME_ZONE_TYPE_SEQWRITE_REQ;
	d->zs = (uint8_t)(z->zs << 4);
	d->za = z->za;
	d->zcap = htole64(zn->zcap);
	d->zslba = htole64(ctrl_zone_slba(zn, zid));
	/* the write pointer means nothing in Full, Read Only and Offline */
	if (z->zs == NVME_ZNS_ZS_FULL || z->zs == NVME_ZNS_ZS_READ_ONLY ||
	    z->zs == NVME_ZNS_ZS_OFFLINE)
		d->wp = htole64(UINT64_MAX);
	else
		d->wp = z->wp;
}

uint16_t ctrl_zns_mgmt_recv(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint64_t slba = (uint64_t)req->cmd.cdw11 << 32 | req->cmd.cdw10;
	uint64_t len = ((uint64_t)req->cmd.cdw12 + 1) * 4, total = 0, n = 0, used, cap;
	uint8_t zra = req->cmd.cdw13 & 0xff, zrasf = (req->cmd.cdw13 >> 8) & 0xff;
	bool partial = req->cmd.cdw13 & ZMR_PARTIAL;
	struct nvme_zone_report *hdr;
	struct ctrl_zoned *zn;
	struct ctrl_iovs v;
	struct ctrl_ns *ns;
	size_t ent;
	uint8_t *buf;
	uint16_t st;

	if ((st = zoned_ns(c, req, &ns)))
		return st;
	zn = ns->zoned;
	if (zra > NVME_ZNS_ZRA_EXTENDED_REPORT_ZONES || zrasf > NVME_ZNS_ZRAS_REPORT_OFFLINE ||
	    (req->cmd.cdw13 & ~(0xffffu | ZMR_PARTIAL)))
		return ST_INVALID;
	if (zra == NVME_ZNS_ZRA_EXTENDED_REPORT_ZONES && !zn->zdes)
		return ST_INVALID;
	if (slba >= ns->nsze)
		return ST_LBA_RANGE;
	/* not even the header fits */
	if (len < HDR_LEN)
		return ST_INVALID;
	ent = DESC_LEN + (zra ? (size_t)zn->zdes * 64 : 0);
	/* past MDTS: Invalid Field, before any memory is touched */
	ctrl_iovs_init(&v);
	if ((st = ctrl_map_data(c, req, len, &v)))
		return st;
	cap = (len - HDR_LEN) / ent;
	for (uint32_t z = (uint32_t)(slba / zn->zsze); z < zn->nr_zones; z++)
		total += report_match(zrasf, ctrl_zone_state(zn, z));
	used = HDR_LEN + (total < cap ? total : cap) * ent;
	buf = calloc(1, used);
	if (!buf) {
		ctrl_iovs_free(&v);
		return ST_INTERNAL;
	}
	hdr = (void *)buf;
	for (uint32_t z = (uint32_t)(slba / zn->zsze); z < zn->nr_zones && n < cap; z++) {
		uint8_t *e = buf + HDR_LEN + n * ent;

		if (!report_match(zrasf, ctrl_zone_state(zn, z)))
			continue;
		fill_desc(zn, z, (void *)e);
		if (zra && (zn->z[z].za & NVME_ZNS_ZA_ZDEV))
			memcpy(e + DESC_LEN, zn->ext + (size_t)z * zn->zdes * 64,
			       (size_t)zn->zdes * 64);
		n++;
	}
	hdr->nr_zones = htole64(partial ? n : total);
	st = ctrl_iovs_copy_out(&v, buf, used);
	if (!st)
		st = ctrl_iovs_zero_from(&v, used);
	free(buf);
	ctrl_iovs_free(&v);
	return st;
}

uint16_t ctrl_zns_append(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint64_t zslba = (uint64_t)req->cmd.cdw11 << 32 | req->cmd.cdw10;
	uint64_t nlb = (req->cmd.cdw12 & 0xffff) + 1ull, wp;
	struct nvme_zns_id_ctrl idc;
	struct ctrl_zoned *zn;
	struct ctrl_ns *ns;
	uint32_t zid;
	uint16_t st;

	if ((st = zoned_ns(c, req, &ns)))
		return st;
	zn = ns->zoned;
	/* no protection information: PIREMAP and PRINFO stay clear */
	if (req->cmd.cdw12 & (NVME_IO_ZNS_APPEND_PIREMAP << 16 | 0xfu << 26))
		return ST_INVALID;
	if ((st = zone_at(ns, zslba, &zid)))
		return st;
	memset(&idc, 0, sizeof(idc));
	ctrl_zns_id_ctrl(c, &idc);
	if (idc.zasl && nlb * ctrl_ns_ds(ns) > ((uint64_t)UCMD_PAGE_SIZE << idc.zasl))
		return ST_INVALID;
	if ((st = ctrl_zone_writable(ctrl_zone_state(zn, zid))))
		return st;
	wp = le64toh(zn->z[zid].wp);
	if (wp + nlb > zslba + zn->zcap)
		return ZST(NVME_SC_ZNS_BOUNDARY_ERROR);
	/* a write at the write pointer, which the write path checks and advances */
	req->cmd.opcode = nvme_cmd_write;
	req->cmd.cdw10 = (uint32_t)wp;
	req->cmd.cdw11 = (uint32_t)(wp >> 32);
	st = ctrl_nvm_rw(c, req);
	req->cmd.opcode = nvme_zns_cmd_append;
	req->cmd.cdw10 = (uint32_t)zslba;
	req->cmd.cdw11 = (uint32_t)(zslba >> 32);
	if (st)
		return st;
	/* the LBA the data went to, in DW0 (low) and DW1 (high) */
	req->dw0 = (uint32_t)wp;
	req->dw1 = (uint32_t)(wp >> 32);
	return 0;
}
