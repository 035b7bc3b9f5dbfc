/* SPDX-License-Identifier: MIT */
/*
 * Endurance Group Information log (09h). The controller has one Endurance
 * Group (UCMD_ENDGID) holding every namespace and all of its capacity, so
 * the group's counters are the controller's SMART / Health ones and its
 * capacity is TNVMCAP/UNVMCAP. The Log Specific Identifier names the
 * group; any other is Invalid Field in Command.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"

/* NVMe 2.0 fields past the end of libnvme 1.3's structure */
#define EG_TEGCAP_OFF	160	/* Total Endurance Group Capacity, bytes */
#define EG_UEGCAP_OFF	176	/* Unallocated Endurance Group Capacity */

static void put128(uint8_t dst[16], uint64_t v)
{
	memset(dst, 0, 16);
	memcpy(dst, &v, sizeof(v));	/* little-endian host */
}

uint16_t nvmet_log_endgrp(struct ucmd_ctrl *c, const struct nvmet_req *req, uint8_t **buf,
			  size_t *size)
{
	uint16_t endgid = req->cmd.cdw11 >> 16;
	struct nvme_endurance_group_log *e;
	struct nvme_smart_log s;

	_Static_assert(sizeof(*e) == 512, "Endurance Group log");
	if (endgid != UCMD_ENDGID)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	*buf = calloc(1, sizeof(*e));
	if (!*buf)
		return UCMD_GEN(NVME_SC_INTERNAL);
	*size = sizeof(*e);
	e = (void *)*buf;
	memset(&s, 0, sizeof(s));
	nvmet_log_smart(c, &s);
	/* the SMART warnings that are the group's: spare, reliability, read-only */
	e->critical_warning = s.critical_warning & (NVME_SMART_CRIT_SPARE |
						    NVME_SMART_CRIT_DEGRADED |
						    NVME_SMART_CRIT_MEDIA);
	e->avl_spare = s.avail_spare;
	e->avl_spare_threshold = s.spare_thresh;
	e->percent_used = s.percent_used;
	memcpy(e->data_units_read, s.data_units_read, 16);
	memcpy(e->data_units_written, s.data_units_written, 16);
	/* the media holds exactly what the host wrote */
	memcpy(e->media_units_written, s.data_units_written, 16);
	memcpy(e->host_read_cmds, s.host_reads, 16);
	memcpy(e->host_write_cmds, s.host_writes, 16);
	memcpy(e->media_data_integrity_err, s.media_errors, 16);
	memcpy(e->num_err_info_log_entries, s.num_err_log_entries, 16);
	put128(*buf + EG_TEGCAP_OFF, nvmet_tnvmcap(c));
	put128(*buf + EG_UEGCAP_OFF, nvmet_unvmcap(c));
	return 0;
}
