/* SPDX-License-Identifier: MIT */
/*
 * get-feature in nvme-cli 2.3's layout: the "get-feature:..." line, then
 * for sel 3 the capability bits, with -H the decoded fields of the
 * features decoded here, else the data buffer as a hex dump. nvme-cli 2.3
 * has no JSON for get-feature: ucmd's JSON is the same facts as an object
 * (feature_id, feature, sel, value, and data as an array of bytes).
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "print_priv.h"

static const char *on(uint32_t v, const char *y, const char *n)
{
	return v ? y : n;
}

static long celsius(uint32_t k)
{
	return (long)k - 273;
}

static void async_event(uint32_t r)
{
	static const struct { int bit; const char *s; } ev[] = {
		{ 31, "Discovery Log Page Change Notices                         " },
		{ 14, "Endurance Group Event Aggregate Log Change Notices        " },
		{ 13, "LBA Status Information Notices                            " },
		{ 12, "Predictable Latency Event Aggregate Log Change Notices    " },
		{ 11, "Asymmetric Namespace Access Change Notices                " },
		{ 10, "Telemetry Log Notices                                     " },
		{ 9, "Firmware Activation Notices                               " },
		{ 8, "Namespace Attribute Notices                               " },
	};

	for (size_t i = 0; i < ARRAY_LEN(ev); i++)
		printf("\t%s: %s\n", ev[i].s,
		       on(r >> ev[i].bit & 1, "Send async event", "Do not send async event"));
	printf("\tSMART / Health Critical Warnings                          : %s\n",
	       on(r & 0xff, "Send async event", "Do not send async event"));
}

static void timestamp(const uint8_t *b, uint32_t len)
{
	uint64_t ms = 0;
	char when[320];
	time_t t;
	struct tm tm;

	if (len < 8)
		return;
	for (int i = 5; i >= 0; i--)
		ms = ms << 8 | b[i];
	t = (time_t)(ms / 1000);
	if (!localtime_r(&t, &tm) || !strftime(when, sizeof(when), "%c %Z", &tm))
		snprintf(when, sizeof(when), "-");
	printf("\tThe timestamp is : %" PRIu64 " (%s)\n", ms, when);
	printf("\t%s\n", b[6] & 2 ?
	       "The Timestamp field was initialized with a Timestamp value using a Set Features command." :
	       "The Timestamp field was initialized to ‘0’ by a Controller Level Reset.");
	printf("\t%s\n", b[6] & 1 ?
	       "The controller may have stopped counting during vendor specific intervals after the Timestamp value was initialized" :
	       "The controller counted time in milliseconds continuously since the Timestamp value was initialized.");
}

/* -H: returns false for a feature not decoded here (its data is dumped) */
static bool show_fields(uint8_t fid, uint32_t r, const uint8_t *buf, uint32_t len)
{
	static const char *const wl[] = { "No Workload",
		"Extended Idle Period with a Burst of Random Writes", "Heavy Sequential Writes" };
	static const char *const thsel[] = { "Over Temperature Threshold",
		"Under Temperature Threshold" };
	unsigned x;

	switch (fid) {
	case NVME_FEAT_FID_ARBITRATION:
		printf("\tHigh Priority Weight   (HPW): %u\n", (r >> 24) + 1);
		printf("\tMedium Priority Weight (MPW): %u\n", ((r >> 16) & 0xff) + 1);
		printf("\tLow Priority Weight    (LPW): %u\n", ((r >> 8) & 0xff) + 1);
		if ((r & 7) == 7)
			printf("\tArbitration Burst       (AB): No limit\n");
		else
			printf("\tArbitration Burst       (AB): %u\n", 1u << (r & 7));
		return true;
	case NVME_FEAT_FID_POWER_MGMT:
		x = (r >> 5) & 7;
		printf("\tWorkload Hint (WH): %u - %s\n", x, x < 3 ? wl[x] : "Reserved");
		printf("\tPower State   (PS): %u\n", r & 0x1f);
		return true;
	case NVME_FEAT_FID_TEMP_THRESH:
		x = (r >> 20) & 3;
		printf("\tThreshold Type Select         (THSEL): %u - %s\n", x,
		       x < 2 ? thsel[x] : "Reserved");
		x = (r >> 16) & 0xf;
		if (x == 0)
			printf("\tThreshold Temperature Select (TMPSEL): %u - Composite Temperature\n", x);
		else if (x <= 8)
			printf("\tThreshold Temperature Select (TMPSEL): %u - Temperature Sensor %u\n",
			       x, x);
		else
			printf("\tThreshold Temperature Select (TMPSEL): %u - Reserved\n", x);
		printf("\tTemperature Threshold         (TMPTH): %ld°C (%u Kelvin)\n",
		       celsius(r & 0xffff), r & 0xffff);
		return true;
	case NVME_FEAT_FID_ERR_RECOVERY:
		printf("\tDeallocated or Unwritten Logical Block Error Enable (DULBE): %s\n",
		       on(r >> 16 & 1, "Enabled", "Disabled"));
		printf("\tTime Limited Error Recovery                          (TLER): %u ms\n",
		       (r & 0xffff) * 100);
		return true;
	case NVME_FEAT_FID_VOLATILE_WC:
		printf("\tVolatile Write Cache Enable (WCE): %s\n", on(r & 1, "Enabled", "Disabled"));
		return true;
	case NVME_FEAT_FID_NUM_QUEUES:
		printf("\tNumber of IO Completion Queues Allocated (NCQA): %u\n", (r >> 16) + 1);
		printf("\tNumber of IO Submission Queues Allocated (NSQA): %u\n", (r & 0xffff) + 1);
		return true;
	case NVME_FEAT_FID_IRQ_COALESCE:
		printf("\tAggregation Time     (TIME): %u usec\n", ((r >> 8) & 0xff) * 100);
		printf("\tAggregation Threshold (THR): %u\n", (r & 0xff) + 1);
		return true;
	case NVME_FEAT_FID_IRQ_CONFIG:
		printf("\tCoalescing Disable (CD): %s\n", on(r >> 16 & 1, "True", "False"));
		printf("\tInterrupt Vector   (IV): %u\n", r & 0xffff);
		return true;
	case NVME_FEAT_FID_WRITE_ATOMIC:
		printf("\tDisable Normal (DN): %s\n", on(r & 1, "True", "False"));
		return true;
	case NVME_FEAT_FID_ASYNC_EVENT:
		async_event(r);
		return true;
	case NVME_FEAT_FID_TIMESTAMP:
		if (buf)
			timestamp(buf, len);
		return true;
	case NVME_FEAT_FID_KATO:
		printf("\tKeep Alive Timeout (KATO) in milliseconds: %u\n", r);
		return true;
	case NVME_FEAT_FID_HCTM:
		printf("\tThermal Management Temperature 1 (TMT1) : %u Kelvin (%ld°C)\n", r >> 16,
		       celsius(r >> 16));
		printf("\tThermal Management Temperature 2 (TMT2) : %u Kelvin (%ld°C)\n",
		       r & 0xffff, celsius(r & 0xffff));
		return true;
	case NVME_FEAT_FID_NOPSC:
		printf("\tNon-Operational Power State Permissive Mode Enable (NOPPME): %s\n",
		       on(r & 1, "True", "False"));
		return true;
	case NVME_FEAT_FID_RRL:
		printf("\tRead Recovery Level (RRL): %u\n", r & 0xf);
		return true;
	case NVME_FEAT_FID_SANITIZE:
		printf("\tNo-Deallocate Response Mode (NODRM) : %u\n", r & 1);
		return true;
	case NVME_FEAT_FID_SW_PROGRESS:
		printf("\tPre-boot Software Load Count (PBSLC): %u\n", r & 0xff);
		return true;
	case NVME_FEAT_FID_HOST_ID:
		if (buf && len >= 8)
			printf("\tHost Identifier (HOSTID):  %" PRIu64 "\n", pl64(buf));
		return true;
	default:
		return false;
	}
}

static void feature_json(uint8_t fid, uint8_t sel, uint32_t result, const uint8_t *data,
			 uint32_t len)
{
	struct json_object *o = json_object_new_object();

	pj_int(o, "feature_id", fid);
	pj_str(o, "feature", p_feature_name(fid));
	pj_str(o, "sel", p_select_name(sel));
	/* the whole 32-bit dword as an unsigned number */
	pj_u64(o, "value", result);
	if (data && len) {
		struct json_object *a = json_object_new_array();

		for (uint32_t i = 0; i < len; i++)
			json_object_array_add(a, json_object_new_int(data[i]));
		json_object_object_add(o, "data", a);
	}
	pj_print(o);
}

void print_feature(uint8_t fid, uint8_t sel, uint32_t result, const void *data, uint32_t len,
		   enum out_fmt f, unsigned flags)
{
	const uint8_t *buf = len ? data : NULL;

	if (f == OUT_BINARY && buf)
		return p_raw(buf, len);
	if (f == OUT_JSON)
		return feature_json(fid, sel, result, buf, len);
	printf("get-feature:%#0*x (%s), %s value:%#0*x\n", fid ? 4 : 2, fid,
	       p_feature_name(fid), p_select_name(sel), result ? 10 : 8, result);
	if (sel == 3) {
		if (result & 1)
			printf("  Feature is saveable\n");
		if (result & 2)
			printf("  Feature is per-namespace\n");
		if (result & 4)
			printf("  Feature is changeable\n");
		return;
	}
	if ((flags & PRINT_HUMAN) && show_fields(fid, result, buf, len))
		return;
	if (buf)
		p_hexdump(buf, len);
}
