/* SPDX-License-Identifier: MIT */
/*
 * Telemetry Host-Initiated (07h) and Controller-Initiated (08h) logs. A
 * capture (LSP bit 0 of 07h, Create Telemetry Host-Initiated Data) takes the
 * controller's state at that moment: data area 1 is the SMART / Health log
 * as it was, areas 2 and 3 add nothing (they end where area 1 ends). Later
 * reads without Create return the same capture, so a host reading it in
 * 512-byte blocks sees one consistent snapshot under one generation number.
 * The controller never captures on its own: 08h says no data is available.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"

#define TEL_BLOCK	512u	/* telemetry data blocks */

static void tel_header(struct nvme_telemetry_log *t, uint8_t lid)
{
	t->lpi = lid;
	t->ieee[0] = 0x00; t->ieee[1] = 0x54; t->ieee[2] = 0x52;	/* as Identify's */
}

/* A capture: header (block 0), then data area 1 (block 1) */
static int tel_capture(struct ucmd_ctrl *c)
{
	size_t len = 2 * TEL_BLOCK;
	uint8_t *b = calloc(1, len);
	struct nvme_telemetry_log *t = (void *)b;

	if (!b)
		return -ENOMEM;
	tel_header(t, NVME_LOG_LID_TELEMETRY_HOST);
	t->dalb1 = htole16(1);
	t->dalb2 = htole16(1);
	t->dalb3 = htole16(1);
	t->hostdgn = ++c->tel_host_gen;
	ctrl_log_smart(c, (void *)(b + TEL_BLOCK));
	free(c->tel_host.buf);
	c->tel_host = (struct ctrl_log_snap){ b, len };
	return 0;
}

uint16_t ctrl_log_telemetry(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
			     size_t *size)
{
	uint8_t lid = req->cmd.cdw10 & 0xff;
	bool create = lid == NVME_LOG_LID_TELEMETRY_HOST && ((req->cmd.cdw10 >> 8) & 1);
	uint64_t off = (uint64_t)req->cmd.cdw13 << 32 | req->cmd.cdw12;
	struct nvme_telemetry_log *t;

	/* Telemetry is read in whole 512-byte blocks. */
	if (off % TEL_BLOCK)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (create && tel_capture(c))
		return UCMD_GEN(NVME_SC_INTERNAL);
	if (lid == NVME_LOG_LID_TELEMETRY_HOST && c->tel_host.buf) {
		*buf = malloc(c->tel_host.len);
		if (!*buf)
			return UCMD_GEN(NVME_SC_INTERNAL);
		memcpy(*buf, c->tel_host.buf, c->tel_host.len);
		*size = c->tel_host.len;
		return 0;
	}
	/* No capture yet (07h) or none the controller made (08h): the header alone */
	*buf = calloc(1, TEL_BLOCK);
	if (!*buf)
		return UCMD_GEN(NVME_SC_INTERNAL);
	*size = TEL_BLOCK;
	t = (void *)*buf;
	tel_header(t, lid);
	t->hostdgn = c->tel_host_gen;
	return 0;
}
