/* SPDX-License-Identifier: MIT */
/*
 * FDP's persistent state. The endurance group (its configuration, whether
 * FDP is enabled, the statistics of log 22h and the event filters) is the
 * "fdp" member of ctrl.json, checked with the rest of it. Each namespace's
 * media model is nsN.fdp, written with ctrl.json: a header, the open unit
 * of every stream, when each handle's unit was first written (wall clock,
 * for the time limit), every unit's write pointer, age, owner and state,
 * and the logical-to-media map; everything else is rebuilt from these at
 * load. A file of the version before (UCMDFDP2, without the times) loads
 * with its open units first written at the load.
 *
 * The model only counts (the data is in nsN.img), so a model file that is
 * missing, of another geometry (a crash between it and ctrl.json), damaged
 * or inconsistent is not a reason to refuse the device: its namespace
 * starts with empty reclaim units, as after a format, and ucmd_last_error
 * is not involved. docs/fdp.md says what that costs (figures start over).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/crc32c.h"
#include "fdp.h"

#define MODEL_MAGIC	"UCMDFDP3"
#define MODEL_MAGIC_V2	"UCMDFDP2"

struct model_hdr {
	char magic[8];
	uint64_t nlba;
	uint32_t bpr, nru, nstreams, crc;	/* crc32c of what follows the header */
	uint32_t clock;				/* units filled so far */
	uint8_t rsvd[28];
};

struct model_ru {
	uint32_t wp, sealed;
	uint16_t owner;
	uint8_t state, rsvd;
};

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static int why(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An event ring as hex strings of 64-byte events, oldest first */
static json_object *events_json(const struct ctrl_fdp_event_ring *r)
{
	json_object *a = json_object_new_array();
	char hex[2 * sizeof(struct nvme_fdp_event) + 1];

	for (uint32_t i = 0; i < r->n; i++) {
		const uint8_t *e = (const void *)&r->ev[(r->next + UCMD_FDP_EVENTS - r->n + i) %
							 UCMD_FDP_EVENTS];

		for (size_t k = 0; k < sizeof(struct nvme_fdp_event); k++)
			sprintf(hex + 2 * k, "%02x", e[k]);
		json_object_array_add(a, json_object_new_string(hex));
	}
	return a;
}

static bool unhex(uint8_t *dst, const char *src, size_t n)
{
	if (!src || strlen(src) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (!isxdigit((unsigned char)src[2 * i]) || !isxdigit((unsigned char)src[2 * i + 1]) ||
		    sscanf(src + 2 * i, "%2x", &v) != 1)
			return false;
		dst[i] = (uint8_t)v;
	}
	return true;
}

static int check_events(json_object *o, const char *k, char *w, size_t wl)
{
	struct nvme_fdp_event e;
	json_object *a;

	if (!json_object_object_get_ex(o, k, &a) || !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) > UCMD_FDP_EVENTS)
		return why(w, wl, "%s: expected an array of at most %u events", k, UCMD_FDP_EVENTS);
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *s = json_object_array_get_idx(a, i);

		if (!json_object_is_type(s, json_type_string) ||
		    !unhex((uint8_t *)&e, json_object_get_string(s), sizeof(e)))
			return why(w, wl, "%s[%zu]: not %zu hex digits", k, i, 2 * sizeof(e));
	}
	return 0;
}

static void events_load(json_object *o, const char *k, struct ctrl_fdp_event_ring *r)
{
	json_object *a;

	memset(r, 0, sizeof(*r));
	if (!json_object_object_get_ex(o, k, &a))
		return;
	for (size_t i = 0; i < json_object_array_length(a) && i < UCMD_FDP_EVENTS; i++)
		if (unhex((uint8_t *)&r->ev[i], json_object_get_string(
				json_object_array_get_idx(a, i)), sizeof(r->ev[i])))
			r->n++;
	r->next = r->n % UCMD_FDP_EVENTS;
}

json_object *ctrl_fdp_json(struct ucmd_ctrl *c)
{
	struct ctrl_fdp *f = c->fdp;
	json_object *o = json_object_new_object(), *m = json_object_new_array();

	add_u64(o, "nruh", f->nruh);
	add_u64(o, "nrg", f->nrg);
	add_u64(o, "ru_size", f->ru_size);
	add_u64(o, "op_pct", f->op_pct);
	json_object_object_add(o, "persistent", json_object_new_boolean(f->persistent));
	json_object_object_add(o, "enabled", json_object_new_boolean(f->enabled));
	add_u64(o, "hbmw", f->hbmw);
	add_u64(o, "mbmw", f->mbmw);
	add_u64(o, "mbe", f->mbe);
	add_u64(o, "gc_bytes", f->gc_bytes);
	add_u64(o, "rutl", f->rutl);
	for (unsigned i = 0; i < f->nruh; i++)
		json_object_array_add(m, json_object_new_uint64(f->ev_mask[i]));
	json_object_object_add(o, "event_filters", m);
	json_object_object_add(o, "host_events", events_json(&f->host_ev));
	json_object_object_add(o, "ctrl_events", events_json(&f->ctrl_ev));
	return o;
}

static uint64_t get_u64(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v) : 0;
}

static bool get_bool(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_get_boolean(v);
}

static int why(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int want_u64(json_object *o, const char *k, uint64_t min, uint64_t max, uint64_t *out,
		    char *w, size_t wl)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int))
		return why(w, wl, "%s: missing or not an integer", k);
	/* json-c saturates out of range numbers: the text must be what was read */
	*out = json_object_get_uint64(v);
	if (json_object_get_int64(v) < 0 && *out < (1ull << 63))
		return why(w, wl, "%s: negative", k);
	if (*out < min || *out > max)
		return why(w, wl, "%s: %" PRIu64 " is out of range %" PRIu64 "..%" PRIu64, k, *out,
			   min, max);
	return 0;
}

int ctrl_fdp_check_json(json_object *o, json_object *nss, char *w, size_t wl)
{
	static const char *const keys[] = { "nruh", "nrg", "ru_size", "op_pct", "persistent",
		"enabled", "hbmw", "mbmw", "mbe", "gc_bytes", "event_filters", "host_events",
		"ctrl_events", "rutl", NULL };
	uint64_t nruh, nrg, ru, op, x;
	json_object *v, *a;
	int ret;

	if (!json_object_is_type(o, json_type_object))
		return why(w, wl, "expected object");
	json_object_object_foreach(o, key, val) {
		bool known = false;

		(void)val;
		for (unsigned i = 0; keys[i]; i++)
			known |= !strcmp(key, keys[i]);
		if (!known)
			return why(w, wl, "%s: unknown member", key);
	}
	if ((ret = want_u64(o, "nruh", 1, UCMD_FDP_MAX_RUH, &nruh, w, wl)) ||
	    (ret = want_u64(o, "nrg", 1, UCMD_FDP_MAX_RG, &nrg, w, wl)) ||
	    (ret = want_u64(o, "ru_size", 4096, 1ull << 30, &ru, w, wl)) ||
	    (ret = want_u64(o, "op_pct", 1, 100, &op, w, wl)) ||
	    (ret = want_u64(o, "hbmw", 0, UINT64_MAX, &x, w, wl)) ||
	    (ret = want_u64(o, "mbmw", 0, UINT64_MAX, &x, w, wl)) ||
	    (ret = want_u64(o, "mbe", 0, UINT64_MAX, &x, w, wl)) ||
	    (json_object_object_get_ex(o, "gc_bytes", &v) &&
	     (ret = want_u64(o, "gc_bytes", 0, UINT64_MAX, &x, w, wl))) ||
	    (json_object_object_get_ex(o, "rutl", &v) &&
	     (ret = want_u64(o, "rutl", 0, UINT32_MAX, &x, w, wl))))
		return ret;
	if (ru % 4096)
		return why(w, wl, "ru_size: %" PRIu64 " is not a multiple of 4096", ru);
	if (!json_object_object_get_ex(o, "persistent", &v) ||
	    !json_object_is_type(v, json_type_boolean) ||
	    !json_object_object_get_ex(o, "enabled", &v) || !json_object_is_type(v, json_type_boolean))
		return why(w, wl, "persistent, enabled: missing or not booleans");
	if (!json_object_object_get_ex(o, "event_filters", &a) ||
	    !json_object_is_type(a, json_type_array) || json_object_array_length(a) != nruh)
		return why(w, wl, "event_filters: expected an array of %" PRIu64 " integers", nruh);
	for (size_t i = 0; i < nruh; i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_int) || json_object_get_int64(e) < 0 ||
		    json_object_get_int64(e) > 63)
			return why(w, wl, "event_filters[%zu]: not 0..63", i);
	}
	if ((ret = check_events(o, "host_events", w, wl)) ||
	    (ret = check_events(o, "ctrl_events", w, wl)))
		return ret;
	if (!get_bool(o, "enabled"))
		return 0;
	/* every namespace must get a model, as it did when it was made */
	for (size_t i = 0; nss && i < json_object_array_length(nss); i++) {
		json_object *ns = json_object_array_get_idx(nss, i);
		uint64_t nsze = get_u64(ns, "nsze");
		uint8_t lbaf = (uint8_t)get_u64(ns, "lbaf");
		uint32_t nru;

		if (fdp_media_geometry(nsze, (uint32_t)(ru / ctrl_lbaf_ds(lbaf)), (uint16_t)nruh,
				       (uint16_t)nrg, (uint8_t)op, get_bool(o, "persistent"), &nru))
			return why(w, wl, "namespaces[%zu] is past what the media model holds "
				   "(%llu blocks)", i, UCMD_FDP_MAX_BLOCKS);
	}
	return 0;
}

int ctrl_fdp_load(struct ucmd_ctrl *c, json_object *o)
{
	struct ctrl_fdp *f = calloc(1, sizeof(*f));
	json_object *a;

	if (!f)
		return -ENOMEM;
	/* persist_check.c checked every member */
	f->nruh = (uint16_t)get_u64(o, "nruh");
	f->nrg = (uint16_t)get_u64(o, "nrg");
	f->ru_size = get_u64(o, "ru_size");
	f->op_pct = (uint8_t)get_u64(o, "op_pct");
	f->persistent = get_bool(o, "persistent");
	f->enabled = get_bool(o, "enabled");
	f->hbmw = get_u64(o, "hbmw");
	f->mbmw = get_u64(o, "mbmw");
	f->mbe = get_u64(o, "mbe");
	/* absent from the state of an older ucmd: nothing moved that it knows of */
	f->gc_bytes = get_u64(o, "gc_bytes");
	f->rutl = (uint32_t)get_u64(o, "rutl");
	if (json_object_object_get_ex(o, "event_filters", &a))
		for (size_t i = 0; i < f->nruh && i < json_object_array_length(a); i++)
			f->ev_mask[i] = (uint8_t)json_object_get_uint64(
				json_object_array_get_idx(a, i));
	events_load(o, "host_events", &f->host_ev);
	events_load(o, "ctrl_events", &f->ctrl_ev);
	free(c->fdp);
	c->fdp = f;
	return 0;
}

static void model_name(char *buf, size_t len, uint32_t nsid)
{
	snprintf(buf, len, "ns%u.fdp", nsid);
}

static size_t model_size(const struct fdp_media *m, bool times)
{
	return sizeof(struct model_hdr) + m->nstreams * sizeof(uint32_t) +
	       (times ? m->nstreams / 2 * sizeof(uint64_t) : 0) +
	       (size_t)m->nru * sizeof(struct model_ru) + m->nlba * sizeof(uint32_t);
}

/* A namespace whose data outlives the process: its model does too */
static bool kept(const struct ucmd_ctrl *c, const struct ctrl_ns *ns)
{
	return c->dir && ns->fdpm && ns->kind != UCMD_NS_STORE_RAM;
}

static int save_model(struct ucmd_ctrl *c, const struct ctrl_ns *ns)
{
	const struct fdp_media *m = ns->fdpm;
	size_t len = model_size(m, true);
	uint8_t *buf = calloc(1, len), *p;
	struct model_hdr *h = (void *)buf;
	char name[32];
	int ret;

	if (!buf)
		return -ENOMEM;
	memcpy(h->magic, MODEL_MAGIC, sizeof(h->magic));
	h->nlba = m->nlba;
	h->bpr = m->bpr;
	h->nru = m->nru;
	h->nstreams = m->nstreams;
	h->clock = m->clock;
	p = buf + sizeof(*h);
	memcpy(p, m->stream, m->nstreams * sizeof(uint32_t));
	p += m->nstreams * sizeof(uint32_t);
	memcpy(p, m->opened_ms, m->nstreams / 2 * sizeof(uint64_t));
	p += m->nstreams / 2 * sizeof(uint64_t);
	for (uint32_t r = 0; r < m->nru; r++, p += sizeof(struct model_ru)) {
		struct model_ru mr = { m->ru[r].wp, m->ru[r].sealed, m->ru[r].owner, m->ru[r].state,
				       0 };

		memcpy(p, &mr, sizeof(mr));
	}
	memcpy(p, m->l2p, m->nlba * sizeof(uint32_t));
	h->crc = crc32c(0, buf + sizeof(*h), len - sizeof(*h));
	model_name(name, sizeof(name), ns->nsid);
	ret = ctrl_write_atomic(c, name, buf, len);
	free(buf);
	return ret;
}

int ctrl_fdp_save_models(struct ucmd_ctrl *c)
{
	int ret = 0;

	for (unsigned i = 1; i <= UCMD_MAX_NS && !ret; i++)
		if (c->ns[i] && kept(c, c->ns[i]))
			ret = save_model(c, c->ns[i]);
	return ret;
}

static int read_all(int fd, uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EINVAL;
		done += (size_t)n;
	}
	/* and nothing after it */
	return read(fd, buf, 1) == 0 ? 0 : -EINVAL;
}

/* 0 when the file's model is now ns's; else the model stays empty */
static int load_file(struct ucmd_ctrl *c, struct ctrl_ns *ns)
{
	struct fdp_media *m = ns->fdpm;
	size_t len = model_size(m, true);
	uint8_t *buf = malloc(len), *p;
	struct model_hdr h;
	bool times = true;
	char name[32];
	int fd, ret;

	if (!buf)
		return -ENOMEM;
	model_name(name, sizeof(name), ns->nsid);
	ret = ctrl_dir_open_file(c, name, O_RDONLY, &fd);
	if (!ret) {
		char magic[sizeof(h.magic)];

		/* one version before: no times */
		if (pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
		    !memcmp(magic, MODEL_MAGIC_V2, sizeof(magic))) {
			times = false;
			len = model_size(m, false);
		}
		ret = read_all(fd, buf, len);
		close(fd);
	}
	if (!ret) {
		memcpy(&h, buf, sizeof(h));
		if (memcmp(h.magic, times ? MODEL_MAGIC : MODEL_MAGIC_V2, sizeof(h.magic)) ||
		    h.nlba != m->nlba || h.bpr != m->bpr || h.nru != m->nru ||
		    h.nstreams != m->nstreams || h.crc != crc32c(0, buf + sizeof(h), len - sizeof(h)))
			ret = -EINVAL;
	}
	if (!ret) {
		p = buf + sizeof(h);
		memcpy(m->stream, p, m->nstreams * sizeof(uint32_t));
		p += m->nstreams * sizeof(uint32_t);
		if (times) {
			memcpy(m->opened_ms, p, m->nstreams / 2 * sizeof(uint64_t));
			p += m->nstreams / 2 * sizeof(uint64_t);
		} else {
			uint64_t now = realtime_ms();

			for (uint32_t s = 0; s < m->nstreams / 2; s++)
				m->opened_ms[s] = now;
		}
		for (uint32_t r = 0; r < m->nru; r++, p += sizeof(struct model_ru)) {
			struct model_ru mr;

			memcpy(&mr, p, sizeof(mr));
			m->ru[r] = (struct fdp_ru){ .wp = mr.wp, .sealed = mr.sealed,
						    .owner = mr.owner, .state = mr.state };
		}
		memcpy(m->l2p, p, m->nlba * sizeof(uint32_t));
		m->clock = h.clock;
		ret = fdp_media_rebuild(m);
	}
	free(buf);
	return ret;
}

int ctrl_fdp_load_model(struct ucmd_ctrl *c, struct ctrl_ns *ns)
{
	if (!kept(c, ns))
		return 0;
	if (load_file(c, ns) == -ENOMEM)
		return -ENOMEM;
	/* anything else read may have left half a model: start from empty units */
	if (fdp_media_rebuild(ns->fdpm))
		fdp_media_reset(ns->fdpm);
	return 0;
}

void ctrl_fdp_remove_model(struct ucmd_ctrl *c, uint32_t nsid)
{
	char name[32];

	if (c->dir && c->dirfd >= 0 && !c->p.read_only) {
		model_name(name, sizeof(name), nsid);
		unlinkat(c->dirfd, name, 0);
	}
}
