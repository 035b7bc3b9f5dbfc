/* SPDX-License-Identifier: MIT */
/*
 * Zoned namespaces (Zoned Namespace Command Set 1.1, CSI 02h): the zone
 * state of a namespace, the checks the NVM commands make against it, and
 * the command set's own commands. Protected by ctrl->lock like the rest.
 */
#ifndef UCMD_NVME_CTRL_ZNS_H
#define UCMD_NVME_CTRL_ZNS_H

#include "ctrl_int.h"

/*
 * One zone as nsN.zones keeps it (little-endian, 16 bytes): the write
 * pointer and the state (enum nvme_zns_zs) and attributes (enum
 * nvme_zns_za). The file is mapped: a store is in the page cache at once,
 * so a killed process loses nothing it acknowledged (zns_persist.c).
 */
struct ctrl_zone_rec {
	uint64_t wp;
	uint8_t zs, za;
	uint8_t rsvd[6];
};

#define CTRL_ZONE_NONE	UINT32_MAX

struct ctrl_zoned {
	uint64_t zsze, zcap;		/* blocks */
	uint32_t nr_zones;
	uint32_t mor, mar;		/* counts (not 0's based); 0: no limit */
	uint32_t nr_open, nr_active;
	uint8_t zdes, zasl;
	bool cross_read;
	struct ctrl_zone_rec *z;	/* [nr_zones], in the mapping when persistent */
	uint8_t *ext;			/* [nr_zones][zdes * 64] */
	/* implicitly opened zones, oldest first: the one to close for room */
	uint32_t *imp_prev, *imp_next;
	uint32_t imp_head, imp_tail;
	void *map;			/* nsN.zones, or NULL (RAM) */
	size_t map_len;
	/* Changed Zone List (log BFh) */
	uint64_t changed[NVME_ZNS_CHANGED_ZONES_MAX];
	unsigned nr_changed;
	bool changed_overflow;
};

/* zns.c */
/* Set up the zones of a new namespace (all Empty) or of a loaded one */
int  ctrl_zns_init(struct ucmd_ctrl *c, struct ctrl_ns *ns, const struct ucmd_zns_params *zp,
		    bool create);
void ctrl_zns_free(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool remove_file);
/* What the namespace's parameters say (for ctrl.json) */
void ctrl_zns_params(const struct ctrl_ns *ns, struct ucmd_zns_params *zp);
/* Every zone back to Empty after a format (the block size may change) */
uint16_t ctrl_zns_format(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t old_ds);
/* The data is gone (sanitize, format): every zone Empty, a failed one Offline */
void ctrl_zns_erase(struct ctrl_ns *ns);
/* Open zones are closed at a controller reset */
void ctrl_zns_reset(struct ucmd_ctrl *c);
/*
 * The NVM commands on a zoned namespace: a read (nothing changes) or a
 * write of [slba, slba + nlb), checked before any data moves, then (write)
 * committed: the zone opened, its write pointer advanced.
 */
uint16_t ctrl_zns_read_check(struct ctrl_ns *ns, uint64_t slba, uint64_t nlb);
uint16_t ctrl_zns_write_check(struct ctrl_ns *ns, uint64_t slba, uint64_t nlb);
void ctrl_zns_write_commit(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba,
			    uint64_t nlb, bool fua);
/* Flush: the zone state reaches the disk with the data */
int  ctrl_zns_flush(struct ctrl_ns *ns);
/* The command set's commands; NULL fn for an opcode it does not add */
const struct ctrl_ctrl_opdef *ctrl_zns_op(uint8_t opcode);
/* Identify: CNS 05h and 06h for CSI 02h */
void ctrl_zns_id_ns(struct ucmd_ctrl *c, const struct ctrl_ns *ns, struct nvme_zns_id_ns *id);
void ctrl_zns_id_ctrl(struct ucmd_ctrl *c, struct nvme_zns_id_ctrl *id);
/* Log BFh for a namespace (read clears it unless rae) */
uint16_t ctrl_zns_log_changed(struct ucmd_ctrl *c, uint32_t nsid, bool rae,
			       struct nvme_zns_changed_zone_log *l);
/*
 * Media failure (a test knob, as a worn device does it on its own): zone
 * zid becomes Read Only or Offline, and the host hears of it through the
 * Changed Zone List and a Zone Descriptor Changed notice.
 */
int  ctrl_zns_fail_zone(struct ucmd_ctrl *c, uint32_t nsid, uint32_t zid, bool offline);

/* zns_mgmt.c: Zone Management Send/Receive, Zone Append */
uint16_t ctrl_zns_mgmt_send(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_zns_mgmt_recv(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_zns_append(struct ucmd_ctrl *c, struct ctrl_req *req);

/* zns.c, for zns_mgmt.c: the state machine */
static inline uint8_t ctrl_zone_state(const struct ctrl_zoned *zn, uint32_t zid)
{
	return zn->z[zid].zs;
}
/*
 * Whether a write or an append may go to a zone in state zs: 0, or the
 * status of a Full, Read Only or Offline zone. The write pointer's own
 * rules come after.
 */
static inline uint16_t ctrl_zone_writable(uint8_t zs)
{
	switch (zs) {
	case NVME_ZNS_ZS_FULL:
		return UCMD_CMD(NVME_SC_ZNS_FULL) | UCMD_DNR;
	case NVME_ZNS_ZS_READ_ONLY:
		return UCMD_CMD(NVME_SC_ZNS_READ_ONLY) | UCMD_DNR;
	case NVME_ZNS_ZS_OFFLINE:
		return UCMD_CMD(NVME_SC_ZNS_OFFLINE) | UCMD_DNR;
	}
	return 0;
}
static inline uint64_t ctrl_zone_slba(const struct ctrl_zoned *zn, uint32_t zid)
{
	return (uint64_t)zid * zn->zsze;
}
uint16_t ctrl_zone_open(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid, bool implicit);
uint16_t ctrl_zone_close(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid);
uint16_t ctrl_zone_finish(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid);
uint16_t ctrl_zone_reset(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid);
uint16_t ctrl_zone_offline(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid);
/* Room for n more open (and act more active) zones, closing implicitly opened ones */
uint16_t ctrl_zone_room(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t act, uint32_t opn,
			 bool make);
void ctrl_zone_set_state(struct ctrl_ns *ns, uint32_t zid, uint8_t zs);
void ctrl_zone_changed(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t zid);

/* zns_persist.c: nsN.zones */
int  ctrl_zns_map(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool create);
void ctrl_zns_unmap(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool remove_file);
int  ctrl_zns_sync(struct ctrl_ns *ns);

#endif /* UCMD_NVME_CTRL_ZNS_H */
