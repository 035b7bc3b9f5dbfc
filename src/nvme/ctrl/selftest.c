/* SPDX-License-Identifier: MIT */
/*
 * Device Self-test (admin 14h) and its log (06h). A test runs in the
 * background for a fixed time (short 2 s, extended 60 s, the one minute
 * EDSTT says), its progress observable in the log's completion
 * field; at the end it reads the first and last block of every namespace
 * under test (segment 2, the read test): a store that cannot be read fails
 * it. The 20 newest results are kept in ctrl.json, newest first, with the
 * power-on hours they ended at. Abort (Fh), a sanitize, a format and a
 * Controller Level Reset end a running test with the result the spec names.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl_int.h"

#define NSID_ALL	0xffffffffu
#define STC(dw10)	((dw10) & 0xfu)
#define SEG_READ	2	/* the segment our one check belongs to */
#define VDI_NSIDV	(1u << 0)

uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * A test loaded from ctrl.json (the device stayed powered, another user
 * started it): it has been running since its wall-clock start, on this
 * process's monotonic clock from now on.
 */
void ctrl_selftest_resume(struct ucmd_ctrl *c, uint8_t op, uint32_t nsid, uint64_t start_rt_ms,
			   uint64_t dur_ms)
{
	uint64_t now = realtime_ms(), el = now > start_rt_ms ? now - start_rt_ms : 0;
	uint64_t mono = ktime_get_ns();

	c->dst.op = op;
	c->dst.nsid = nsid;
	c->dst.start_rt_ms = start_rt_ms;
	c->dst.dur_ns = dur_ms * 1000000ull;
	el *= 1000000ull;
	c->dst.start_ns = el < mono ? mono - el : 0;
	if (el >= c->dst.dur_ns)
		c->dst.start_ns = mono >= c->dst.dur_ns ? mono - c->dst.dur_ns : 0;
}

uint64_t ctrl_power_on_hours(struct ucmd_ctrl *c)
{
	return (c->smart.power_on_seconds + (ktime_get_ns() - c->created_ns) / 1000000000ull) /
	       3600;
}

static void record(struct ucmd_ctrl *c, uint8_t result, uint8_t seg)
{
	struct ctrl_dst_result *r = c->dst.res;

	memmove(&r[1], &r[0], (UCMD_DST_RESULTS - 1) * sizeof(*r));
	r->status = (uint8_t)(c->dst.op << NVME_ST_CODE_SHIFT | result);
	r->segment = seg;
	r->valid = c->dst.nsid ? VDI_NSIDV : 0;
	r->poh = ctrl_power_on_hours(c);
	r->nsid = c->dst.nsid;
	if (c->dst.nres < UCMD_DST_RESULTS)
		c->dst.nres++;
	c->dst.op = 0;
	c->dst.nsid = 0;
	c->dst.dur_ns = 0;
	c->dst.start_rt_ms = 0;
	ctrl_persist(c);
}

void ctrl_selftest_abort(struct ucmd_ctrl *c, uint8_t result)
{
	if (c->dst.op)
		record(c, result, 0);
}

/* The read test: first and last block of each namespace under test */
static bool read_ok(struct ucmd_ctrl *c)
{
	uint8_t buf[4096 + 64];

	for (unsigned i = 1; i <= UCMD_MAX_NS; i++) {
		struct ctrl_ns *ns = c->ns[i];
		uint64_t bs;

		if (!ns || !(ns->attached & ctrl_bit(c)) || (c->dst.nsid != NSID_ALL && c->dst.nsid != i))
			continue;
		bs = ctrl_ns_ds(ns);
		if (store_read(ns->st, buf, bs, 0) ||
		    store_read(ns->st, buf, bs, ctrl_ns_data_off(ns, ns->nsze - 1)))
			return false;
	}
	return true;
}

bool ctrl_selftest_step(struct ucmd_ctrl *c)
{
	if (!c->dst.op)
		return false;
	if (ktime_get_ns() - c->dst.start_ns < c->dst.dur_ns)
		return true;
	if (read_ok(c))
		record(c, NVME_ST_RESULT_NO_ERR, 0);
	else
		record(c, NVME_ST_RESULT_KNOWN_SEG_FAIL, SEG_READ);
	return false;
}

uint16_t ctrl_admin_selftest(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint32_t nsid = req->cmd.nsid;
	uint8_t stc = STC(req->cmd.cdw10);

	if (req->cmd.cdw10 & ~0xfu)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (stc == NVME_DST_STC_ABORT) {
		ctrl_selftest_abort(c, NVME_ST_RESULT_ABORTED);
		return 0;
	}
	if (stc != NVME_DST_STC_SHORT && stc != NVME_DST_STC_LONG)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	/* 0: the controller alone; FFFFFFFFh: it and every namespace; else one active one */
	if (nsid && nsid != NSID_ALL && !ctrl_ns_active(c, nsid))
		return UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
	if (c->dst.op)
		return UCMD_CMD(NVME_SC_SELF_TEST_IN_PROGRESS);
	c->dst.op = stc;
	c->dst.nsid = nsid;
	c->dst.start_ns = ktime_get_ns();
	c->dst.start_rt_ms = realtime_ms();
	c->dst.dur_ns = (stc == NVME_DST_STC_SHORT ? c->dst.short_ms : c->dst.ext_ms) * 1000000ull;
	return 0;
}

void ctrl_log_selftest(struct ucmd_ctrl *c, uint32_t nsid, struct nvme_self_test_log *l)
{
	(void)nsid;
	ctrl_selftest_step(c);
	l->current_operation = c->dst.op;
	if (c->dst.op) {
		uint64_t el = ktime_get_ns() - c->dst.start_ns;

		l->completion = (uint8_t)(c->dst.dur_ns ? (el >= c->dst.dur_ns ? 99 :
						  el * 100 / c->dst.dur_ns) : 0);
	}
	for (unsigned i = 0; i < NVME_LOG_ST_MAX_RESULTS; i++) {
		struct nvme_st_result *o = &l->result[i];
		const struct ctrl_dst_result *r = &c->dst.res[i];

		if (i >= c->dst.nres) {
			o->dsts = NVME_ST_RESULT_NOT_USED;
			continue;
		}
		o->dsts = r->status;
		o->seg = r->segment;
		o->vdi = r->valid;
		o->poh = htole64(r->poh);
		o->nsid = htole32(r->nsid);
	}
}
