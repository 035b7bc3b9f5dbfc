/* SPDX-License-Identifier: MIT */
/*
 * Persistent Event log (0Dh). LSP bits 1:0 are the action: 01b establishes
 * a reporting context (a snapshot of the log) and reads it, 00b reads the
 * context's snapshot, 10b releases it; 11b is reserved. Reading without a
 * context is a Command Sequence Error, as is establishing a second one. A
 * Controller Level Reset releases the context (log_more.c).
 *
 * The events this controller records: one SMART / Health Log Snapshot at
 * each context (the Supported Events Bitmap says so). Each context has its
 * own generation number, so a host that read the log in pieces can tell
 * that they all came from one context.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"

#define PEL_ACT_READ		0
#define PEL_ACT_ESTABLISH	1
#define PEL_ACT_RELEASE		2
#define PEL_HDR			sizeof(struct nvme_persistent_event_log)
#define PEL_EV_HDR		sizeof(struct nvme_persistent_event_entry)
#define PEL_RCE			(1u << 18)	/* Reporting Context Exists */

static void put128(uint8_t dst[16], uint64_t v)
{
	memset(dst, 0, 16);
	memcpy(dst, &v, sizeof(v));	/* little-endian host */
}

static void pad_copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	memset(dst, ' ', len);
	memcpy(dst, src, n < len ? n : len);
}

static int pel_snapshot(struct ucmd_ctrl *c)
{
	size_t len = PEL_HDR + PEL_EV_HDR + sizeof(struct nvme_smart_log);
	uint8_t *b = calloc(1, len);
	struct nvme_persistent_event_log *h = (void *)b;
	struct nvme_persistent_event_entry *e = (void *)(b + PEL_HDR);
	uint64_t now = realtime_ms();

	_Static_assert(sizeof(struct nvme_persistent_event_log) == 512, "PEL header");
	_Static_assert(sizeof(struct nvme_persistent_event_entry) == 24, "PEL event header");
	if (!b)
		return -ENOMEM;
	h->lid = NVME_LOG_LID_PERSISTENT_EVENT;
	h->tnev = htole32(1);
	h->tll = htole64(len);
	h->lhl = htole16(PEL_HDR);
	h->ts = htole64(now & 0xffffffffffffull);
	put128(h->poh, ctrl_power_on_hours(c));
	h->pcc = htole64(c->smart.power_cycles);
	h->vid = htole16(0x1b36);	/* as Identify Controller */
	h->ssvid = htole16(0x1af4);
	pad_copy(h->sn, sizeof(h->sn), c->serial);
	pad_copy(h->mn, sizeof(h->mn), c->model);
	memcpy(h->subnqn, c->subnqn, strnlen(c->subnqn, sizeof(h->subnqn) - 1));
	h->gen_number = htole16(++c->pel_gen);
	h->rci = htole32(PEL_RCE);
	h->seb[0] = 1u << NVME_PEL_SMART_HEALTH_EVENT;
	e->etype = NVME_PEL_SMART_HEALTH_EVENT;
	e->ehl = PEL_EV_HDR - 3;	/* bytes after EHL itself */
	e->cntlid = htole16(c->p.cntlid);
	e->ets = htole64(now & 0xffffffffffffull);
	e->el = htole16(sizeof(struct nvme_smart_log));
	ctrl_log_smart(c, (void *)(b + PEL_HDR + PEL_EV_HDR));
	free(c->pel.buf);
	c->pel = (struct ctrl_log_snap){ b, len };
	c->pel_ctx = true;
	return 0;
}

uint16_t ctrl_log_pel(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
		       size_t *size)
{
	/* LSP bits 6:2 are reserved */
	unsigned act = (req->cmd.cdw10 >> 8) & 0x7f;

	switch (act) {
	case PEL_ACT_ESTABLISH:
		if (c->pel_ctx)
			return UCMD_GEN(NVME_SC_CMD_SEQ_ERROR) | UCMD_DNR;
		if (pel_snapshot(c))
			return UCMD_GEN(NVME_SC_INTERNAL);
		break;
	case PEL_ACT_READ:
		if (!c->pel_ctx)
			return UCMD_GEN(NVME_SC_CMD_SEQ_ERROR) | UCMD_DNR;
		break;
	case PEL_ACT_RELEASE:
		ctrl_log_dyn_reset(c);
		/* nothing to report: the buffer reads as zeros */
		*buf = calloc(1, PEL_HDR);
		*size = PEL_HDR;
		return *buf ? 0 : UCMD_GEN(NVME_SC_INTERNAL);
	default:
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	}
	*buf = malloc(c->pel.len);
	if (!*buf)
		return UCMD_GEN(NVME_SC_INTERNAL);
	memcpy(*buf, c->pel.buf, c->pel.len);
	*size = c->pel.len;
	return 0;
}
