// SPDX-License-Identifier: MIT
/*
 * The BPF program's decisions into ucmd's audit trail: each ring buffer
 * event becomes the JSON line the engine's audit module writes for the
 * same decision (ucmd_audit_write_record). Events the ring buffer had no
 * room for are counted by the program (stats[UL_STAT_LOST]); the reader
 * hands every increase to the trail, so the next record says "lost": N.
 */
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "ucmd/security.h"
#include "ucmd_bpf.h"
#include "ucmd_lsm.h"

struct reader {
	struct ucmd_audit *trail;
	int conf_fd, labels_fd, stats_fd;
	int64_t boot_to_real;	/* CLOCK_REALTIME - CLOCK_BOOTTIME, ns */
	uint64_t lost_seen;
	unsigned long n, max;
};

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* the ring buffer's losses since the last look, handed to the trail */
static void take_lost(struct reader *r)
{
	__u32 key = UL_STAT_LOST;
	__u64 v;

	if (bpf_map_lookup_elem(r->stats_fd, &key, &v) || v <= r->lost_seen)
		return;
	ucmd_audit_add_lost(r->trail, v - r->lost_seen);
	r->lost_seen = v;
}

/* "file:line name" of the deciding rule, as the set in force then had it */
static void rule_label(struct reader *r, const struct ul_event *ev, char *out, size_t len)
{
	struct ul_conf c = { 0 };
	__u32 key = 1 + (ev->set & 1);
	char label[UL_LABEL_LEN] = "";

	if (bpf_map_lookup_elem(r->conf_fd, &key, &c) || c.gen != ev->gen) {
		snprintf(out, len, "(policy generation %u, since replaced)", ev->gen);
		return;
	}
	key = (ev->set & 1) * (UL_MAX_RULES + 1) +
	      (ev->rule < 0 || ev->rule >= UL_MAX_RULES ? UL_MAX_RULES : (__u32)ev->rule);
	bpf_map_lookup_elem(r->labels_fd, &key, label);
	label[sizeof(label) - 1] = 0;
	snprintf(out, len, "%s", label);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct reader *r = ctx;
	const struct ul_event *ev = data;
	struct ucmd_audit_record rec = { 0 };
	char device[sizeof(ev->device) + 1], rule[UL_LABEL_LEN + 64];

	if (size < sizeof(*ev))
		return 0;
	take_lost(r);
	memcpy(device, ev->device, sizeof(ev->device));
	device[sizeof(ev->device)] = 0;
	if (ev->unknown_dev)
		snprintf(rule, sizeof(rule), "an NVMe device the loaded policy does not know "
			 "(appeared after the load): denied");
	else
		rule_label(r, ev, rule, sizeof(rule));
	rec.time_ns = (uint64_t)((int64_t)ev->boot_ns + r->boot_to_real);
	rec.ioctl = ev->hook == UL_HOOK_FILE_IOCTL;
	rec.pid = (int32_t)ev->pid;
	rec.uid = ev->uid;
	rec.gid = ev->gid;
	rec.cap_sys_admin = ev->cap;
	rec.device = device;
	rec.cmd_op = ev->cmd_op;
	rec.opcode = ev->opcode;
	rec.verb = ev->verb;
	rec.dir = ev->dir;
	rec.admin = ev->admin;
	rec.nsid = ev->nsid;
	rec.has_range = ev->has_range;
	rec.range_unknown = ev->range_unknown;
	rec.destructive = ev->destructive;
	rec.offset = ev->offset;
	rec.length = ev->length;
	rec.slba = ev->slba;
	rec.nlb = ev->nlb;
	rec.allow = ev->allow;
	rec.err = ev->err;
	rec.module = "policy";
	rec.rule = rule;
	ucmd_audit_write_record(r->trail, &rec);
	r->n++;
	/* a positive return stops ring_buffer__poll: the count is reached */
	return r->max && r->n >= r->max ? 1 : 0;
}

int bpf_lsm_audit(const char *path, unsigned long max, unsigned idle_ms, char *err,
		   size_t errlen)
{
	struct reader r = { .max = max };
	struct ring_buffer *rb = NULL;
	int events_fd, ret = 0;
	unsigned idle = 0;

	events_fd = ul_pinned_map("events");
	r.conf_fd = ul_pinned_map("conf");
	r.labels_fd = ul_pinned_map("labels");
	r.stats_fd = ul_pinned_map("stats");
	if (events_fd < 0 || r.conf_fd < 0 || r.labels_fd < 0 || r.stats_fd < 0) {
		ret = errno == ENOENT ? -ENOENT : -errno;
		snprintf(err, errlen, "no ucmd BPF policy is loaded (%s: %s)", UCMD_BPF_PIN_DIR,
			 strerror(-ret));
		goto out;
	}
	r.trail = ucmd_audit_open(path, err, errlen);
	if (!r.trail) {
		ret = -EINVAL;
		goto out;
	}
	r.boot_to_real = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	/* losses before this reader started are no record of its trail */
	{
		__u32 key = UL_STAT_LOST;
		__u64 v = 0;

		bpf_map_lookup_elem(r.stats_fd, &key, &v);
		r.lost_seen = v;
	}
	rb = ring_buffer__new(events_fd, on_event, &r, NULL);
	if (!rb) {
		ret = -errno;
		snprintf(err, errlen, "reading the BPF ring buffer: %s", strerror(-ret));
		goto out;
	}
	for (;;) {
		unsigned long before = r.n;
		int n = ring_buffer__poll(rb, 100);

		if (n < 0 && n != -EINTR) {
			ret = n;
			snprintf(err, errlen, "reading the BPF ring buffer: %s", strerror(-n));
			break;
		}
		if (max && r.n >= max)
			break;
		take_lost(&r);
		idle = r.n == before ? idle + 100 : 0;
		if (idle_ms && idle >= idle_ms)
			break;
	}
	ucmd_audit_flush_lost(r.trail);
out:
	ring_buffer__free(rb);
	if (r.trail)
		ucmd_audit_free(r.trail);
	if (events_fd >= 0)
		close(events_fd);
	if (r.conf_fd >= 0)
		close(r.conf_fd);
	if (r.labels_fd >= 0)
		close(r.labels_fd);
	if (r.stats_fd >= 0)
		close(r.stats_fd);
	return ret;
}
