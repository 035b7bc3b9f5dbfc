/* SPDX-License-Identifier: MIT */
/*
 * Flexible Data Placement (TP4146, NVMe 2.0c/2.1): one endurance group
 * (ENDGID 1) with one FDP configuration, its features, logs and I/O
 * Management commands (fdp.c), and a media model per namespace that places
 * each handle's writes in reclaim units and garbage-collects them
 * (fdp_media.c), so that log 22h shows the write amplification a drive
 * would have. Protected by ctrl->lock like the rest. docs/fdp.md.
 */
#ifndef UCMD_NVME_CTRL_FDP_H
#define UCMD_NVME_CTRL_FDP_H

#include "ctrl_int.h"

#define UCMD_FDP_ENDGID		1
#define UCMD_FDP_MAX_RUH	128	/* a RUH Usage log within 4 KiB */
#define UCMD_FDP_MAX_RG		16
#define UCMD_FDP_DFLT_RUH	8
#define UCMD_FDP_DFLT_RU_SIZE	(1ull << 20)
#define UCMD_FDP_DFLT_OP	7
#define UCMD_FDP_EVENTS		63	/* per log 23h (host, controller) */
/* the model keeps a 32-bit map entry per block (docs/fdp.md) */
#define UCMD_FDP_MAX_BLOCKS	(1ull << 24)
#define FDP_NONE		UINT32_MAX
#define FDP_SHARED		0xffffu	/* owner of a shared GC reclaim unit */

/* Generic status FDP Disabled */
#define UCMD_ST_FDP_DISABLED	(UCMD_GEN(0x29) | UCMD_DNR)

enum { FDP_RU_FREE, FDP_RU_OPEN, FDP_RU_FULL };

struct fdp_ru {
	uint32_t valid, wp;	/* blocks holding live data; blocks written */
	uint32_t sealed;	/* the media's clock when it became full */
	uint16_t owner;		/* stream index (rg * nruh + ruh), FDP_SHARED */
	uint8_t state;
	uint8_t rsvd;
};

/*
 * One namespace's media. Streams: [0, H) the host's handles (H = nrg *
 * nruh, index rg * nruh + ruh), [H, 2H) the GC destination of each handle
 * when handles are persistently isolated, 2H the shared GC destination.
 */
struct fdp_media {
	uint64_t nlba;
	uint32_t bpr, nru;	/* blocks per reclaim unit, reclaim units */
	uint8_t bpr_shift;	/* log2(bpr) if a power of two, else UINT8_MAX */
	uint16_t nruh, nrg;
	bool persistent;
	uint32_t nstreams;
	/*
	 * l2p: [nlba] the block's media index + 1, 0 when unmapped. p2l:
	 * [nru * bpr] the LBA + 1 a media block was written with, kept when
	 * the block dies; vmap: a bit per media block, set while it is live.
	 */
	uint32_t *l2p, *p2l;
	uint64_t *vmap;
	struct fdp_ru *ru;
	uint32_t *stream;	/* [nstreams]: the open unit, FDP_NONE */
	uint32_t *free_next;	/* [nru] */
	uint32_t free_head, nfree;
	uint32_t clock;		/* units filled so far: the age of a unit */
	/*
	 * Wall clock (ms) of each host stream's open unit's first write, 0
	 * without one: a unit's active time, for the reclaim unit time limit.
	 * now_ms is the time of the writes the caller is about to make.
	 */
	uint64_t *opened_ms;	/* [nstreams / 2] */
	uint64_t now_ms;
	/* counted in blocks since the caller last took them */
	uint64_t moved, erased;
	/* called for every unit garbage collection moved data out of */
	void (*realloc)(void *arg, uint16_t owner, uint64_t lba, uint32_t nmoved);
	void *arg;
};

/* fdp_media.c */
/* The units a namespace of nlba blocks gets (0), or -EINVAL past the model's bounds */
int  fdp_media_geometry(uint64_t nlba, uint32_t bpr, uint16_t nruh, uint16_t nrg,
			uint8_t op_pct, bool persistent, uint32_t *nru);
int  fdp_media_init(struct fdp_media *m, uint64_t nlba, uint32_t bpr, uint16_t nruh,
		    uint16_t nrg, uint8_t op_pct, bool persistent);
void fdp_media_free(struct fdp_media *m);
/* Everything erased: every block unmapped, every unit free (format, sanitize) */
void fdp_media_reset(struct fdp_media *m);
/* Blocks [lba, lba + n) written through stream s: -ENOSPC when no unit is left */
int  fdp_media_write(struct fdp_media *m, uint32_t s, uint64_t lba, uint64_t n);
/*
 * A write of lba is on its way: its forward map entry starts towards the
 * caches while the data is copied, so that fdp_media_write() finds it there.
 */
static inline void fdp_media_prefetch(const struct fdp_media *m, uint64_t lba)
{
	__builtin_prefetch(&m->l2p[lba], 1);
}
/* Blocks [lba, lba + n) no longer hold data (deallocate, write zeroes) */
void fdp_media_trim(struct fdp_media *m, uint64_t lba, uint64_t n);
/* The handle moves to a new unit: true if the old one was not fully written */
bool fdp_media_ruh_update(struct fdp_media *m, uint32_t s);
/*
 * The handle's unit has been active (written to) for more than limit_ms at
 * now_ms: the handle moves to a new unit (true), as a RUH update would.
 */
bool fdp_media_expire(struct fdp_media *m, uint32_t s, uint64_t limit_ms, uint64_t now_ms);
/* How long the handle's unit has been active at now_ms (0: none is) */
uint64_t fdp_media_active_ms(const struct fdp_media *m, uint32_t s, uint64_t now_ms);
/* Blocks the handle's unit can still take (RUAMW) */
uint64_t fdp_media_ruamw(const struct fdp_media *m, uint32_t s);
/* Rebuild p2l, vmap and valid counts from l2p and the units; -EINVAL if inconsistent */
int  fdp_media_rebuild(struct fdp_media *m);

struct ctrl_fdp_event_ring {
	struct nvme_fdp_event ev[UCMD_FDP_EVENTS];
	uint32_t n, next;
};

/* The controller's endurance group 1 */
struct ctrl_fdp {
	uint16_t nruh, nrg;
	uint64_t ru_size;	/* bytes of data */
	uint8_t op_pct;
	bool persistent;
	bool enabled;		/* feature 1Dh FDPE */
	uint32_t rutl;		/* a reclaim unit's active time limit (ERUTL), s; 0 none */
	uint64_t hbmw, mbmw, mbe;	/* log 22h, bytes */
	/* data garbage collection moved over the group's life (log 09h MUW), bytes */
	uint64_t gc_bytes;
	uint8_t ev_mask[UCMD_FDP_MAX_RUH];	/* bit per supported event (fdp.c) */
	uint64_t rutl_checked_ms;	/* the wall clock of the last expiry scan */
	struct ctrl_fdp_event_ring host_ev, ctrl_ev;
};

/* fdp.c */
/* The configuration a new controller gets from its params (0 ok, -EINVAL) */
int  ctrl_fdp_setup(struct ucmd_ctrl *c, const struct ucmd_fdp_params *p);
void ctrl_fdp_free(struct ucmd_ctrl *c);
/* A namespace's media model, when FDP is enabled (create or load) */
int  ctrl_fdp_ns_init(struct ucmd_ctrl *c, struct ctrl_ns *ns);
void ctrl_fdp_ns_free(struct ctrl_ns *ns);
/* Format and sanitize erase the media: the units start again */
void ctrl_fdp_ns_erase(struct ucmd_ctrl *c, struct ctrl_ns *ns);
/*
 * A Controller Level Reset the host asked for (not the disable after a
 * shutdown): every handle's partly written unit is closed.
 */
void ctrl_fdp_reset(struct ucmd_ctrl *c);
/* Handles whose unit passed the time limit move to new units (every namespace) */
void ctrl_fdp_expire_all(struct ucmd_ctrl *c);
/*
 * A write to [slba, slba + nlb) with CDW12/CDW13 as the command has them:
 * the stream it goes to, or the status (nothing written) for a placement
 * the controller cannot honour. fdp_write_commit counts it when it is done.
 */
uint16_t ctrl_fdp_write_check(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t cdw12,
			       uint32_t cdw13, uint32_t *stream);
void ctrl_fdp_write_commit(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint32_t stream,
			    uint64_t slba, uint64_t nlb);
/* Write Zeroes that wrote (did not deallocate) nlb blocks: host bytes, no media */
void ctrl_fdp_zeroes_commit(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t nlb);
void ctrl_fdp_trim(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint64_t slba, uint64_t nlb);
/*
 * Namespace Management Create's placement handle list (NPHNDLS, PHNDL in
 * the host software specified fields, data the 4 KiB structure): the list
 * the new namespace gets (n 0: every handle), or Invalid Placement Handle
 * List. Ignored without FDP enabled.
 */
uint16_t ctrl_fdp_phndl_check(struct ucmd_ctrl *c, const uint8_t *data, uint16_t *n,
			       uint16_t *list);
/* Identify */
void ctrl_fdp_id_ctrl(struct ucmd_ctrl *c, struct nvme_id_ctrl *id);
/* Get Log Page of LIDs 20h-23h (true), with the whole command */
bool ctrl_fdp_is_log(uint8_t lid);
uint16_t ctrl_fdp_get_log(struct ucmd_ctrl *c, struct ctrl_req *req);
void ctrl_fdp_supported_logs(struct ucmd_ctrl *c, uint32_t *lids);
/* Features 1Dh and 1Eh */
bool ctrl_fdp_is_feature(uint8_t fid);
uint16_t ctrl_fdp_get_feature(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_fdp_set_feature(struct ucmd_ctrl *c, struct ctrl_req *req);
/* I/O Management Receive and Send */
uint16_t ctrl_fdp_io_mgmt_recv(struct ucmd_ctrl *c, struct ctrl_req *req);
uint16_t ctrl_fdp_io_mgmt_send(struct ucmd_ctrl *c, struct ctrl_req *req);

/* fdp_persist.c: the endurance group in ctrl.json, the models in nsN.fdp */
struct json_object;
struct json_object *ctrl_fdp_json(struct ucmd_ctrl *c);
int  ctrl_fdp_load(struct ucmd_ctrl *c, struct json_object *o);
/* persist_check.c's part: the "fdp" object of a ctrl.json */
int  ctrl_fdp_check_json(struct json_object *o, struct json_object *namespaces, char *why,
			  size_t len);
int  ctrl_fdp_save_models(struct ucmd_ctrl *c);
int  ctrl_fdp_load_model(struct ucmd_ctrl *c, struct ctrl_ns *ns);
void ctrl_fdp_remove_model(struct ucmd_ctrl *c, uint32_t nsid);

#endif /* UCMD_NVME_CTRL_FDP_H */
