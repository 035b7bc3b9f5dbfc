/* SPDX-License-Identifier: MIT */
/*
 * Log pages in nvme-cli 2.3's layouts: SMART / health (02h), error
 * information (01h), commands supported and effects (05h), firmware slot
 * (03h), sanitize status (81h), device self-test (06h), and get-log's
 * generic header and hex dump for any other log.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nvme/util.h>

#include "print_priv.h"

static long kelvin_to_celsius(long k)
{
	return k - 273;
}

/* "1.07 GB": a 128-bit count of 512000-byte data units, SI-scaled */
static const char *units_si(const uint8_t v[16], char *buf, size_t len)
{
	long double x = 0;

	for (int i = 15; i >= 0; i--)
		x = x * 256 + v[i];
	x *= 1000 * 512;
	static const char *const sfx[] = { "", "k", "M", "G", "T", "P", "E", "Z", "Y", "R", "Q" };
	size_t i = 0;

	while (x >= 1000 && i + 1 < ARRAY_LEN(sfx)) {
		x /= 1000;
		i++;
	}
	snprintf(buf, len, "%.2Lf %sB", x, sfx[i]);
	return buf;
}

static void smart_json(const struct nvme_smart_log *s, unsigned flags)
{
	static const struct { const char *name; size_t off; } u128[] = {
		{ "data_units_read", offsetof(struct nvme_smart_log, data_units_read) },
		{ "data_units_written", offsetof(struct nvme_smart_log, data_units_written) },
		{ "host_read_commands", offsetof(struct nvme_smart_log, host_reads) },
		{ "host_write_commands", offsetof(struct nvme_smart_log, host_writes) },
		{ "controller_busy_time", offsetof(struct nvme_smart_log, ctrl_busy_time) },
		{ "power_cycles", offsetof(struct nvme_smart_log, power_cycles) },
		{ "power_on_hours", offsetof(struct nvme_smart_log, power_on_hours) },
		{ "unsafe_shutdowns", offsetof(struct nvme_smart_log, unsafe_shutdowns) },
		{ "media_errors", offsetof(struct nvme_smart_log, media_errors) },
		{ "num_err_log_entries", offsetof(struct nvme_smart_log, num_err_log_entries) },
	};
	struct json_object *o = json_object_new_object();
	uint8_t cw = s->critical_warning;
	char key[32];

	if (flags & PRINT_HUMAN) {
		struct json_object *c = json_object_new_object();

		pj_int(c, "value", cw);
		pj_int(c, "available_spare", cw & 1);
		pj_int(c, "temp_threshold", (cw >> 1) & 1);
		pj_int(c, "reliability_degraded", (cw >> 2) & 1);
		pj_int(c, "ro", (cw >> 3) & 1);
		pj_int(c, "vmbu_failed", (cw >> 4) & 1);
		pj_int(c, "pmr_ro", (cw >> 5) & 1);
		json_object_object_add(o, "critical_warning", c);
	} else {
		pj_int(o, "critical_warning", cw);
	}
	pj_int(o, "temperature", pl16(s->temperature));
	pj_int(o, "avail_spare", s->avail_spare);
	pj_int(o, "spare_thresh", s->spare_thresh);
	pj_int(o, "percent_used", s->percent_used);
	pj_int(o, "endurance_grp_critical_warning_summary", s->endu_grp_crit_warn_sumry);
	for (size_t i = 0; i < ARRAY_LEN(u128); i++)
		pj_u128(o, u128[i].name, (const uint8_t *)s + u128[i].off);
	pj_int(o, "warning_temp_time", pl32(&s->warning_temp_time));
	pj_int(o, "critical_comp_time", pl32(&s->critical_comp_time));
	for (int i = 0; i < 8; i++) {
		uint16_t t = pl16(&s->temp_sensor[i]);

		if (!t)
			continue;
		snprintf(key, sizeof(key), "temperature_sensor_%d", i + 1);
		pj_int(o, key, t);
	}
	pj_int(o, "thm_temp1_trans_count", pl32(&s->thm_temp1_trans_count));
	pj_int(o, "thm_temp2_trans_count", pl32(&s->thm_temp2_trans_count));
	pj_int(o, "thm_temp1_total_time", pl32(&s->thm_temp1_total_time));
	pj_int(o, "thm_temp2_total_time", pl32(&s->thm_temp2_total_time));
	pj_print(o);
}

void print_smart_log(const struct nvme_smart_log *s, uint32_t nsid, const char *devname,
		     enum out_fmt f, unsigned flags)
{
	uint16_t temp = pl16(s->temperature);
	uint8_t cw = s->critical_warning;
	char a[48], b[48];

	if (f == OUT_BINARY)
		return p_raw(s, sizeof(*s));
	if (f == OUT_JSON)
		return smart_json(s, flags);
	printf("Smart Log for NVME device:%s namespace-id:%x\n", devname, nsid);
	printf("critical_warning\t\t\t: %#x\n", cw);
	if (flags & PRINT_HUMAN) {
		printf("      Available Spare[0]             : %d\n", cw & 1);
		printf("      Temp. Threshold[1]             : %d\n", (cw >> 1) & 1);
		printf("      NVM subsystem Reliability[2]   : %d\n", (cw >> 2) & 1);
		printf("      Read-only[3]                   : %d\n", (cw >> 3) & 1);
		printf("      Volatile mem. backup failed[4] : %d\n", (cw >> 4) & 1);
		printf("      Persistent Mem. RO[5]          : %d\n", (cw >> 5) & 1);
	}
	printf("temperature\t\t\t\t: %ld°C (%u Kelvin)\n", kelvin_to_celsius(temp), temp);
	printf("available_spare\t\t\t\t: %u%%\n", s->avail_spare);
	printf("available_spare_threshold\t\t: %u%%\n", s->spare_thresh);
	printf("percentage_used\t\t\t\t: %u%%\n", s->percent_used);
	printf("endurance group critical warning summary: %#x\n", s->endu_grp_crit_warn_sumry);
	printf("Data Units Read\t\t\t\t: %s (%s)\n", p_u128_str(s->data_units_read, a, sizeof(a)),
	       units_si(s->data_units_read, b, sizeof(b)));
	printf("Data Units Written\t\t\t: %s (%s)\n",
	       p_u128_str(s->data_units_written, a, sizeof(a)),
	       units_si(s->data_units_written, b, sizeof(b)));
	printf("host_read_commands\t\t\t: %s\n", p_u128_str(s->host_reads, a, sizeof(a)));
	printf("host_write_commands\t\t\t: %s\n", p_u128_str(s->host_writes, a, sizeof(a)));
	printf("controller_busy_time\t\t\t: %s\n", p_u128_str(s->ctrl_busy_time, a, sizeof(a)));
	printf("power_cycles\t\t\t\t: %s\n", p_u128_str(s->power_cycles, a, sizeof(a)));
	printf("power_on_hours\t\t\t\t: %s\n", p_u128_str(s->power_on_hours, a, sizeof(a)));
	printf("unsafe_shutdowns\t\t\t: %s\n", p_u128_str(s->unsafe_shutdowns, a, sizeof(a)));
	printf("media_errors\t\t\t\t: %s\n", p_u128_str(s->media_errors, a, sizeof(a)));
	printf("num_err_log_entries\t\t\t: %s\n",
	       p_u128_str(s->num_err_log_entries, a, sizeof(a)));
	printf("Warning Temperature Time\t\t: %u\n", pl32(&s->warning_temp_time));
	printf("Critical Composite Temperature Time\t: %u\n", pl32(&s->critical_comp_time));
	for (int i = 0; i < 8; i++) {
		uint16_t t = pl16(&s->temp_sensor[i]);

		if (t)
			printf("Temperature Sensor %d           : %ld°C (%u Kelvin)\n", i + 1,
			       kelvin_to_celsius(t), t);
	}
	printf("Thermal Management T1 Trans Count\t: %u\n", pl32(&s->thm_temp1_trans_count));
	printf("Thermal Management T2 Trans Count\t: %u\n", pl32(&s->thm_temp2_trans_count));
	printf("Thermal Management T1 Total Time\t: %u\n", pl32(&s->thm_temp1_total_time));
	printf("Thermal Management T2 Total Time\t: %u\n", pl32(&s->thm_temp2_total_time));
}

static const char *trtype_name(uint8_t t)
{
	switch (t) {
	case 0: return "The transport type is not indicated or the error is not transport related.";
	case 1: return "RDMA Transport error.";
	case 2: return "Fibre Channel Transport error.";
	case 3: return "TCP Transport error.";
	case 254: return "Intra-host Transport error.";
	default: return "Reserved";
	}
}

void print_error_log(const struct nvme_error_log_page *e, int nr, const char *devname,
		     enum out_fmt f)
{
	if (nr < 0)
		nr = 0;
	if (f == OUT_BINARY)
		return p_raw(e, (size_t)nr * sizeof(*e));
	if (f == OUT_JSON) {
		struct json_object *o = json_object_new_object();
		struct json_object *arr = json_object_new_array();

		for (int i = 0; i < nr; i++) {
			struct json_object *x = json_object_new_object();
			uint16_t sf = pl16(&e[i].status_field);

			pj_u64(x, "error_count", pl64(&e[i].error_count));
			pj_int(x, "sqid", pl16(&e[i].sqid));
			pj_int(x, "cmdid", pl16(&e[i].cmdid));
			pj_int(x, "status_field", sf >> 1);
			pj_int(x, "phase_tag", sf & 1);
			pj_int(x, "parm_error_location", pl16(&e[i].parm_error_location));
			pj_u64(x, "lba", pl64(&e[i].lba));
			pj_int(x, "nsid", pl32(&e[i].nsid));
			pj_int(x, "vs", e[i].vs);
			pj_int(x, "trtype", e[i].trtype);
			pj_u64(x, "cs", pl64(&e[i].cs));
			pj_int(x, "trtype_spec_info", pl16(&e[i].trtype_spec_info));
			json_object_array_add(arr, x);
		}
		json_object_object_add(o, "errors", arr);
		return pj_print(o);
	}
	printf("Error Log Entries for device:%s entries:%d\n", devname, nr);
	printf(".................\n");
	for (int i = 0; i < nr; i++) {
		uint16_t st = pl16(&e[i].status_field) >> 1;

		printf(" Entry[%2d]   \n", i);
		printf(".................\n");
		printf("error_count\t: %" PRIu64 "\n", pl64(&e[i].error_count));
		printf("sqid\t\t: %d\n", pl16(&e[i].sqid));
		printf("cmdid\t\t: %#x\n", pl16(&e[i].cmdid));
		printf("status_field\t: %#x(%s)\n", st, nvme_status_to_string(st, false));
		printf("phase_tag\t: %#x\n", pl16(&e[i].status_field) & 1);
		printf("parm_err_loc\t: %#x\n", pl16(&e[i].parm_error_location));
		printf("lba\t\t: %#" PRIx64 "\n", pl64(&e[i].lba));
		printf("nsid\t\t: %#x\n", pl32(&e[i].nsid));
		printf("vs\t\t: %d\n", e[i].vs);
		printf("trtype\t\t: %s\n", trtype_name(e[i].trtype));
		printf("cs\t\t: %#" PRIx64 "\n", pl64(&e[i].cs));
		printf("trtype_spec_info: %#x\n", pl16(&e[i].trtype_spec_info));
		printf(".................\n");
	}
}

static void effects_human(uint32_t e)
{
	static const char *const cse[] = {
		"No command restriction", "No other command for same namespace",
		"No other command for any namespace",
	};
	unsigned c = (e >> 16) & 7;

	printf("  CSUPP+  LBCC%s  NCC%s  NIC%s  CCC%s  USS%s  %s\n",
	       e & NVME_CMD_EFFECTS_LBCC ? "+" : "-", e & NVME_CMD_EFFECTS_NCC ? "+" : "-",
	       e & NVME_CMD_EFFECTS_NIC ? "+" : "-", e & NVME_CMD_EFFECTS_CCC ? "+" : "-",
	       e & NVME_CMD_EFFECTS_UUID_SEL ? "+" : "-", c < 3 ? cse[c] : "Reserved CSE");
}

/* one section of the table: printed only when a command in [a, b) is supported */
static void effects_segment(const struct nvme_cmd_effects_log *e, int admin, int a, int b,
			    const char *header, bool human)
{
	const __le32 *t = admin ? e->acs : e->iocs;
	bool any = false;

	for (int i = a; i < b; i++) {
		uint32_t v = pl32(&t[i]);

		if (!(v & NVME_CMD_EFFECTS_CSUPP))
			continue;
		if (!any)
			printf("%s\n", header);
		any = true;
		printf(admin ? "ACS%-6d[%-32s] %08x" : "IOCS%-5d[%-32s] %08x", i,
		       p_cmd_name(admin, (uint8_t)i), v);
		if (human)
			effects_human(v);
		else
			printf("\n");
	}
	if (any)
		printf("\n");
}

void print_effects_log(const struct nvme_cmd_effects_log *e, enum out_fmt f, unsigned flags)
{
	char key[80];

	if (f == OUT_BINARY)
		return p_raw(e, sizeof(*e));
	if (f == OUT_JSON) {
		/* nvme-cli prints a list, one page per command set (here the NVM one) */
		struct json_object *list = json_object_new_array();
		struct json_object *o = json_object_new_object();
		struct json_object *acs = json_object_new_object();
		struct json_object *iocs = json_object_new_object();

		pj_int(o, "command_set_identifier", NVME_CSI_NVM);
		for (int i = 0; i < 256; i++) {
			uint32_t v = pl32(&e->acs[i]);

			if (!(v & NVME_CMD_EFFECTS_CSUPP))
				continue;
			snprintf(key, sizeof(key), "ACS_%d (%s)", i, p_cmd_name(1, (uint8_t)i));
			pj_int(acs, key, v);
		}
		json_object_object_add(o, "admin_cmd_set", acs);
		for (int i = 0; i < 256; i++) {
			uint32_t v = pl32(&e->iocs[i]);

			if (!(v & NVME_CMD_EFFECTS_CSUPP))
				continue;
			snprintf(key, sizeof(key), "IOCS_%d (%s)", i, p_cmd_name(0, (uint8_t)i));
			pj_int(iocs, key, v);
		}
		json_object_object_add(o, "io_cmd_set", iocs);
		json_object_array_add(list, o);
		return pj_print(list);
	}
	printf("NVM Command Set Log Page\n");
	printf("%.80s\n", "----------------------------------------"
			  "----------------------------------------");
	/* nvme-cli's ranges: admin 00h-BEh, vendor C0h-FEh, I/O 00h-7Fh, vendor 80h-FFh */
	effects_segment(e, 1, 0, 0xbf, "Admin Commands", flags & PRINT_HUMAN);
	effects_segment(e, 1, 0xc0, 0xff, "Vendor Specific Admin Commands", flags & PRINT_HUMAN);
	effects_segment(e, 0, 0, 0x80, "I/O Commands", flags & PRINT_HUMAN);
	effects_segment(e, 0, 0x80, 0x100, "Vendor Specific I/O Commands", flags & PRINT_HUMAN);
}

/* a firmware revision as nvme-cli shows it: printable ASCII, '.' for the rest */
static void fw_string(const char *frs, char out[9])
{
	for (int i = 0; i < 8; i++)
		out[i] = frs[i] >= '!' && frs[i] <= '~' ? frs[i] : '.';
	out[8] = '\0';
}

void print_fw_log(const struct nvme_firmware_slot *fw, const char *devname, enum out_fmt f)
{
	struct json_object *root = NULL, *slots = NULL;
	char rev[9], key[32], val[48];

	if (f == OUT_BINARY)
		return p_raw(fw, sizeof(*fw));
	if (f == OUT_JSON) {
		root = json_object_new_object();
		slots = json_object_new_object();
		pj_int(slots, "Active Firmware Slot (afi)", fw->afi);
	} else {
		printf("Firmware Log for device:%s\n", devname);
		printf("afi  : %#x\n", fw->afi);
	}
	for (int i = 0; i < 7; i++) {
		uint64_t v = pl64(fw->frs[i]);

		if (!fw->frs[i][0])
			continue;
		fw_string(fw->frs[i], rev);
		if (slots) {
			snprintf(key, sizeof(key), "Firmware Rev Slot %d", i + 1);
			snprintf(val, sizeof(val), "%" PRIu64 " (%s)", v, rev);
			pj_str(slots, key, val);
		} else {
			printf("frs%d : %#016" PRIx64 " (%s)\n", i + 1, v, rev);
		}
	}
	if (root) {
		json_object_object_add(root, devname, slots);
		pj_print(root);
	}
}

static const char *sanitize_status_name(uint16_t sstat)
{
	switch (sstat & NVME_SANITIZE_SSTAT_STATUS_MASK) {
	case NVME_SANITIZE_SSTAT_STATUS_NEVER_SANITIZED:
		return "NVM Subsystem has never been sanitized.";
	case NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS:
		return "Most Recent Sanitize Command Completed Successfully.";
	case NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS:
		return "Sanitize in Progress.";
	case NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED:
		return "Most Recent Sanitize Command Failed.";
	case NVME_SANITIZE_SSTAT_STATUS_ND_COMPLETE_SUCCESS:
		return "Most Recent Sanitize Command (No-Deallocate After Sanitize) Completed Successfully.";
	default:
		return "Unknown";
	}
}

static void sanitize_time(const char *text, uint32_t v)
{
	printf("%s:  %u%s\n", text, v, v == 0xffffffff ? " (No time period reported)" : "");
}

void print_sanitize_log(const struct nvme_sanitize_log_page *s, const char *devname,
			enum out_fmt f, unsigned flags)
{
	static const struct { const char *json, *text; size_t off; } times[] = {
		{ "time_over_write", "Estimated Time For Overwrite                   ",
		  offsetof(struct nvme_sanitize_log_page, eto) },
		{ "time_block_erase", "Estimated Time For Block Erase                 ",
		  offsetof(struct nvme_sanitize_log_page, etbe) },
		{ "time_crypto_erase", "Estimated Time For Crypto Erase                ",
		  offsetof(struct nvme_sanitize_log_page, etce) },
		{ "time_over_write_no_dealloc", "Estimated Time For Overwrite (No-Deallocate)   ",
		  offsetof(struct nvme_sanitize_log_page, etond) },
		{ "time_block_erase_no_dealloc", "Estimated Time For Block Erase (No-Deallocate) ",
		  offsetof(struct nvme_sanitize_log_page, etbend) },
		{ "time_crypto_erase_no_dealloc", "Estimated Time For Crypto Erase (No-Deallocate)",
		  offsetof(struct nvme_sanitize_log_page, etcend) },
	};
	uint16_t sstat = pl16(&s->sstat), sprog = pl16(&s->sprog);
	unsigned st = sstat & NVME_SANITIZE_SSTAT_STATUS_MASK;
	unsigned passes = (sstat >> NVME_SANITIZE_SSTAT_COMPLETED_PASSES_SHIFT) &
			  NVME_SANITIZE_SSTAT_COMPLETED_PASSES_MASK;
	size_t i;

	if (f == OUT_BINARY)
		return p_raw(s, sizeof(*s));
	if (f == OUT_JSON) {
		struct json_object *root = json_object_new_object();
		struct json_object *dev = json_object_new_object();
		struct json_object *ss = json_object_new_object();
		char str[128];

		pj_int(dev, "sprog", sprog);
		pj_int(ss, "global_erased", (sstat & NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED) >> 8);
		pj_int(ss, "no_cmplted_passes", passes);
		snprintf(str, sizeof(str), "(%u) %s", st, sanitize_status_name(sstat));
		pj_str(ss, "status", str);
		json_object_object_add(dev, "sstat", ss);
		pj_int(dev, "cdw10_info", pl32(&s->scdw10));
		for (i = 0; i < ARRAY_LEN(times); i++)
			pj_int(dev, times[i].json, pl32((const uint8_t *)s + times[i].off));
		json_object_object_add(root, devname, dev);
		return pj_print(root);
	}
	printf("Sanitize Progress                      (SPROG) :  %u", sprog);
	if ((flags & PRINT_HUMAN) && st == NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS)
		printf("\t(%f%%)\n", (double)sprog * 100 / 0x10000);
	else
		printf("\n");
	printf("Sanitize Status                        (SSTAT) :  %#x\n", st);
	if (flags & PRINT_HUMAN) {
		printf("\t[2:0]\t%s\n", sanitize_status_name(sstat));
		printf("\t[7:3]\t%s:\t%u\n",
		       "Number of completed passes if most recent operation was overwrite", passes);
		printf("\t  [8]\t%s\n", sstat & NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED ?
		       "Global Data Erased set: no NS LB in the NVM subsystem has been written to "
		       "and no PMR in the NVM subsystem has been enabled" :
		       "Global Data Erased cleared: a NS LB in the NVM subsystem has been written "
		       "to or a PMR in the NVM subsystem has been enabled");
	}
	printf("Sanitize Command Dword 10 Information (SCDW10) :  %#x\n", pl32(&s->scdw10));
	for (i = 0; i < ARRAY_LEN(times); i++)
		sanitize_time(times[i].text, pl32((const uint8_t *)s + times[i].off));
}

static const char *const st_result[] = {
	"Operation completed without error",
	"Operation was aborted by a Device Self-test command",
	"Operation was aborted by a Controller Level Reset",
	"Operation was aborted due to a removal of a namespace from the namespace inventory",
	"Operation was aborted due to the processing of a Format NVM command",
	"A fatal error or unknown test error occurred while the controller was executing the "
	"device self-test operation and the operation did not complete",
	"Operation completed with a segment that failed and the segment that failed is not known",
	"Operation completed with one or more failed segments and the first segment that failed "
	"is indicated in the SegmentNumber field",
	"Operation was aborted for unknown reason",
	"Operation was aborted due to a sanitize operation",
};

static void self_test_entry_normal(const struct nvme_st_result *r, bool human)
{
	uint8_t op = r->dsts & NVME_ST_RESULT_MASK, code = r->dsts >> NVME_ST_CODE_SHIFT;

	printf("  Operation Result             : %#x", op);
	if (human)
		printf(" %s", op < ARRAY_LEN(st_result) ? st_result[op] :
		       op == NVME_ST_RESULT_NOT_USED ? "Entry not used (does not contain a result)" :
		       "Reserved");
	printf("\n");
	if (op == NVME_ST_RESULT_NOT_USED)
		return;
	printf("  Self Test Code               : %x", code);
	if (human)
		printf(" %s", code == NVME_ST_CODE_SHORT ? "Short device self-test operation" :
		       code == NVME_ST_CODE_EXTENDED ? "Extended device self-test operation" :
		       code == NVME_ST_CODE_VS ? "Vendor specific" : "Reserved");
	printf("\n");
	if (op == NVME_ST_RESULT_KNOWN_SEG_FAIL)
		printf("  Segment Number               : %#x\n", r->seg);
	printf("  Valid Diagnostic Information : %#x\n", r->vdi);
	printf("  Power on hours (POH)         : %#" PRIx64 "\n", pl64(&r->poh));
	if (r->vdi & NVME_ST_VALID_DIAG_INFO_NSID)
		printf("  Namespace Identifier         : %#x\n", pl32(&r->nsid));
	if (r->vdi & NVME_ST_VALID_DIAG_INFO_FLBA)
		printf("  Failing LBA                  : %#" PRIx64 "\n", pl64(&r->flba));
	if (r->vdi & NVME_ST_VALID_DIAG_INFO_SCT)
		printf("  Status Code Type             : %#x\n", r->sct);
	if (r->vdi & NVME_ST_VALID_DIAG_INFO_SC) {
		printf("  Status Code                  : %#x", r->sc);
		if (human)
			printf(" %s", nvme_status_to_string((r->sct & 7) << 8 | r->sc, false));
		printf("\n");
	}
	printf("  Vendor Specific              : %#x %#x\n", r->vs[0], r->vs[1]);
}

static struct json_object *self_test_entry_json(const struct nvme_st_result *r)
{
	struct json_object *x = json_object_new_object();

	pj_int(x, "Self test result", r->dsts & 0xf);
	if ((r->dsts & 0xf) == NVME_ST_RESULT_NOT_USED)
		return x;
	pj_int(x, "Self test code", r->dsts >> 4);
	pj_int(x, "Segment number", r->seg);
	pj_int(x, "Valid Diagnostic Information", r->vdi);
	pj_u64(x, "Power on hours", pl64(&r->poh));
	if (r->vdi & NVME_ST_VALID_DIAG_INFO_NSID)
		pj_int(x, "Namespace Identifier", pl32(&r->nsid));
	if (r->vdi & NVME_ST_VALID_DIAG_INFO_FLBA)
		pj_u64(x, "Failing LBA", pl64(&r->flba));
	if (r->vdi & NVME_ST_VALID_DIAG_INFO_SCT)
		pj_int(x, "Status Code Type", r->sct);
	if (r->vdi & NVME_ST_VALID_DIAG_INFO_SC)
		pj_int(x, "Status Code", r->sc);
	pj_int(x, "Vendor Specific", r->vs[1] << 8 | r->vs[0]);
	return x;
}

void print_self_test_log(const struct nvme_self_test_log *l, uint32_t nr_entries,
			 const char *devname, enum out_fmt f)
{
	print_self_test_log_flags(l, nr_entries, devname, f, 0);
}

void print_self_test_log_flags(const struct nvme_self_test_log *l, uint32_t nr_entries,
			       const char *devname, enum out_fmt f, unsigned flags)
{
	uint32_t n = nr_entries < NVME_LOG_ST_MAX_RESULTS ? nr_entries : NVME_LOG_ST_MAX_RESULTS;

	if (f == OUT_BINARY)
		return p_raw(l, sizeof(*l));
	if (f == OUT_JSON) {
		struct json_object *o = json_object_new_object();
		struct json_object *arr = json_object_new_array();

		pj_int(o, "Current Device Self-Test Operation", l->current_operation);
		pj_int(o, "Current Device Self-Test Completion", l->completion);
		for (uint32_t i = 0; i < n; i++)
			json_object_array_add(arr, self_test_entry_json(&l->result[i]));
		json_object_object_add(o, "List of Valid Reports", arr);
		return pj_print(o);
	}
	printf("Device Self Test Log for NVME device:%s\n", devname);
	printf("Current operation  : %#x\n", l->current_operation);
	printf("Current Completion : %u%%\n", l->completion);
	for (uint32_t i = 0; i < n; i++) {
		printf("Self Test Result[%u]:\n", i);
		self_test_entry_normal(&l->result[i], flags & PRINT_VERBOSE);
	}
}

void print_get_log(const char *devname, uint8_t lid, uint32_t nsid, const void *buf,
		   uint32_t len, enum out_fmt f)
{
	if (f == OUT_BINARY)
		return p_raw(buf, len);
	/* nvme-cli's get-log has no JSON: the same header and dump for every format */
	printf("Device:%s log-id:%d namespace-id:%#x\n", devname, lid, nsid);
	p_hexdump(buf, len);
}
