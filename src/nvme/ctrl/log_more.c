/* SPDX-License-Identifier: MIT */
/*
 * The logs log.c does not build from a fixed-size table: telemetry (07h,
 * 08h), Endurance Group Information (09h), Persistent Event (0Dh) and LBA
 * Status Information (0Eh). Their size follows the controller's state, and
 * some of them act on their Log Specific Field (a capture, a reporting
 * context), so each builder checks its own fields and returns the whole log;
 * log.c then transfers the window the host asked for.
 */
#include <stdlib.h>

#include "ctrl_int.h"

bool ctrl_log_dyn(uint8_t lid)
{
	switch (lid) {
	case NVME_LOG_LID_TELEMETRY_HOST:
	case NVME_LOG_LID_TELEMETRY_CTRL:
	case NVME_LOG_LID_ENDURANCE_GROUP:
	case NVME_LOG_LID_PERSISTENT_EVENT:
	case NVME_LOG_LID_LBA_STATUS:
		return true;
	}
	return false;
}

uint16_t ctrl_log_dyn_build(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
			     size_t *size)
{
	switch (req->cmd.cdw10 & 0xff) {
	case NVME_LOG_LID_TELEMETRY_HOST:
	case NVME_LOG_LID_TELEMETRY_CTRL:
		return ctrl_log_telemetry(c, req, buf, size);
	case NVME_LOG_LID_ENDURANCE_GROUP:
		return ctrl_log_endgrp(c, req, buf, size);
	case NVME_LOG_LID_PERSISTENT_EVENT:
		return ctrl_log_pel(c, req, buf, size);
	case NVME_LOG_LID_LBA_STATUS:
		return ctrl_log_lba_status(c, req, buf, size);
	}
	return UCMD_CMD(NVME_SC_INVALID_LOG_PAGE) | UCMD_DNR;
}

void ctrl_log_dyn_reset(struct ucmd_ctrl *c)
{
	free(c->pel.buf);
	c->pel = (struct ctrl_log_snap){ 0 };
	c->pel_ctx = false;
}

void ctrl_log_dyn_free(struct ucmd_ctrl *c)
{
	ctrl_log_dyn_reset(c);
	free(c->tel_host.buf);
	c->tel_host = (struct ctrl_log_snap){ 0 };
}
