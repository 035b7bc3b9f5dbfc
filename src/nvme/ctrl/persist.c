/* SPDX-License-Identifier: MIT */
/*
 * Controller state in <dir>/ctrl.json: identity, namespaces (with their
 * write-uncorrectable ranges), saved features and SMART counters. Written
 * atomically (temp file, fdatasync, rename, fsync of the directory) so that
 * a crash leaves either the old or the new state, never a torn one. Version
 * 2 carries a generation (the write-uncorrectable journal's records name it,
 * persist_journal.c) and a CRC-32C of its canonical text; a loaded file is
 * checked in full by persist_check.c before any of it is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fdp.h"
#include "zns.h"

#define CONFIG_NAME	"ctrl.json"
/* 4: the protection tuples are stored complemented (pi_migrate.c) */
#define CONFIG_VERSION	4
/* 2^40 blocks: 512 TiB at 512 bytes, far past any store here, no overflow */
#define UCMD_MAX_NSZE	(1ull << 40)

static const char *const store_names[] = {
	[UCMD_NS_STORE_FILE] = "file",
	[UCMD_NS_STORE_RAM] = "ram",
	[UCMD_NS_STORE_DEVICE] = "device",
};

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static uint64_t get_u64(json_object *o, const char *k, uint64_t dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		return dflt;
	return json_object_get_uint64(v);
}

static const char *get_str(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static void hex(char *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(dst + 2 * i, "%02x", src[i]);
}

static bool unhex(uint8_t *dst, const char *src, size_t n)
{
	if (!src || strlen(src) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned b;

		if (sscanf(src + 2 * i, "%2x", &b) != 1)
			return false;
		dst[i] = (uint8_t)b;
	}
	return true;
}

static json_object *features_json(const struct ctrl_feat_vals *f)
{
	json_object *o = json_object_new_object();

	add_u64(o, "arbitration", f->arbitration);
	add_u64(o, "power_mgmt", f->power_mgmt);
	add_u64(o, "err_recovery", f->err_recovery);
	add_u64(o, "vwc", f->vwc);
	add_u64(o, "irq_coalesce", f->irq_coalesce);
	add_u64(o, "write_atomic", f->write_atomic);
	add_u64(o, "async_event", f->async_event);
	add_u64(o, "tmpth_over", f->tmpth_over);
	add_u64(o, "tmpth_under", f->tmpth_under);
	return o;
}

static void features_load(json_object *o, struct ctrl_feat_vals *f)
{
	f->arbitration = (uint32_t)get_u64(o, "arbitration", f->arbitration);
	f->power_mgmt = (uint32_t)get_u64(o, "power_mgmt", f->power_mgmt);
	f->err_recovery = (uint32_t)get_u64(o, "err_recovery", f->err_recovery);
	f->vwc = (uint32_t)get_u64(o, "vwc", f->vwc);
	f->irq_coalesce = (uint32_t)get_u64(o, "irq_coalesce", f->irq_coalesce);
	f->write_atomic = (uint32_t)get_u64(o, "write_atomic", f->write_atomic);
	f->async_event = (uint32_t)get_u64(o, "async_event", f->async_event);
	f->tmpth_over = (uint16_t)get_u64(o, "tmpth_over", f->tmpth_over);
	f->tmpth_under = (uint16_t)get_u64(o, "tmpth_under", f->tmpth_under);
}

/*
 * One controller's SMART counters: power_on_seconds the kept part plus
 * this power-on's (the subsystem's controllers power on together).
 */
static void smart_members(json_object *o, const struct ctrl_smart *s, uint64_t created_ns)
{
	add_u64(o, "units_read_512", s->units_read_512);
	add_u64(o, "units_written_512", s->units_written_512);
	add_u64(o, "host_reads", s->host_reads);
	add_u64(o, "host_writes", s->host_writes);
	add_u64(o, "power_cycles", s->power_cycles);
	add_u64(o, "unsafe_shutdowns", s->unsafe_shutdowns);
	add_u64(o, "power_on_seconds",
		s->power_on_seconds + (ktime_get_ns() - created_ns) / 1000000000ull);
	add_u64(o, "media_errors", s->media_errors);
}

static void smart_members_load(json_object *o, struct ctrl_smart *s)
{
	s->units_read_512 = get_u64(o, "units_read_512", 0);
	s->units_written_512 = get_u64(o, "units_written_512", 0);
	s->host_reads = get_u64(o, "host_reads", 0);
	s->host_writes = get_u64(o, "host_writes", 0);
	s->power_cycles = get_u64(o, "power_cycles", 0);
	s->unsafe_shutdowns = get_u64(o, "unsafe_shutdowns", 0);
	s->power_on_seconds = get_u64(o, "power_on_seconds", 0);
	s->media_errors = get_u64(o, "media_errors", 0);
}

static json_object *errlog_json(const struct nvme_error_log_page *log, uint64_t count);
static void errlog_load(json_object *a, struct nvme_error_log_page *log);

/*
 * A subsystem of several controllers: each controller's ANA state, the ANA
 * change count, and controllers 2..N's saved features, SMART counters and
 * error logs (their own while they exist: their passes count under this lock).
 */
static json_object *subsys_json(struct ucmd_ctrl *c)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	json_object *f = json_object_new_array(), *sm = json_object_new_array();
	json_object *er = json_object_new_array();

	for (unsigned i = 0; i < c->nr_ctrls; i++)
		json_object_array_add(a, json_object_new_uint64(c->ana_state[i]));
	json_object_object_add(o, "ana_states", a);
	add_u64(o, "ana_chgcnt", c->ana_chgcnt);
	for (unsigned i = 1; i < c->nr_ctrls; i++)
		json_object_array_add(f, features_json(&c->sib_saved[i - 1]));
	json_object_object_add(o, "saved_features", f);
	for (unsigned i = 1; i < c->nr_ctrls; i++) {
		json_object *s = json_object_new_object();

		smart_members(s, c->sib[i - 1] ? &c->sib[i - 1]->smart : &c->sib_smart[i - 1],
			      c->created_ns);
		json_object_array_add(sm, s);
	}
	json_object_object_add(o, "smart", sm);
	for (unsigned i = 1; i < c->nr_ctrls; i++) {
		struct ucmd_ctrl *x = c->sib[i - 1];
		json_object *e = json_object_new_object();
		const struct nvme_error_log_page *log = x ? x->errlog : c->sib_err[i - 1].e;
		uint64_t count = x ? x->error_count : c->sib_err[i - 1].count;

		add_u64(e, "error_count", count);
		json_object_object_add(e, "error_log", errlog_json(log, count));
		json_object_array_add(er, e);
	}
	json_object_object_add(o, "errors", er);
	return o;
}

/* persist_check.c checked every member: as many as the controllers */
static void subsys_load(struct ucmd_ctrl *c, json_object *o)
{
	json_object *a;

	json_object_object_get_ex(o, "ana_states", &a);
	for (size_t i = 0; i < json_object_array_length(a) && i < UCMD_CTRL_MAX_CONTROLLERS; i++)
		c->ana_state[i] = (uint8_t)json_object_get_uint64(json_object_array_get_idx(a, i));
	c->ana_chgcnt = get_u64(o, "ana_chgcnt", 0);
	json_object_object_get_ex(o, "saved_features", &a);
	for (size_t i = 0; i < json_object_array_length(a) && i < UCMD_CTRL_MAX_CONTROLLERS - 1; i++)
		features_load(json_object_array_get_idx(a, i), &c->sib_saved[i]);
	/* absent in a file from before it: counters from 0 */
	if (json_object_object_get_ex(o, "smart", &a))
		for (size_t i = 0; i < json_object_array_length(a) && i < UCMD_CTRL_MAX_CONTROLLERS - 1;
		     i++)
			smart_members_load(json_object_array_get_idx(a, i), &c->sib_smart[i]);
	/* absent in a file from before them: empty error logs */
	if (json_object_object_get_ex(o, "errors", &a))
		for (size_t i = 0; i < json_object_array_length(a) && i < UCMD_CTRL_MAX_CONTROLLERS - 1;
		     i++) {
			json_object *e = json_object_array_get_idx(a, i), *log;

			c->sib_err[i].count = get_u64(e, "error_count", 0);
			json_object_object_get_ex(e, "error_log", &log);
			errlog_load(log, c->sib_err[i].e);
		}
}

static json_object *smart_json(struct ucmd_ctrl *c)
{
	json_object *o = json_object_new_object();

	smart_members(o, &c->smart, c->created_ns);
	add_u64(o, "error_count", c->error_count);
	return o;
}

static json_object *uarr(const uint64_t *v, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_uint64(v[i]));
	return a;
}

/* An error log's entries, oldest first: [error_count, sqid, cmdid, status, nsid, lba] */
static json_object *errlog_json(const struct nvme_error_log_page *log, uint64_t count)
{
	json_object *a = json_object_new_array();
	uint64_t n = count < UCMD_ERRLOG_ENTRIES ? count : UCMD_ERRLOG_ENTRIES;

	for (uint64_t i = n; i > 0; i--) {
		const struct nvme_error_log_page *e = &log[(count - i) % UCMD_ERRLOG_ENTRIES];
		uint64_t v[6] = { le64toh(e->error_count), le16toh(e->sqid), le16toh(e->cmdid),
				  le16toh(e->status_field), le32toh(e->nsid), le64toh(e->lba) };

		if (v[0])
			json_object_array_add(a, uarr(v, 6));
	}
	return a;
}

static json_object *sanitize_json(struct ucmd_ctrl *c)
{
	json_object *o = json_object_new_object();

	add_u64(o, "sstat", c->san.sstat);
	add_u64(o, "scdw10", c->san.scdw10);
	add_u64(o, "ovrpat", c->san.ovrpat);
	json_object_object_add(o, "ause_fail", json_object_new_boolean(c->san.ause_fail));
	json_object_object_add(o, "exited", json_object_new_boolean(c->san.exited));
	{
		/* how far a running one got: [pass, nsid, byte offset, bytes done] */
		uint64_t pr[4] = { c->san.pass, c->san.ns_idx, c->san.off, c->san.done };

		if (!ctrl_sanitize_busy(c))
			memset(pr, 0, sizeof(pr));
		json_object_object_add(o, "progress", uarr(pr, 4));
	}
	/* when a running one started, by the wall clock: its progress keeps to it */
	if (ctrl_sanitize_busy(c))
		add_u64(o, "start_rt_ms", c->san.start_rt_ms);
	return o;
}

/* Newest first: [status, segment, valid, poh, nsid] */
static json_object *selftest_json(struct ucmd_ctrl *c)
{
	json_object *a = json_object_new_array();

	for (unsigned i = 0; i < c->dst.nres; i++) {
		const struct ctrl_dst_result *r = &c->dst.res[i];
		uint64_t v[5] = { r->status, r->segment, r->valid, r->poh, r->nsid };

		json_object_array_add(a, uarr(v, 5));
	}
	return a;
}

static json_object *fw_json(struct ucmd_ctrl *c)
{
	json_object *o = json_object_new_object(), *revs = json_object_new_array();
	uint64_t flags[UCMD_FW_SLOTS];

	add_u64(o, "active", c->fw.active);
	add_u64(o, "next", c->fw.next);
	json_object_object_add(o, "next_conv", json_object_new_boolean(c->fw.next_conv));
	for (unsigned s = 1; s <= UCMD_FW_SLOTS; s++) {
		json_object_array_add(revs, json_object_new_string(c->fw.rev[s]));
		flags[s - 1] = c->fw.flags[s];
	}
	json_object_object_add(o, "revisions", revs);
	json_object_object_add(o, "flags", uarr(flags, UCMD_FW_SLOTS));
	return o;
}

static json_object *ns_json(const struct ctrl_ns *ns, uint8_t all)
{
	json_object *o = json_object_new_object(), *u = json_object_new_array();
	char uuid[33];

	add_u64(o, "nsid", ns->nsid);
	add_u64(o, "nsze", ns->nsze);
	add_u64(o, "lbaf", ns->lbaf);
	json_object_object_add(o, "extended", json_object_new_boolean(ns->extended));
	if (ns->dps)
		add_u64(o, "dps", ns->dps);
	if (ns->lbstm)
		add_u64(o, "lbstm", ns->lbstm);
	json_object_object_add(o, "attached", json_object_new_boolean(ns->attached));
	/* attached to some of several controllers: which, by number (1: controller 1) */
	if (ns->attached && ns->attached != all) {
		json_object *l = json_object_new_array();

		for (unsigned i = 0; i < 8; i++)
			if (ns->attached & (1u << i))
				json_object_array_add(l, json_object_new_uint64(i + 1));
		json_object_object_add(o, "attached_to", l);
	}
	if (ns->nphndl) {
		json_object *l = json_object_new_array();

		for (unsigned i = 0; i < ns->nphndl; i++)
			json_object_array_add(l, json_object_new_uint64(ns->phndl[i]));
		json_object_object_add(o, "phndl", l);
	}
	json_object_object_add(o, "store", json_object_new_string(store_names[ns->kind]));
	if (ns->path)
		json_object_object_add(o, "path", json_object_new_string(ns->path));
	hex(uuid, ns->uuid, sizeof(ns->uuid));
	json_object_object_add(o, "uuid", json_object_new_string(uuid));
	for (size_t i = 0; i < ns->uncor.n; i++) {
		json_object *r = json_object_new_array();

		json_object_array_add(r, json_object_new_uint64(ns->uncor.r[i].slba));
		json_object_array_add(r, json_object_new_uint64(ns->uncor.r[i].nlb));
		json_object_array_add(u, r);
	}
	json_object_object_add(o, "uncorrectable", u);
	if (ns->zoned) {
		/* the geometry; write pointers and states are in nsN.zones */
		json_object *z = json_object_new_object();
		struct ucmd_zns_params zp;

		ctrl_zns_params(ns, &zp);
		add_u64(z, "zone_size", zp.zone_size);
		add_u64(z, "zone_cap", zp.zone_cap);
		add_u64(z, "max_open", zp.max_open);
		add_u64(z, "max_active", zp.max_active);
		add_u64(z, "zasl", zp.zasl);
		add_u64(z, "zdes", zp.zdes);
		json_object_object_add(z, "cross_read", json_object_new_boolean(zp.cross_read));
		json_object_object_add(o, "zoned", z);
	}
	return o;
}

/*
 * A new temp file with a unique name (dir.c: O_EXCL|O_NOFOLLOW, 0600),
 * renamed over name relative to the directory descriptor: no fixed temp name
 * for two processes to race on or for anyone to plant a symlink at.
 */
int ctrl_write_atomic(struct ucmd_ctrl *c, const char *name, const void *buf, size_t len)
{
	const char *text = buf;
	char tmp[PATH_MAX];
	size_t done = 0;
	int fd, ret;

	ret = ctrl_dir_temp(c, name, tmp, sizeof(tmp), &fd);
	if (ret)
		return ret;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		done += (size_t)n;
	}
	if (!ret && fdatasync(fd))
		ret = -errno;
	close(fd);
	if (!ret && renameat(c->dirfd, tmp, c->dirfd, name))
		ret = -errno;
	if (ret) {
		unlinkat(c->dirfd, tmp, 0);
		return ret;
	}
	/* The rename itself must reach the disk. */
	return fsync(c->dirfd) ? -errno : 0;
}

/* The checksum covers every other member, in the canonical text the loader
 * recomputes (persist_check.c). */
static void crc_add(json_object *root)
{
	char hexcrc[9];

	snprintf(hexcrc, sizeof(hexcrc), "%08x", ctrl_state_crc(root));
	json_object_object_add(root, "crc32c", json_object_new_string(hexcrc));
}

int ctrl_persist_save(struct ucmd_ctrl *c, bool clean)
{
	json_object *root, *nss;
	int ret;

	if (!c->dir)
		return 0;
	if (c->p.read_only)
		return -EROFS;	/* never reached: a read-only controller changes no state */
	root = json_object_new_object();
	nss = json_object_new_array();
	add_u64(root, "version", CONFIG_VERSION);
	json_object_object_add(root, "serial", json_object_new_string(c->serial));
	json_object_object_add(root, "model", json_object_new_string(c->model));
	json_object_object_add(root, "firmware", json_object_new_string(c->firmware));
	/* false while running: finding it false at load means we crashed. */
	json_object_object_add(root, "clean", json_object_new_boolean(clean));
	json_object_object_add(root, "saved_features", features_json(&c->saved));
	json_object_object_add(root, "smart", smart_json(c));
	json_object_object_add(root, "subnqn", json_object_new_string(c->subnqn));
	json_object_object_add(root, "boot_id", json_object_new_string(c->cur_boot_id));
	json_object_object_add(root, "current_features",
			       features_json(c->shn_valid ? &c->shn_cur : &c->cur));
	json_object_object_add(root, "error_log", errlog_json(c->errlog, c->error_count));
	json_object_object_add(root, "sanitize", sanitize_json(c));
	json_object_object_add(root, "self_test", selftest_json(c));
	{
		/* a test in progress: [op, nsid, wall-clock start ms, duration ms] */
		uint64_t run[4] = { c->dst.op, c->dst.nsid, c->dst.start_rt_ms,
				    c->dst.dur_ns / 1000000ull };

		if (!c->dst.op)
			memset(run, 0, sizeof(run));
		json_object_object_add(root, "self_test_run", uarr(run, 4));
	}
	json_object_object_add(root, "fw_slots", fw_json(c));
	if (c->fdp)
		json_object_object_add(root, "fdp", ctrl_fdp_json(c));
	/* written only for several: a directory of one reads as before */
	if (c->nr_ctrls > 1) {
		add_u64(root, "controllers", c->nr_ctrls);
		json_object_object_add(root, "subsystem", subsys_json(c));
	}
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i])
			json_object_array_add(nss, ns_json(c->ns[i], ctrl_all_bits(c)));
	json_object_object_add(root, "namespaces", nss);
	/* The journal exists before a ctrl.json that expects one. */
	ret = ctrl_journal_open(c, false);
	/* the media models go first: one a crash leaves behind is only counts */
	if (!ret)
		ret = ctrl_fdp_save_models(c);
	if (!ret) {
		add_u64(root, "generation", c->journal_gen + 1);
		crc_add(root);
		const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE);

		ret = ctrl_write_atomic(c, CONFIG_NAME, text, strlen(text));
	}
	json_object_put(root);
	if (ret)
		return ret;
	/* ctrl.json now holds every record of the journal, and says version 4 */
	c->journal_gen++;
	ctrl_pi_migrate_done(c);
	return ctrl_journal_reset(c);
}

void ctrl_persist(struct ucmd_ctrl *c)
{
	int ret;

	/* the state is the subsystem's, in controller 1's directory */
	c = ctrl_primary(c);
	/* a read-only controller keeps its changes (counters, logs) in memory */
	if (c->dir && !c->p.read_only && (ret = ctrl_persist_save(c, false)))
		ctrl_persist_failed(c, ret);
}

void ctrl_persist_failed(struct ucmd_ctrl *c, int err)
{
	/* State the host relies on is no longer durable. */
	if (!c->persist_failed)
		c->persist_err = err;
	c->persist_failed = true;
	ctrl_ctrl_fatal(c);
}

static int replace_str(char **dst, const char *src)
{
	char *n;

	if (!src)
		return 0;
	n = strdup(src);
	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static int ns_load(struct ucmd_ctrl *c, json_object *o)
{
	struct ctrl_ns *ns = calloc(1, sizeof(*ns));
	const char *store = get_str(o, "store"), *path = get_str(o, "path");
	json_object *u, *v;
	int ret = -EINVAL;

	if (!ns)
		return -ENOMEM;
	ns->nsid = (uint32_t)get_u64(o, "nsid", 0);
	ns->nsze = get_u64(o, "nsze", 0);
	ctrl_ns_set_lbaf(ns, (uint8_t)get_u64(o, "lbaf", 0));
	ns->extended = json_object_object_get_ex(o, "extended", &v) && json_object_get_boolean(v);
	ns->dps = (uint8_t)get_u64(o, "dps", 0);
	ns->lbstm = get_u64(o, "lbstm", 0);
	/* attached: to every controller, unless attached_to names some (persist_check.c) */
	if (json_object_object_get_ex(o, "attached", &v) && json_object_get_boolean(v))
		ns->attached = ctrl_all_bits(c);
	if (ns->attached && json_object_object_get_ex(o, "attached_to", &v)) {
		ns->attached = 0;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			ns->attached |= (uint8_t)(1u << (json_object_get_uint64(
				json_object_array_get_idx(v, i)) - 1));
	}
	/* checked by persist_check.c: at most 128 distinct handles */
	if (json_object_object_get_ex(o, "phndl", &v)) {
		ns->nphndl = (uint16_t)json_object_array_length(v);
		for (unsigned i = 0; i < ns->nphndl; i++)
			ns->phndl[i] = (uint16_t)json_object_get_uint64(
				json_object_array_get_idx(v, i));
	}
	ns->kind = UCMD_NS_STORE_FILE;
	for (unsigned k = 0; store && k < 3; k++)
		if (!strcmp(store, store_names[k]))
			ns->kind = (enum ucmd_ns_store)k;
	if (!json_object_is_type(o, json_type_object) || !ns->nsid || ns->nsid > UCMD_MAX_NS ||
	    c->ns[ns->nsid] || !ns->nsze || ns->nsze > UCMD_MAX_NSZE ||
	    ns->lbaf >= UCMD_NR_LBAF || (ns->kind == UCMD_NS_STORE_DEVICE && !path))
		goto fail;
	if (!unhex(ns->uuid, get_str(o, "uuid"), sizeof(ns->uuid)))
		ctrl_ns_uuid(c, ns);
	/* Only a device namespace has a path; dir.c checks it when it is opened. */
	if (ns->kind == UCMD_NS_STORE_DEVICE && !(ns->path = strdup(path))) {
		ret = -ENOMEM;
		goto fail;
	}
	if (json_object_object_get_ex(o, "uncorrectable", &u)) {
		/* a damaged or hand-edited file: every shape is checked */
		if (!json_object_is_type(u, json_type_array))
			goto fail;
		for (size_t i = 0; i < json_object_array_length(u); i++) {
			json_object *r = json_object_array_get_idx(u, i);

			if (!json_object_is_type(r, json_type_array) ||
			    json_object_array_length(r) != 2)
				goto fail;
			/* sorted and disjoint (checked): each goes at the end, O(1) */
			ret = ctrl_ranges_append(&ns->uncor,
					json_object_get_uint64(json_object_array_get_idx(r, 0)),
					json_object_get_uint64(json_object_array_get_idx(r, 1)));
			if (ret)
				goto fail;
		}
		ret = -EINVAL;
	}
	/*
	 * A RAM namespace comes back empty; a file one with its data, from an
	 * existing nsN.img of exactly its size: loading never creates, extends
	 * or truncates anything.
	 */
	ret = ctrl_ns_open_store(c, ns, ns->kind == UCMD_NS_STORE_RAM);
	if (ret)
		goto fail;
	if (json_object_object_get_ex(o, "zoned", &v)) {
		/* persist_check.c checked every member */
		struct ucmd_zns_params zp = {
			.zone_size = get_u64(v, "zone_size", 0), .zone_cap = get_u64(v, "zone_cap", 0),
			.max_open = (uint32_t)get_u64(v, "max_open", 0),
			.max_active = (uint32_t)get_u64(v, "max_active", 0),
			.zasl = (uint8_t)get_u64(v, "zasl", 0), .zdes = (uint8_t)get_u64(v, "zdes", 0),
		};
		json_object *b;

		zp.cross_read = json_object_object_get_ex(v, "cross_read", &b) &&
				json_object_get_boolean(b);
		/* a RAM namespace's zones come back Empty, as its data comes back zero */
		ret = ctrl_zns_init(c, ns, &zp, ns->kind == UCMD_NS_STORE_RAM || !c->dir);
		if (ret) {
			store_close(ns->st);
			goto fail;
		}
	}
	if ((ret = ctrl_fdp_ns_init(c, ns)) || (ret = ctrl_fdp_load_model(c, ns))) {
		ctrl_fdp_ns_free(ns);
		ctrl_zns_free(c, ns, false);
		store_close(ns->st);
		goto fail;
	}
	c->ns[ns->nsid] = ns;
	return 0;
fail:
	ctrl_ranges_clear(&ns->uncor);
	free(ns->path);
	free(ns);
	return ret;
}

static uint64_t idx_u64(json_object *a, size_t i)
{
	return json_object_get_uint64(json_object_array_get_idx(a, i));
}

/* errlog_json's entries (persist_check.c checked them) back into log */
static void errlog_load(json_object *a, struct nvme_error_log_page *log)
{
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		uint64_t cnt = idx_u64(e, 0);
		struct nvme_error_log_page *p = &log[(cnt - 1) % UCMD_ERRLOG_ENTRIES];

		p->error_count = htole64(cnt);
		p->sqid = htole16((uint16_t)idx_u64(e, 1));
		p->cmdid = htole16((uint16_t)idx_u64(e, 2));
		p->status_field = htole16((uint16_t)idx_u64(e, 3));
		p->parm_error_location = htole16(0xffff);
		p->nsid = htole32((uint32_t)idx_u64(e, 4));
		p->lba = htole64(idx_u64(e, 5));
	}
}

/* The members version 3 added; persist_check.c checked every one */
static int load_v3(struct ucmd_ctrl *c, json_object *root)
{
	json_object *o, *a;
	int ret;

	if ((ret = replace_str(&c->subnqn, get_str(root, "subnqn"))))
		return ret;
	c->nr_ctrls = (unsigned)get_u64(root, "controllers", 1);
	if (json_object_object_get_ex(root, "subsystem", &o))
		subsys_load(c, o);
	snprintf(c->boot_id, sizeof(c->boot_id), "%s", get_str(root, "boot_id"));
	json_object_object_get_ex(root, "current_features", &o);
	c->cur = c->saved;
	features_load(o, &c->cur);
	c->cur_valid = true;
	json_object_object_get_ex(root, "error_log", &a);
	errlog_load(a, c->errlog);
	json_object_object_get_ex(root, "sanitize", &o);
	c->san.sstat = (uint16_t)get_u64(o, "sstat", 0);
	c->san.scdw10 = (uint32_t)get_u64(o, "scdw10", 0);
	c->san.ovrpat = (uint32_t)get_u64(o, "ovrpat", 0);
	c->san.ause_fail = json_object_object_get_ex(o, "ause_fail", &a) && json_object_get_boolean(a);
	c->san.exited = json_object_object_get_ex(o, "exited", &a) && json_object_get_boolean(a);
	json_object_object_get_ex(o, "progress", &a);
	c->san.pass = (uint32_t)idx_u64(a, 0);
	c->san.ns_idx = (uint32_t)idx_u64(a, 1);
	c->san.off = idx_u64(a, 2);
	c->san.done = idx_u64(a, 3);
	c->san.start_rt_ms = get_u64(o, "start_rt_ms", 0);
	json_object_object_get_ex(root, "self_test", &a);
	c->dst.nres = (unsigned)json_object_array_length(a);
	for (unsigned i = 0; i < c->dst.nres; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		struct ctrl_dst_result *r = &c->dst.res[i];

		r->status = (uint8_t)idx_u64(e, 0);
		r->segment = (uint8_t)idx_u64(e, 1);
		r->valid = (uint8_t)idx_u64(e, 2);
		r->poh = idx_u64(e, 3);
		r->nsid = (uint32_t)idx_u64(e, 4);
	}
	json_object_object_get_ex(root, "self_test_run", &a);
	if (idx_u64(a, 0))
		ctrl_selftest_resume(c, (uint8_t)idx_u64(a, 0), (uint32_t)idx_u64(a, 1),
				      idx_u64(a, 2), idx_u64(a, 3));
	json_object_object_get_ex(root, "fw_slots", &o);
	c->fw.active = (uint8_t)get_u64(o, "active", 1);
	c->fw.next = (uint8_t)get_u64(o, "next", 0);
	c->fw.next_conv = json_object_object_get_ex(o, "next_conv", &a) && json_object_get_boolean(a);
	json_object_object_get_ex(o, "revisions", &a);
	for (unsigned s = 1; s <= UCMD_FW_SLOTS; s++)
		snprintf(c->fw.rev[s], sizeof(c->fw.rev[s]), "%s",
			 json_object_get_string(json_object_array_get_idx(a, s - 1)));
	json_object_object_get_ex(o, "flags", &a);
	for (unsigned s = 1; s <= UCMD_FW_SLOTS; s++)
		c->fw.flags[s] = (uint32_t)idx_u64(a, s - 1);
	return 0;
}

int ctrl_persist_load(struct ucmd_ctrl *c, bool *found)
{
	json_object *root, *o;
	int fd, ret = 0;

	/* relative to the directory, never through a symlink, owner-checked */
	ret = ctrl_dir_open_file(c, CONFIG_NAME, O_RDONLY, &fd);
	*found = ret != -ENOENT;
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	root = json_object_from_fd(fd);
	close(fd);
	if (!root) {
		const char *why = json_util_get_last_err();

		return ctrl_ctrl_why(c, -EINVAL, "%s/" CONFIG_NAME ": not valid JSON (%s)", c->dir,
				      why ? why : "unreadable");
	}
	/* Every field and the checksum, before anything is used */
	ret = ctrl_state_check(c, root);
	if (ret) {
		json_object_put(root);
		return ret;
	}
	/* The directory's identity wins over parameters: it is the same device. */
	if ((ret = replace_str(&c->serial, get_str(root, "serial"))) ||
	    (ret = replace_str(&c->model, get_str(root, "model"))) ||
	    (ret = replace_str(&c->firmware, get_str(root, "firmware"))))
		goto out;
	if (json_object_object_get_ex(root, "saved_features", &o))
		features_load(o, &c->saved);
	if (json_object_object_get_ex(root, "smart", &o)) {
		smart_members_load(o, &c->smart);
		c->error_count = get_u64(o, "error_count", 0);
	}
	/* power_on() (ctrl.c) counts the unsafe shutdown if this is false */
	c->last_clean = !json_object_object_get_ex(root, "clean", &o) || json_object_get_boolean(o);
	if (get_u64(root, "version", 0) >= 3) {
		ret = load_v3(c, root);
	} else {
		/* before version 3 the NQN was derived from the serial: it stays */
		free(c->subnqn);
		c->subnqn = ctrl_subnqn_legacy(c->serial);
		snprintf(c->fw.rev[1], sizeof(c->fw.rev[1]), "%.8s", c->firmware);
		c->san.sstat = 0;	/* never sanitized; data may have been written */
		ret = c->subnqn ? 0 : -ENOMEM;
	}
	if (!ret && json_object_object_get_ex(root, "fdp", &o))
		ret = ctrl_fdp_load(c, o);
	if (ret)
		goto out;
	if (json_object_object_get_ex(root, "namespaces", &o)) {
		if (!json_object_is_type(o, json_type_array))
			ret = -EINVAL;
		for (size_t i = 0; !ret && i < json_object_array_length(o); i++) {
			ret = ns_load(c, json_object_array_get_idx(o, i));
			if (ret && c->p.errbuf && c->p.errbuf_len && !c->p.errbuf[0])
				ctrl_ctrl_why(c, 0, "%s/" CONFIG_NAME ": namespaces[%zu]: %s", c->dir, i,
						 strerror(-ret));
		}
	}
	/* A version 1 file predates the journal; a version 2 one comes with it. */
	if (!ret)
		ret = ctrl_journal_open(c, get_u64(root, "version", 0) >= 2);
	if (!ret)
		ret = ctrl_journal_replay(c);
	if (!ret)
		ret = ctrl_pi_migrate(c, get_u64(root, "version", 0));
out:
	json_object_put(root);
	return ret;
}
