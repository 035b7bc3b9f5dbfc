/* SPDX-License-Identifier: MIT */
/*
 * The runner: one thread per --threads, each with its own ring, its own
 * buffers and its own slice of [0, size). A thread keeps iodepth requests
 * in flight, submitting --batch S at a time and waiting for C at a time.
 * Time is read once per submitted batch and once per reaped batch (not per
 * I/O) so the clock does not dominate a 1 µs operation: slat is prepare →
 * submit call returned, clat is submit call returned → CQE seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "paths.h"

struct worker {
	const struct bench_opts *o;
	const struct bench_target *t;
	unsigned id;
	uint64_t base, span;		/* this thread's slice, bytes */
	pthread_t tid;
	atomic_uint *ready;		/* start gate: threads set up */
	atomic_int *go;			/* 0 wait, 1 run, -1 abort */
	atomic_bool finished;
	_Atomic uint64_t done_ios;	/* for the progress line */
	uint64_t t_start, t_end;
	struct bench_result *r;		/* this thread's own */
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: offsets and the read/write mix, reproducible per seed and thread */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

struct gen {
	uint64_t rng, cursor;
	uint64_t issued, limit;		/* limit 0: none (time-based) */
	uint64_t end_ns;		/* 0: none */
};

static bool is_rand(enum bench_rw rw)
{
	return rw == RW_RANDREAD || rw == RW_RANDWRITE || rw == RW_RANDRW;
}

static void next_io(struct worker *w, struct gen *g, struct io_unit *u)
{
	const struct bench_opts *o = w->o;
	uint64_t blocks = w->span / o->bs;

	if (is_rand(o->rw)) {
		u->off = w->base + (rnd(&g->rng) % blocks) * o->bs;
	} else {
		u->off = w->base + g->cursor * o->bs;
		g->cursor = g->cursor + 1 == blocks ? 0 : g->cursor + 1;
	}
	switch (o->rw) {
	case RW_READ: case RW_RANDREAD: u->write = false; break;
	case RW_WRITE: case RW_RANDWRITE: u->write = true; break;
	case RW_RANDRW: u->write = rnd(&g->rng) % 100 >= o->rwmixread; break;
	}
	u->len = o->bs;
	if (u->write && o->verify)
		pattern_fill(u->buf, u->len, u->off, o->seed);
	g->issued++;
}

static void set_error(struct bench_result *r, int err, const char *what)
{
	if (r->error)
		return;
	r->error = err;
	snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s", what, strerror(-err));
}

static void complete_io(struct worker *w, struct io_unit *u, int res, uint64_t t)
{
	const struct bench_opts *o = w->o;
	struct bench_dir_result *d = &w->r->dir[u->write ? DIR_WRITE : DIR_READ];

	if (res != path_expected_res(o, u)) {
		if (!w->r->io_errors++)
			w->r->first_error = res;
		return;
	}
	d->ios++;
	d->bytes += u->len;
	hist_add(&d->clat, t - u->t_sub);
	if (!u->write && o->verify) {
		w->r->verify_checked++;
		if (pattern_check(u->buf, u->len, u->off, o->seed))
			w->r->verify_errors++;
	}
}

static bool more(const struct gen *g, uint64_t now)
{
	if (g->limit && g->issued >= g->limit)
		return false;
	return !g->end_ns || now < g->end_ns;
}

static int run_async(struct worker *w, struct ucmd_ring *ring, struct io_unit *units,
		     struct gen *g)
{
	const struct bench_opts *o = w->o;
	unsigned depth = o->iodepth, inflight = 0, nfree = depth;
	struct io_unit **freel = malloc(depth * sizeof(*freel));
	uint64_t now = now_ns();
	int ret = 0;

	if (!freel)
		return -ENOMEM;
	for (unsigned i = 0; i < depth; i++)
		freel[i] = &units[i];
	for (;;) {
		/* Fill: whole batches while there is room, and what is left at the end */
		while (nfree && more(g, now) && (nfree >= o->batch_submit || !inflight)) {
			unsigned n = nfree < o->batch_submit ? nfree : o->batch_submit;
			struct io_unit *batch[n];
			uint64_t t0 = now_ns();

			if (g->limit && g->limit - g->issued < n)
				n = (unsigned)(g->limit - g->issued);
			for (unsigned i = 0; i < n; i++) {
				struct io_uring_sqe *sqe = ucmd_get_sqe(ring);
				/* SQPOLL: the poller may not have taken the last batch yet */
				while (!sqe) {
					sched_yield();
					sqe = ucmd_get_sqe(ring);
				}
				batch[i] = freel[--nfree];
				next_io(w, g, batch[i]);
				path_prep(o, w->t, sqe, batch[i]);
				/*
				 * --noplug: one SQE per enter. The engine (like Linux's
				 * io_submit_sqes) plugs only when one enter submits more
				 * than one request, so this is plugging off, honestly,
				 * at the price of one enter per request.
				 */
				if (o->noplug && (ret = ucmd_submit(ring)) != 1)
					goto submit_err;
			}
			/*
			 * With SQPOLL, like liburing, submit returns the SQEs the
			 * poller has not taken yet, which need not be n.
			 */
			ret = o->noplug ? (int)n : ucmd_submit(ring);
			if (ret < 0 || (!o->sqpoll && ret != (int)n))
				goto submit_err;
			inflight += n;
			now = now_ns();
			unsigned nw = 0;
			for (unsigned i = 0; i < n; i++) {
				batch[i]->t_sub = now;
				nw += batch[i]->write;
			}
			/* one submission time for the whole batch: one histogram update */
			hist_add_n(&w->r->dir[DIR_READ].slat, now - t0, n - nw);
			hist_add_n(&w->r->dir[DIR_WRITE].slat, now - t0, nw);
		}
		if (!inflight)
			break;
		/* Reap: wait for C (or all that are left), then take what is there */
		struct io_uring_cqe *cqe;
		unsigned want = inflight < o->batch_complete ? inflight : o->batch_complete;
		ret = ucmd_wait_cqe_nr(ring, &cqe, want);
		if (ret < 0) {
			set_error(w->r, ret, "wait for completions");
			break;
		}
		now = now_ns();
		unsigned head, seen = 0;
		ucmd_for_each_cqe(ring, head, cqe) {
			struct io_unit *u = ucmd_cqe_get_data(cqe);
			complete_io(w, u, cqe->res, now);
			freel[nfree++] = u;
			seen++;
		}
		ucmd_cq_advance(ring, seen);
		inflight -= seen;
		atomic_store_explicit(&w->done_ios, g->issued - inflight, memory_order_relaxed);
	}
	free(freel);
	return w->r->error;
submit_err:
	free(freel);
	set_error(w->r, ret < 0 ? ret : -EIO, "submit");
	return w->r->error;
}

static int run_sync(struct worker *w, int fd, struct io_unit *u, struct gen *g)
{
	uint64_t now = now_ns();

	while (more(g, now)) {
		next_io(w, g, u);
		u->t_sub = now;
		long res = path_sync(w->o, w->t, fd, u);
		now = now_ns();
		complete_io(w, u, (int)res, now);
		if (!(g->issued & 63))
			atomic_store_explicit(&w->done_ios, g->issued, memory_order_relaxed);
	}
	atomic_store_explicit(&w->done_ios, g->issued, memory_order_relaxed);
	return 0;
}

static unsigned roundup_pow2(unsigned v)
{
	unsigned p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct bench_opts *o = w->o;
	const struct bench_target *t = w->t;
	struct ucmd_ring ring = { 0 };
	bool have_ring = false;
	unsigned depth = o->path == PATH_SYNC ? 1 : o->iodepth;
	struct io_unit *units = calloc(depth, sizeof(*units));
	struct iovec *iovs = calloc(depth, sizeof(*iovs));
	const char *dev = o->path == PATH_BLOCK ? t->bdev : t->ng;
	struct gen g = { .rng = (o->seed + 1) * 0x9e3779b97f4a7c15ull + w->id };
	int fd = -1, ret = 0;

	if (!units || !iovs) {
		set_error(w->r, -ENOMEM, "buffers");
		goto ready;
	}
	for (unsigned i = 0; i < depth; i++) {
		units[i].buf = aligned_alloc(4096, (o->bs + 4095) & ~4095u);
		if (!units[i].buf) {
			set_error(w->r, -ENOMEM, "buffers");
			goto ready;
		}
		/* touch every page now, not inside the measurement */
		memset(units[i].buf, 0, o->bs);
		units[i].idx = i;
		units[i].iov = (struct iovec){ units[i].buf, o->bs };
		iovs[i] = units[i].iov;
	}
	fd = ucmd_open(t->engine, dev, O_RDWR);
	if (fd < 0) {
		set_error(w->r, fd, dev);
		goto ready;
	}
	if (o->path != PATH_SYNC) {
		struct io_uring_params p = { .flags = 0 };
		unsigned entries = roundup_pow2(depth);

		if (o->path == PATH_PASSTHRU)
			p.flags |= IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
		if (o->iopoll)
			p.flags |= IORING_SETUP_IOPOLL;
		if (o->sqpoll) {
			p.flags |= IORING_SETUP_SQPOLL;
			p.sq_thread_idle = 1000;
		} else {
			/* as fio and t/io_uring set them: one thread owns the ring */
			p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
		}
		/* CQ twice the SQ, as io_uring_setup makes it: never overflows at depth */
		ret = t->ring_init ? t->ring_init(t->ring_arg, entries, &ring, &p)
				   : ucmd_queue_init_engine(t->engine, entries, &ring, &p);
		if (ret == -EINVAL && (p.flags & IORING_SETUP_DEFER_TASKRUN)) {
			/* a kernel before 6.1: without them, as fio falls back */
			p.flags &= ~(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
			ret = t->ring_init ? t->ring_init(t->ring_arg, entries, &ring, &p)
					   : ucmd_queue_init_engine(t->engine, entries, &ring, &p);
		}
		if (ret) {
			set_error(w->r, ret, "ring setup");
			goto ready;
		}
		have_ring = true;
		ret = ucmd_register_files(&ring, &fd, 1);
		if (ret) {
			set_error(w->r, ret, "register files");
			goto ready;
		}
		if (o->fixedbufs && (ret = ucmd_register_buffers(&ring, iovs, depth))) {
			set_error(w->r, ret, "register buffers");
			goto ready;
		}
	}
ready:
	/* Everyone starts the clock together, after every ring is set up. */
	atomic_fetch_add(w->ready, 1);
	while (!atomic_load(w->go))
		sched_yield();
	if (atomic_load(w->go) < 0 || w->r->error)
		goto out;

	w->t_start = now_ns();
	if (o->ops)
		g.limit = o->ops;
	else if (o->runtime > 0)
		g.end_ns = w->t_start + (uint64_t)(o->runtime * 1e9);
	else
		g.limit = w->span / o->bs;	/* one pass over the slice */
	if (o->path == PATH_SYNC)
		run_sync(w, fd, units, &g);
	else
		run_async(w, &ring, units, &g);
	w->t_end = now_ns();
out:
	atomic_store(&w->finished, true);
	if (have_ring)
		ucmd_queue_exit(&ring);
	if (fd >= 0)
		ucmd_close(t->engine, fd);
	if (units)
		for (unsigned i = 0; i < depth; i++)
			free(units[i].buf);
	free(units);
	free(iovs);
	return NULL;
}

static struct bench_result *result_new(void)
{
	struct bench_result *r = calloc(1, sizeof(*r));

	if (r)
		for (int d = 0; d < NR_DIRS; d++) {
			hist_init(&r->dir[d].slat);
			hist_init(&r->dir[d].clat);
		}
	return r;
}

static void merge(struct bench_result *dst, const struct bench_result *src)
{
	for (int d = 0; d < NR_DIRS; d++) {
		dst->dir[d].ios += src->dir[d].ios;
		dst->dir[d].bytes += src->dir[d].bytes;
		hist_merge(&dst->dir[d].slat, &src->dir[d].slat);
		hist_merge(&dst->dir[d].clat, &src->dir[d].clat);
	}
	dst->verify_checked += src->verify_checked;
	dst->verify_errors += src->verify_errors;
	if (src->io_errors && !dst->io_errors)
		dst->first_error = src->first_error;
	dst->io_errors += src->io_errors;
	if (src->error && !dst->error) {
		dst->error = src->error;
		memcpy(dst->errmsg, src->errmsg, sizeof(dst->errmsg));
	}
}

static void progress(struct worker *ws, unsigned n, uint64_t t0, uint64_t *last_ios,
		     uint64_t *last_t, const struct bench_opts *o)
{
	uint64_t ios = 0, t = now_ns();

	for (unsigned i = 0; i < n; i++)
		ios += atomic_load_explicit(&ws[i].done_ios, memory_order_relaxed);
	double dt = (double)(t - *last_t) / 1e9;
	double iops = dt > 0 ? (double)(ios - *last_ios) / dt : 0;
	fprintf(stderr, "\r[%5.1fs] %9.0f IOPS  %8.1f MiB/s  %llu ios   ", (double)(t - t0) / 1e9,
		iops, iops * o->bs / 1048576.0, (unsigned long long)ios);
	*last_ios = ios;
	*last_t = t;
}

/* One phase: all threads run o on t, results merged into r. */
static int run_phase(const struct bench_opts *o, const struct bench_target *t,
		     struct bench_result *r, bool show)
{
	struct worker *ws = calloc(o->threads, sizeof(*ws));
	atomic_uint ready = 0;
	atomic_int go = 0;
	unsigned started = 0;
	uint64_t slice = (o->size / o->threads) / o->bs * o->bs;

	if (!ws)
		return -ENOMEM;
	for (unsigned i = 0; i < o->threads; i++) {
		ws[i] = (struct worker){ .o = o, .t = t, .id = i, .base = i * slice, .span = slice,
					 .ready = &ready, .go = &go, .r = result_new() };
		if (!ws[i].r || pthread_create(&ws[i].tid, NULL, worker_main, &ws[i])) {
			free(ws[i].r);
			set_error(r, -EAGAIN, "start threads");
			break;
		}
		started++;
	}
	while (atomic_load(&ready) < started)
		sched_yield();
	bool ok = started == o->threads;
	for (unsigned i = 0; i < started; i++)
		ok = ok && !ws[i].r->error;	/* set before ready, read after: ordered */
	atomic_store(&go, ok ? 1 : -1);
	if (ok && show) {
		uint64_t t0 = now_ns(), last_t = t0, last_ios = 0;
		for (;;) {
			bool any = true;
			/* a line a second, but notice the end within 100 ms */
			for (int k = 0; k < 10 && any; k++) {
				struct timespec ts = { 0, 100000000 };
				nanosleep(&ts, NULL);
				any = false;
				for (unsigned i = 0; i < o->threads; i++)
					any = any || !atomic_load(&ws[i].finished);
			}
			if (!any)
				break;
			progress(ws, o->threads, t0, &last_ios, &last_t, o);
		}
		fprintf(stderr, "\r%78s\r", "");
	}
	uint64_t first = UINT64_MAX, last = 0;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(ws[i].tid, NULL);
		merge(r, ws[i].r);
		if (ws[i].t_start && ws[i].t_start < first)
			first = ws[i].t_start;
		if (ws[i].t_end > last)
			last = ws[i].t_end;
		free(ws[i].r);
	}
	free(ws);
	if (last > first)
		r->elapsed = (double)(last - first) / 1e9;
	return r->error;
}

int bench_run(const struct bench_opts *o, const struct bench_target *t,
	      struct bench_result **out)
{
	struct bench_result *r = result_new();
	bool reads = o->rw != RW_WRITE && o->rw != RW_RANDWRITE;
	bool writes = o->rw != RW_READ && o->rw != RW_RANDREAD;
	bool show = o->progress && isatty(STDERR_FILENO);
	int ret;

	*out = r;
	if (!r)
		return -ENOMEM;
	if (o->size > t->nsze * t->lba_size) {
		r->error = -ENOSPC;
		snprintf(r->errmsg, sizeof(r->errmsg), "--size %llu is larger than %s (%llu bytes)",
			 (unsigned long long)o->size, t->ng,
			 (unsigned long long)(t->nsze * t->lba_size));
		return r->error;
	}
	if (o->bs % t->lba_size) {
		r->error = -EINVAL;
		snprintf(r->errmsg, sizeof(r->errmsg), "--bs %u is not a multiple of the %u-byte LBA",
			 o->bs, t->lba_size);
		return r->error;
	}
	if (o->path == PATH_BLOCK && o->fixedbufs && o->vectored) {
		r->error = -EINVAL;
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "--path block has no vectored fixed-buffer read/write");
		return r->error;
	}
	/*
	 * --verify: the pattern is a function of the offset, so write it over
	 * the whole range first if the job reads, and read it all back after
	 * if the job wrote. Only the main phase is reported.
	 */
	if (o->verify && reads) {
		struct bench_opts pre = *o;
		struct bench_result *pr = result_new();
		pre.rw = RW_WRITE;
		pre.runtime = 0;
		pre.ops = 0;
		if (!pr)
			return r->error = -ENOMEM;
		ret = run_phase(&pre, t, pr, false);
		if (!ret && pr->io_errors) {
			ret = -EIO;
			snprintf(r->errmsg, sizeof(r->errmsg),
				 "verify prefill: %llu write errors, first res %d",
				 (unsigned long long)pr->io_errors, pr->first_error);
		} else if (ret) {
			memcpy(r->errmsg, pr->errmsg, sizeof(r->errmsg));
		}
		free(pr);
		if (ret)
			return r->error = ret;
	}
	struct ucmd_disk_stat d0, d1;
	bool disk = o->path == PATH_BLOCK && !ucmd_disk_stat(t->engine, t->bdev, &d0);
	ret = run_phase(o, t, r, show);
	if (ret)
		return ret;
	if (disk && !ucmd_disk_stat(t->engine, t->bdev, &d1)) {
		r->have_disk = true;
		for (int d = 0; d < 2; d++) {
			r->disk.ios[d] = d1.ios[d] - d0.ios[d];
			r->disk.merges[d] = d1.merges[d] - d0.merges[d];
			r->disk.sectors[d] = d1.sectors[d] - d0.sectors[d];
			r->disk.ticks_ms[d] = d1.ticks_ms[d] - d0.ticks_ms[d];
		}
		r->disk.io_ticks_ms = d1.io_ticks_ms - d0.io_ticks_ms;
		r->disk.time_in_queue_ms = d1.time_in_queue_ms - d0.time_in_queue_ms;
	}
	if (o->verify && writes) {
		struct bench_opts post = *o;
		struct bench_result *pr = result_new();
		post.rw = RW_READ;
		post.runtime = 0;
		post.ops = 0;
		if (!pr)
			return r->error = -ENOMEM;
		ret = run_phase(&post, t, pr, false);
		r->verify_checked += pr->verify_checked;
		r->verify_errors += pr->verify_errors;
		r->io_errors += pr->io_errors;
		if (ret) {
			r->error = ret;
			memcpy(r->errmsg, pr->errmsg, sizeof(r->errmsg));
		}
		free(pr);
	}
	return r->error;
}

int bench_fill(const struct bench_target *t, uint64_t size)
{
	struct bench_result *r;
	struct bench_opts o;
	int ret;

	bench_opts_default(&o);
	o.rw = RW_WRITE;
	o.bs = 128u << 10;
	o.size = size / o.bs * o.bs;
	o.iodepth = 8;
	o.progress = false;
	if (o.size < o.bs)
		return 0;
	ret = bench_run(&o, t, &r);
	if (!ret && r->io_errors)
		ret = r->first_error < 0 ? r->first_error : -EIO;
	free(r);
	return ret;
}
