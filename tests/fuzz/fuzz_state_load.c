/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the controller's state loader with semantic checks.
 * The input is ctrl.json, optionally followed by "\n#journal\n" and the bytes
 * of ctrl.journal. Sparse images of the size each "file" namespace claims are
 * created next to them, so that loading gets past the image check.
 *
 * ucmd_ctrl_create() must refuse the input with a reason, or load a state in
 * which every invariant holds: nsid in 1..UCMD_MAX_NS at its own slot, nsze
 * in range, a valid LBA format, a store of the size the geometry gives, at
 * most UCMD_MAX_UNCOR_RANGES sorted disjoint ranges inside the namespace,
 * identity strings that fit Identify, an FDP endurance group within its
 * bounds with a consistent media model for each namespace while it is
 * enabled. Closing and opening again must give the same state (the
 * save/load round trip). Any violation aborts.
 *
 * RAM-safe: namespaces are sparse (RAM ones cost nothing until written) and
 * inputs whose stores would together exceed 1 TiB are skipped, as are
 * "device" namespaces, which would open whatever path the input names, and
 * version 3 inputs whose PI namespaces' metadata, converted in full at load
 * (docs/store.md), exceeds 16 MiB.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "nvme/ctrl/fdp.h"

#define SEP		"\n#journal\n"
#define MAX_TOTAL	(1ull << 40)
/* metadata a version 3 input may have converted (written in full) at load */
#define MAX_CONVERT	(16ull << 20)

static char dir[96];

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_state_load: invariant broken: %s\n", what);
		abort();
	}
}

static void clean_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[256];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

static void remove_dir(void)
{
	clean_dir();
	rmdir(dir);
}

static void put_file(const char *name, const uint8_t *data, size_t size)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
}

static bool get_uint(json_object *o, const char *key, uint64_t *v)
{
	json_object *x;

	if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_int) ||
	    json_object_get_int64(x) < 0)
		return false;
	*v = json_object_get_uint64(x);
	return true;
}

/*
 * Skip what is unsafe to load here; create the images the state names.
 * false: skip this input.
 */
static bool prepare(const char *text)
{
	json_object *root = json_tokener_parse(text), *nss, *x;
	uint64_t total = 0, version = 0;
	bool ok = true;

	if (!root)
		return true;	/* the loader must refuse it: fine to try */
	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "namespaces", &nss) ||
	    !json_object_is_type(nss, json_type_array))
		goto out;
	get_uint(root, "version", &version);
	for (size_t i = 0; ok && i < json_object_array_length(nss); i++) {
		json_object *ns = json_object_array_get_idx(nss, i), *st;
		uint64_t nsid, nsze, lbaf, size;
		const char *store = "file";
		char name[32], path[160];

		if (!json_object_is_type(ns, json_type_object))
			continue;
		if (json_object_object_get_ex(ns, "store", &st) &&
		    json_object_is_type(st, json_type_string))
			store = json_object_get_string(st);
		if (!strcmp(store, "device")) {
			ok = false;
			break;
		}
		if (!get_uint(ns, "nsid", &nsid) || !get_uint(ns, "nsze", &nsze) ||
		    !get_uint(ns, "lbaf", &lbaf) || lbaf >= UCMD_NR_LBAF || nsze > MAX_TOTAL)
			continue;
		size = ctrl_ns_store_size(nsze, (uint8_t)lbaf);
		/* in version 3 a PI namespace's metadata is converted at load: all of it */
		if (version == 3 && json_object_object_get_ex(ns, "dps", &x) &&
		    nsze * ctrl_lbaf_ms((uint8_t)lbaf) > MAX_CONVERT) {
			ok = false;
			break;
		}
		total += size;
		if (total > MAX_TOTAL) {
			ok = false;
			break;
		}
		if (strcmp(store, "file") || !nsid || nsid > UCMD_MAX_NS)
			continue;
		snprintf(name, sizeof(name), "ns%u.img", (unsigned)nsid);
		put_file(name, NULL, 0);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		/* too big for this file system: the loader refuses the image */
		if (truncate(path, (off_t)size))
			unlink(path);
	}
out:
	json_object_put(root);
	return ok;
}

static bool printable(const char *s, size_t max)
{
	size_t n = strlen(s);

	for (const char *p = s; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			return false;
	return n >= 1 && n <= max;
}

static void check_state(struct ucmd_ctrl *c)
{
	check(printable(c->serial, 20) && printable(c->model, 40) && printable(c->firmware, 8),
	      "identity fits Identify");
	check(printable(c->subnqn, 223), "subsystem NQN fits Identify");
	/* version 3: firmware slots, sanitize status, self-test results, error log */
	check(c->fw.active >= 1 && c->fw.active <= UCMD_FW_SLOTS &&
	      !strcmp(c->fw.rev[c->fw.active], c->firmware), "the active slot holds FR");
	check(c->fw.next <= UCMD_FW_SLOTS && (!c->fw.next || c->fw.rev[c->fw.next][0]),
	      "the next slot holds an image");
	check((c->san.sstat & 7) <= NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED,
	      "sanitize status valid");
	check(c->dst.nres <= UCMD_DST_RESULTS && c->dst.op <= NVME_ST_CODE_EXTENDED,
	      "self-test results bounded, a short or extended one running");
	for (unsigned i = 0; i < UCMD_ERRLOG_ENTRIES; i++) {
		uint64_t n = le64toh(c->errlog[i].error_count);

		check(!n || (n <= c->error_count && (n - 1) % UCMD_ERRLOG_ENTRIES == i),
		      "error log entries at their slot, within the count");
	}
	if (c->fdp) {
		const struct ctrl_fdp *f = c->fdp;

		check(f->nruh >= 1 && f->nruh <= UCMD_FDP_MAX_RUH && f->nrg >= 1 &&
		      f->nrg <= UCMD_FDP_MAX_RG && f->ru_size && !(f->ru_size % 4096) &&
		      f->op_pct >= 1 && f->op_pct <= 100, "FDP configuration in bounds");
		check(f->host_ev.n <= UCMD_FDP_EVENTS && f->ctrl_ev.n <= UCMD_FDP_EVENTS,
		      "FDP event counts bounded");
	}
	for (unsigned i = 0; i <= UCMD_MAX_NS; i++) {
		const struct ctrl_ns *ns = c->ns[i];
		uint64_t end = 0;

		if (!ns)
			continue;
		check(!!ns->fdpm == (c->fdp && c->fdp->enabled), "a media model iff FDP is enabled");
		if (ns->fdpm) {
			const struct fdp_media *m = ns->fdpm;
			uint64_t mapped = 0, valid = 0;

			check(m->nlba == ns->nsze, "the model covers the namespace");
			for (uint64_t l = 0; l < m->nlba; l++)
				mapped += m->l2p[l] != 0;
			for (uint32_t u = 0; u < m->nru; u++)
				valid += m->ru[u].valid;
			check(mapped == valid, "the model's valid counts are its mapped blocks");
		}
		check(i >= 1 && ns->nsid == i, "nsid in range, at its slot");
		check(ns->nsze >= 1 && ns->nsze <= (1ull << 40), "nsze in range");
		check(ns->lbaf < UCMD_NR_LBAF, "lbaf valid");
		check(!ns->extended || ctrl_ns_ms(ns), "extended only with metadata");
		check(!(ns->lbstm >> ctrl_lbaf_sts(ns->lbaf)), "LBSTM within the storage tag's bits");
		check(ns->kind == UCMD_NS_STORE_FILE || ns->kind == UCMD_NS_STORE_RAM, "store kind");
		check(ns->st && ns->st->size == ctrl_ns_store_size(ns->nsze, ns->lbaf),
		      "store size matches the geometry");
		check(ns->uncor.n <= UCMD_MAX_UNCOR_RANGES, "range count bounded");
		for (size_t r = 0; r < ns->uncor.n; r++) {
			const struct ctrl_range *x = &ns->uncor.r[r];

			check(x->nlb > 0 && x->slba >= end, "ranges sorted and disjoint");
			check(x->slba < ns->nsze && x->nlb <= ns->nsze - x->slba,
			      "ranges inside the namespace");
			end = x->slba + x->nlb;
		}
	}
}

/* What must survive a save and a load, byte for byte */
static char *snapshot(struct ucmd_ctrl *c, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	fprintf(f, "%s|%s|%s|%s|", c->serial, c->model, c->firmware, c->subnqn);
	fwrite(&c->saved, sizeof(c->saved), 1, f);
	fwrite(&c->cur, sizeof(c->cur), 1, f);
	fwrite(c->errlog, sizeof(c->errlog), 1, f);
	fprintf(f, "%llu|%u|%u|%u|%d|%d|%u|%u|%llu|", (unsigned long long)c->error_count,
		c->san.sstat, c->san.scdw10, c->san.ovrpat, c->san.ause_fail, c->san.exited,
		c->san.pass, c->san.ns_idx, (unsigned long long)c->san.off);
	fwrite(c->dst.res, sizeof(c->dst.res[0]), c->dst.nres, f);
	fprintf(f, "|%u|%u|%llu", c->dst.op, c->dst.nsid, (unsigned long long)c->dst.dur_ns);
	fprintf(f, "|%u|%u|%d|", c->fw.active, c->fw.next, c->fw.next_conv);
	for (unsigned s = 1; s <= UCMD_FW_SLOTS; s++)
		fprintf(f, "%s,%u|", c->fw.rev[s], c->fw.flags[s]);
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++) {
		const struct ctrl_ns *ns = c->ns[i];

		if (!ns)
			continue;
		fprintf(f, "ns%u %llu %u %d %d %d %u %llu ", ns->nsid, (unsigned long long)ns->nsze,
			ns->lbaf, ns->extended, ns->attached, (int)ns->kind, ns->dps,
			(unsigned long long)ns->lbstm);
		fwrite(ns->uuid, sizeof(ns->uuid), 1, f);
		fwrite(ns->uncor.r, sizeof(*ns->uncor.r), ns->uncor.n, f);
		if (ns->fdpm) {
			/* the model as nsN.fdp keeps it: the map and each stream's unit */
			const struct fdp_media *m = ns->fdpm;
			uint64_t h = 1469598103934665603ull;

			for (uint64_t l = 0; l < m->nlba; l++)
				h = (h ^ m->l2p[l]) * 1099511628211ull;
			fprintf(f, "model %llu ", (unsigned long long)h);
			fwrite(m->stream, sizeof(*m->stream), m->nstreams, f);
		}
	}
	if (c->fdp) {
		const struct ctrl_fdp *d = c->fdp;
		const struct ctrl_fdp_event_ring *rings[] = { &d->host_ev, &d->ctrl_ev };

		fprintf(f, "fdp %u %u %llu %u %d %d %llu %llu %llu|", d->nruh, d->nrg,
			(unsigned long long)d->ru_size, d->op_pct, d->persistent, d->enabled,
			(unsigned long long)d->hbmw, (unsigned long long)d->mbmw,
			(unsigned long long)d->mbe);
		fwrite(d->ev_mask, 1, d->nruh, f);
		/* the events oldest first: where a ring starts is not state */
		for (unsigned k = 0; k < 2; k++)
			for (uint32_t i = 0; i < rings[k]->n; i++)
				fwrite(&rings[k]->ev[(rings[k]->next + UCMD_FDP_EVENTS - rings[k]->n + i) %
						     UCMD_FDP_EVENTS], sizeof(struct nvme_fdp_event), 1, f);
	}
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ucmd_ctrl_params p = { 0 };
	struct ucmd_ctrl *c = NULL;
	const uint8_t *sep = memmem(data, size, SEP, strlen(SEP));
	size_t jlen = sep ? (size_t)(sep - data) : size, n1, n2;
	char err[512], *text, *s1, *s2;

	if (!dir[0]) {
		/* tmpfs where there is one: the loader fsyncs, and that is not what is tested */
		const char *base = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";

		snprintf(dir, sizeof(dir), "%s/ucmd-fuzz-state.%d", base, (int)getpid());
		mkdir(dir, 0700);
		atexit(remove_dir);
	}
	clean_dir();
	text = malloc(jlen + 1);
	if (!text)
		abort();
	memcpy(text, data, jlen);
	text[jlen] = 0;
	if (!prepare(text)) {
		free(text);
		return 0;
	}
	free(text);
	put_file("ctrl.json", data, jlen);
	if (sep)
		put_file(UCMD_JOURNAL_NAME, sep + strlen(SEP), size - jlen - strlen(SEP));
	p.dir = dir;
	p.errbuf = err;
	p.errbuf_len = sizeof(err);
	if (ucmd_ctrl_create(&p, &c)) {
		check(err[0] != 0, "a refusal says why");
		if (getenv("FUZZ_STATE_VERBOSE"))
			fprintf(stderr, "refused: %s\n", err);
		return 0;
	}
	if (getenv("FUZZ_STATE_VERBOSE"))
		fprintf(stderr, "loaded\n");
	check_state(c);
	s1 = snapshot(c, &n1);
	ucmd_ctrl_destroy(c);
	c = NULL;
	if (ucmd_ctrl_create(&p, &c)) {
		fprintf(stderr, "fuzz_state_load: reload refused: %s\n", err);
		check(false, "a saved state loads again");
	}
	check_state(c);
	s2 = snapshot(c, &n2);
	check(n1 == n2 && !memcmp(s1, s2, n1), "save + load gives the same state");
	free(s1);
	free(s2);
	ucmd_ctrl_destroy(c);
	return 0;
}
