/* SPDX-License-Identifier: MIT */
/* fio-shaped text, and JSON with the same figures. */
#include <json-c/json.h>
#include <stdio.h>

#include "job.h"

static const double pcts[] = { 50, 90, 99, 99.9, 99.99 };
static const char *const pct_names[] = { "p50", "p90", "p99", "p99.9", "p99.99" };
#define NR_PCTS (sizeof(pcts) / sizeof(pcts[0]))

double bench_iops(const struct bench_result *r)
{
	if (r->elapsed <= 0)
		return 0;
	return (double)(r->dir[DIR_READ].ios + r->dir[DIR_WRITE].ios) / r->elapsed;
}

static void human(char *buf, size_t len, double v, const char *unit)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2fG%s", v / 1e9, unit);
	else if (v >= 1e6)
		snprintf(buf, len, "%.2fM%s", v / 1e6, unit);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk%s", v / 1e3, unit);
	else
		snprintf(buf, len, "%.0f%s", v, unit);
}

static void text_lat(FILE *f, const char *name, const struct hist *h)
{
	if (!h->count)
		return;
	fprintf(f, "    %s (ns): min=%llu, mean=%.1f, max=%llu\n", name,
		(unsigned long long)h->min, hist_mean(h), (unsigned long long)h->max);
	fprintf(f, "      ");
	for (unsigned i = 0; i < NR_PCTS; i++)
		fprintf(f, "%s=%llu%s", pct_names[i], (unsigned long long)hist_percentile(h, pcts[i]),
			i + 1 < NR_PCTS ? ", " : "\n");
}

/* Busy time over run time, as fio's util, at most 100 %. */
static double disk_util(const struct bench_result *r)
{
	double u = r->elapsed > 0 ? (double)r->disk.io_ticks_ms / (r->elapsed * 1000.0) * 100.0 : 0;

	return u > 100.0 ? 100.0 : u;
}

void bench_report_text(FILE *f, const struct bench_opts *o, const struct bench_target *t,
		       const struct bench_result *r)
{
	static const char *const names[NR_DIRS] = { "read", "write" };

	fprintf(f, "bench: %s rw=%s bs=%u iodepth=%u batch=%u,%u threads=%u path=%s%s%s%s%s%s%s\n",
		o->path == PATH_BLOCK ? t->bdev : t->ng, bench_rw_name(o->rw), o->bs,
		o->path == PATH_SYNC ? 1 : o->iodepth, o->batch_submit, o->batch_complete,
		o->threads, bench_path_name(o->path), o->fixedbufs ? " fixedbufs" : "",
		o->vectored ? " vectored" : "", o->iopoll ? " iopoll" : "",
		o->sqpoll ? " sqpoll" : "", o->noplug ? " noplug" : "",
		o->verify ? " verify" : "");
	for (int d = 0; d < NR_DIRS; d++) {
		const struct bench_dir_result *x = &r->dir[d];
		char iops[32], bw[32];
		if (!x->ios)
			continue;
		human(iops, sizeof(iops), (double)x->ios / r->elapsed, "");
		human(bw, sizeof(bw), (double)x->bytes / r->elapsed, "B/s");
		fprintf(f, "  %s: IOPS=%s, BW=%s (%.1f MiB/s), %llu ios in %.3fs\n", names[d], iops, bw,
			(double)x->bytes / r->elapsed / 1048576.0, (unsigned long long)x->ios,
			r->elapsed);
		text_lat(f, "slat", &x->slat);
		text_lat(f, "clat", &x->clat);
	}
	if (o->verify)
		fprintf(f, "  verify: %llu reads checked, %llu bad\n",
			(unsigned long long)r->verify_checked, (unsigned long long)r->verify_errors);
	if (r->io_errors)
		fprintf(f, "  errors: %llu I/Os failed, first res %d\n",
			(unsigned long long)r->io_errors, r->first_error);
	if (r->have_disk) {
		const struct ucmd_disk_stat *s = &r->disk;

		/* fio's line, from the block device's counters */
		fprintf(f, "\nDisk stats (read/write):\n  %s: ios=%llu/%llu, merge=%llu/%llu, "
			"ticks=%llu/%llu, in_queue=%llu, util=%.2f%%\n", t->bdev,
			(unsigned long long)s->ios[0], (unsigned long long)s->ios[1],
			(unsigned long long)s->merges[0], (unsigned long long)s->merges[1],
			(unsigned long long)s->ticks_ms[0], (unsigned long long)s->ticks_ms[1],
			(unsigned long long)s->time_in_queue_ms, disk_util(r));
	}
}

static struct json_object *json_lat(const struct hist *h)
{
	struct json_object *o = json_object_new_object(), *p = json_object_new_object();

	json_object_object_add(o, "samples", json_object_new_int64((int64_t)h->count));
	json_object_object_add(o, "min", json_object_new_int64((int64_t)h->min));
	json_object_object_add(o, "mean", json_object_new_double(hist_mean(h)));
	json_object_object_add(o, "max", json_object_new_int64((int64_t)h->max));
	for (unsigned i = 0; i < NR_PCTS; i++)
		json_object_object_add(p, pct_names[i],
				       json_object_new_int64((int64_t)hist_percentile(h, pcts[i])));
	json_object_object_add(o, "percentiles", p);
	return o;
}

struct json_object *bench_report_json(const struct bench_opts *o, const struct bench_target *t,
				      const struct bench_result *r)
{
	static const char *const names[NR_DIRS] = { "read", "write" };
	struct json_object *root = json_object_new_object(), *job = json_object_new_object();
	uint64_t bytes = 0;

	json_object_object_add(job, "device",
			       json_object_new_string(o->path == PATH_BLOCK ? t->bdev : t->ng));
	json_object_object_add(job, "rw", json_object_new_string(bench_rw_name(o->rw)));
	json_object_object_add(job, "rwmixread", json_object_new_int((int)o->rwmixread));
	json_object_object_add(job, "bs", json_object_new_int64(o->bs));
	json_object_object_add(job, "iodepth", json_object_new_int((int)o->iodepth));
	json_object_object_add(job, "batch_submit", json_object_new_int((int)o->batch_submit));
	json_object_object_add(job, "batch_complete", json_object_new_int((int)o->batch_complete));
	json_object_object_add(job, "size", json_object_new_int64((int64_t)o->size));
	json_object_object_add(job, "runtime", json_object_new_double(o->runtime));
	json_object_object_add(job, "threads", json_object_new_int((int)o->threads));
	json_object_object_add(job, "path", json_object_new_string(bench_path_name(o->path)));
	json_object_object_add(job, "fixedbufs", json_object_new_boolean(o->fixedbufs));
	json_object_object_add(job, "vectored", json_object_new_boolean(o->vectored));
	json_object_object_add(job, "iopoll", json_object_new_boolean(o->iopoll));
	json_object_object_add(job, "sqpoll", json_object_new_boolean(o->sqpoll));
	json_object_object_add(job, "noplug", json_object_new_boolean(o->noplug));
	json_object_object_add(job, "verify", json_object_new_boolean(o->verify));
	json_object_object_add(root, "job", job);
	json_object_object_add(root, "elapsed_s", json_object_new_double(r->elapsed));
	for (int d = 0; d < NR_DIRS; d++) {
		const struct bench_dir_result *x = &r->dir[d];
		struct json_object *j = json_object_new_object();
		double s = r->elapsed > 0 ? r->elapsed : 1;
		json_object_object_add(j, "ios", json_object_new_int64((int64_t)x->ios));
		json_object_object_add(j, "bytes", json_object_new_int64((int64_t)x->bytes));
		json_object_object_add(j, "iops", json_object_new_double((double)x->ios / s));
		json_object_object_add(j, "bw_bytes", json_object_new_double((double)x->bytes / s));
		json_object_object_add(j, "slat_ns", json_lat(&x->slat));
		json_object_object_add(j, "clat_ns", json_lat(&x->clat));
		json_object_object_add(root, names[d], j);
		bytes += x->bytes;
	}
	json_object_object_add(root, "iops", json_object_new_double(bench_iops(r)));
	json_object_object_add(root, "bw_bytes",
			       json_object_new_double(r->elapsed > 0 ? (double)bytes / r->elapsed : 0));
	struct json_object *v = json_object_new_object();
	json_object_object_add(v, "enabled", json_object_new_boolean(o->verify));
	json_object_object_add(v, "checked", json_object_new_int64((int64_t)r->verify_checked));
	json_object_object_add(v, "errors", json_object_new_int64((int64_t)r->verify_errors));
	json_object_object_add(root, "verify", v);
	json_object_object_add(root, "io_errors", json_object_new_int64((int64_t)r->io_errors));
	if (r->have_disk) {
		/* fio's "disk_util" entry, with its field names */
		struct json_object *a = json_object_new_array(), *u = json_object_new_object();
		const struct ucmd_disk_stat *s = &r->disk;

		json_object_object_add(u, "name", json_object_new_string(t->bdev));
		json_object_object_add(u, "read_ios", json_object_new_int64((int64_t)s->ios[0]));
		json_object_object_add(u, "write_ios", json_object_new_int64((int64_t)s->ios[1]));
		json_object_object_add(u, "read_merges", json_object_new_int64((int64_t)s->merges[0]));
		json_object_object_add(u, "write_merges", json_object_new_int64((int64_t)s->merges[1]));
		json_object_object_add(u, "read_sectors", json_object_new_int64((int64_t)s->sectors[0]));
		json_object_object_add(u, "write_sectors",
				       json_object_new_int64((int64_t)s->sectors[1]));
		json_object_object_add(u, "read_ticks", json_object_new_int64((int64_t)s->ticks_ms[0]));
		json_object_object_add(u, "write_ticks",
				       json_object_new_int64((int64_t)s->ticks_ms[1]));
		json_object_object_add(u, "in_queue",
				       json_object_new_int64((int64_t)s->time_in_queue_ms));
		json_object_object_add(u, "util", json_object_new_double(disk_util(r)));
		json_object_array_add(a, u);
		json_object_object_add(root, "disk_util", a);
	}
	return root;
}
