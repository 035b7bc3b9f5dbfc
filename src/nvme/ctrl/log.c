/* SPDX-License-Identifier: MIT */
/*
 * Get Log Page: supported log pages, error information, SMART / health, firmware slot, changed
 * namespace list, commands supported and effects, device self-test and
 * sanitize status (the others: log_more.c). Each log is built
 * whole and then the requested window (offset, length) is transferred.
 */
#include <stdlib.h>
#include <string.h>

#include "fdp.h"
#include "zns.h"

static void put128(uint8_t dst[16], uint64_t v)
{
	memset(dst, 0, 16);
	memcpy(dst, &v, sizeof(v));	/* little-endian host */
}

static void log_error(struct ucmd_ctrl *c, uint8_t *buf)
{
	struct nvme_error_log_page *e = (void *)buf;
	uint64_t n = c->error_count < UCMD_ERRLOG_ENTRIES ? c->error_count : UCMD_ERRLOG_ENTRIES;

	/* Newest first, as hosts expect */
	for (uint64_t i = 0, k = 0; i < n; i++) {
		const struct nvme_error_log_page *src =
			&c->errlog[(c->error_count - 1 - i) % UCMD_ERRLOG_ENTRIES];

		/* an entry a version 2 state file did not keep stays out */
		if (src->error_count)
			e[k++] = *src;
	}
}

void ctrl_log_smart(struct ucmd_ctrl *c, struct nvme_smart_log *s)
{
	uint64_t pos = c->smart.power_on_seconds + (ktime_get_ns() - c->created_ns) / 1000000000ull;

	s->critical_warning = ctrl_critical_warning(c);
	s->temperature[0] = UCMD_TEMP_KELVIN & 0xff;
	s->temperature[1] = UCMD_TEMP_KELVIN >> 8;
	s->avail_spare = 100;
	s->spare_thresh = 10;
	s->percent_used = 0;
	/* Data units are thousands of 512-byte units, rounded up */
	put128(s->data_units_read, (c->smart.units_read_512 + 999) / 1000);
	put128(s->data_units_written, (c->smart.units_written_512 + 999) / 1000);
	put128(s->host_reads, c->smart.host_reads);
	put128(s->host_writes, c->smart.host_writes);
	put128(s->ctrl_busy_time, c->smart.busy_ns / 60000000000ull);
	put128(s->power_cycles, c->smart.power_cycles);
	put128(s->power_on_hours, pos / 3600);
	put128(s->unsafe_shutdowns, c->smart.unsafe_shutdowns);
	put128(s->media_errors, c->smart.media_errors);
	put128(s->num_err_log_entries, c->error_count);
	s->temp_sensor[0] = htole16(UCMD_TEMP_KELVIN);
}

static void log_changed_ns(struct ucmd_ctrl *c, struct nvme_ns_list *l, bool rae)
{
	if (c->changed_ns_overflow) {
		l->ns[0] = htole32(0xffffffff);
	} else {
		for (unsigned i = 0; i < c->nr_changed_ns; i++)
			l->ns[i] = htole32(c->changed_ns[i]);
	}
	if (!rae) {
		/* Reading the log clears it. */
		c->nr_changed_ns = 0;
		c->changed_ns_overflow = false;
	}
}

static uint16_t log_effects(uint8_t csi, struct nvme_cmd_effects_log *e)
{
	if (csi != NVME_CSI_NVM && csi != NVME_CSI_ZNS)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	for (unsigned i = 0; i < 256; i++) {
		/* the Zoned Namespace Command Set is the NVM one and its own three */
		const struct ctrl_ctrl_opdef *z = ctrl_zns_op((uint8_t)i);

		e->acs[i] = htole32(ctrl_admin_cmds[i].fn ? ctrl_admin_cmds[i].effects : 0);
		e->iocs[i] = htole32(ctrl_nvm_cmds[i].fn ? ctrl_nvm_cmds[i].effects :
				     csi == NVME_CSI_ZNS && z->fn ? z->effects : 0);
	}
	return 0;
}

/* The logs this controller has, and each one's size: false for another LID. */
static bool log_size(uint8_t lid, size_t *size)
{
	switch (lid) {
	case NVME_LOG_LID_SUPPORTED_LOG_PAGES: *size = 256 * sizeof(uint32_t); break;
	case NVME_LOG_LID_ERROR: *size = UCMD_ERRLOG_ENTRIES * sizeof(struct nvme_error_log_page); break;
	case NVME_LOG_LID_SMART: *size = sizeof(struct nvme_smart_log); break;
	case NVME_LOG_LID_FW_SLOT: *size = sizeof(struct nvme_firmware_slot); break;
	case NVME_LOG_LID_CHANGED_NS: *size = sizeof(struct nvme_ns_list); break;
	case NVME_LOG_LID_CMD_EFFECTS: *size = sizeof(struct nvme_cmd_effects_log); break;
	case NVME_LOG_LID_DEVICE_SELF_TEST: *size = sizeof(struct nvme_self_test_log); break;
	case NVME_LOG_LID_SANITIZE: *size = sizeof(struct nvme_sanitize_log_page); break;
	case NVME_LOG_LID_ZNS_CHANGED_ZONES: *size = sizeof(struct nvme_zns_changed_zone_log); break;
	default:
		return false;
	}
	return true;
}

/*
 * Supported Log Pages (00h) of the command set CSI names: LSUPP for every
 * LID log_size() knows, from the same table; the Changed Zone List is the
 * Zoned Namespace Command Set's alone.
 */
static void log_supported(uint8_t csi, uint32_t *lids)
{
	size_t size;

	for (unsigned lid = 0; lid < 256; lid++)
		if ((log_size((uint8_t)lid, &size) || ctrl_log_dyn((uint8_t)lid)) &&
		    (lid != NVME_LOG_LID_ZNS_CHANGED_ZONES || csi == NVME_CSI_ZNS))
			lids[lid] = htole32(1);
}

/*
 * A log of log_more.c: built whole after the host's buffer is mapped (a
 * buffer that cannot be reached leaves no capture or context behind), as
 * its size depends on what it holds.
 */
static uint16_t get_log_dyn(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t off,
			    uint64_t len)
{
	struct ctrl_iovs v;
	uint8_t *buf = NULL;
	size_t size = 0;
	uint16_t st;

	ctrl_iovs_init(&v);
	st = ctrl_map_data(c, req, len, &v);
	if (!st)
		st = ctrl_log_dyn_build(c, req, &buf, &size);
	if (!st && off > size)
		st = UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (!st) {
		/* Bytes past the end of the log read as zero. */
		uint64_t n = size - off < len ? size - off : len;

		st = ctrl_iovs_copy_out(&v, buf + off, n);
		if (!st)
			st = ctrl_iovs_zero_from(&v, n);
	}
	free(buf);
	ctrl_iovs_free(&v);
	return st;
}

uint16_t ctrl_admin_get_log(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint8_t lid = req->cmd.cdw10 & 0xff;
	bool rae = req->cmd.cdw10 & (1u << 15);
	uint64_t numd = ((uint64_t)(req->cmd.cdw11 & 0xffff) << 16 | (req->cmd.cdw10 >> 16)) + 1;
	uint64_t len = numd * 4, off = (uint64_t)req->cmd.cdw13 << 32 | req->cmd.cdw12;
	uint8_t csi = req->cmd.cdw14 >> 24;
	struct ctrl_iovs v;
	uint8_t *buf;
	size_t size;
	uint16_t st = 0;

	if (ctrl_fdp_is_log(lid))
		return ctrl_fdp_get_log(c, req);
	if (off & 3)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (ctrl_log_dyn(lid))
		return get_log_dyn(c, req, off, len);
	if (!log_size(lid, &size) &&
	    !(lid == NVME_LOG_LID_ANA && ctrl_subsys_ana_log_size(c, &size)))
		return UCMD_CMD(NVME_SC_INVALID_LOG_PAGE) | UCMD_DNR;
	if (off > size)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	/* SMART is controller-wide only (LPA bit 0 clear). */
	if (lid == NVME_LOG_LID_SMART && req->cmd.nsid && req->cmd.nsid != 0xffffffffu)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	ctrl_iovs_init(&v);
	st = ctrl_map_data(c, req, len, &v);
	if (st)
		return st;
	buf = calloc(1, size);
	if (!buf) {
		ctrl_iovs_free(&v);
		return UCMD_GEN(NVME_SC_INTERNAL);
	}
	switch (lid) {
	case NVME_LOG_LID_SUPPORTED_LOG_PAGES:
		log_supported(csi, (void *)buf);
		ctrl_fdp_supported_logs(c, (void *)buf);
		if (ctrl_subsys_ana_log_size(c, &size))
			((uint32_t *)(void *)buf)[NVME_LOG_LID_ANA] = htole32(1);
		size = 256 * sizeof(uint32_t);
		break;
	case NVME_LOG_LID_ERROR: log_error(c, buf); break;
	case NVME_LOG_LID_SMART: ctrl_log_smart(c, (void *)buf); break;
	case NVME_LOG_LID_FW_SLOT: ctrl_log_fw(c, (void *)buf); break;
	case NVME_LOG_LID_DEVICE_SELF_TEST: ctrl_log_selftest(c, req->cmd.nsid, (void *)buf); break;
	case NVME_LOG_LID_SANITIZE: ctrl_log_sanitize(c, (void *)buf); break;
	case NVME_LOG_LID_CHANGED_NS: log_changed_ns(c, (void *)buf, rae); break;
	case NVME_LOG_LID_CMD_EFFECTS: st = log_effects(csi, (void *)buf); break;
	case NVME_LOG_LID_ANA: ctrl_subsys_ana_log(c, req->cmd.cdw10, buf, size); break;
	case NVME_LOG_LID_ZNS_CHANGED_ZONES:
		/* another command set's: as an unsupported LID, as log 00h says for it */
		st = csi != NVME_CSI_ZNS ? (UCMD_CMD(NVME_SC_INVALID_LOG_PAGE) | UCMD_DNR)
		     : ctrl_zns_log_changed(c, req->cmd.nsid, rae, (void *)buf);
		break;
	}
	if (!st) {
		/* Bytes past the end of the log read as zero. */
		uint64_t n = size - off < len ? size - off : len;

		st = ctrl_iovs_copy_out(&v, buf + off, n);
		if (!st)
			st = ctrl_iovs_zero_from(&v, n);
	}
	if (!st && !rae)
		ctrl_event_unmask(c, lid);
	free(buf);
	ctrl_iovs_free(&v);
	return st;
}
