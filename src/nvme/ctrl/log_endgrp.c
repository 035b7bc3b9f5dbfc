/* SPDX-License-Identifier: MIT */
/*
 * Endurance Group Information log (09h). The subsystem has one Endurance
 * Group (UCMD_ENDGID) holding every namespace and all of its capacity, so
 * the group's counters are its controllers' SMART / Health ones summed
 * (the same log through any of them) and its capacity is TNVMCAP/UNVMCAP. Unlike SMART's data units (thousands of
 * 512 bytes), the group's DUR, DUW and MUW are in billions of bytes,
 * rounded up. Media units written are the host's data plus what FDP's media
 * model moved in garbage collection. The Log Specific Identifier names the
 * group; any other is Invalid Field in Command.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"
#include "fdp.h"

/* NVMe 2.0 fields past the end of libnvme 1.3's structure */
#define EG_TEGCAP_OFF	160	/* Total Endurance Group Capacity, bytes */
#define EG_UEGCAP_OFF	176	/* Unallocated Endurance Group Capacity */

#define EG_UNIT		1000000000ull	/* bytes per DUR, DUW, MUW unit */

static void put128(uint8_t dst[16], uint64_t v)
{
	memset(dst, 0, 16);
	memcpy(dst, &v, sizeof(v));	/* little-endian host */
}

/* 512-byte units to billions of bytes, rounded up; no overflow */
static uint64_t eg_units(uint64_t units_512)
{
	return units_512 / (EG_UNIT / 512) + !!(units_512 % (EG_UNIT / 512));
}

uint16_t ctrl_log_endgrp(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
			  size_t *size)
{
	uint16_t endgid = req->cmd.cdw11 >> 16;
	struct nvme_endurance_group_log *e;
	struct nvme_smart_log s;
	struct ctrl_smart sum;
	uint64_t errors;

	_Static_assert(sizeof(*e) == 512, "Endurance Group log");
	if (endgid != UCMD_ENDGID)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	*buf = calloc(1, sizeof(*e));
	if (!*buf)
		return UCMD_GEN(NVME_SC_INTERNAL);
	*size = sizeof(*e);
	e = (void *)*buf;
	memset(&s, 0, sizeof(s));
	ctrl_log_smart(c, &s);
	ctrl_subsys_smart(c, &sum, &errors);
	/* the SMART warnings that are the group's: spare, reliability, read-only */
	e->critical_warning = s.critical_warning & (NVME_SMART_CRIT_SPARE |
						    NVME_SMART_CRIT_DEGRADED |
						    NVME_SMART_CRIT_MEDIA);
	e->avl_spare = s.avail_spare;
	e->avl_spare_threshold = s.spare_thresh;
	e->percent_used = s.percent_used;
	put128(e->data_units_read, eg_units(sum.units_read_512));
	put128(e->data_units_written, eg_units(sum.units_written_512));
	/* without FDP's model the media holds exactly what the host wrote */
	put128(e->media_units_written,
	       eg_units(sum.units_written_512 + (c->fdp ? c->fdp->gc_bytes / 512 : 0)));
	put128(e->host_read_cmds, sum.host_reads);
	put128(e->host_write_cmds, sum.host_writes);
	put128(e->media_data_integrity_err, sum.media_errors);
	put128(e->num_err_info_log_entries, errors);
	put128(*buf + EG_TEGCAP_OFF, ctrl_tnvmcap(c));
	put128(*buf + EG_UEGCAP_OFF, ctrl_unvmcap(c));
	return 0;
}
