/* SPDX-License-Identifier: MIT */
/*
 * bench_daemon: ucmd through ucmdd against its references, side by side, in
 * one run (docs/performance.md "Through the daemon").
 *   null      null uring_cmd, batch 32: through the daemon, in-process, and
 *             the kernel's io_uring on /dev/null
 *   randread  4 KiB random reads, QD32: through the daemon with plain
 *             buffers (bounced), ucmd_buf_alloc() buffers (mapped by the
 *             daemon, no copy) and the same registered (fixed); in-process on
 *             an identical controller; in-process on a RAM namespace; the
 *             kernel's io_uring reading a tmpfs file
 *   idle      the daemon's CPU time over --idle seconds with no client
 * The bench starts the built ucmdd itself (fork/exec; --ucmdd PATH, else
 * $UCMDD, else ../src/server/ucmdd next to this binary), serving two
 * controllers: nvme0 in a directory on tmpfs (/dev/shm) and nvme1 in memory
 * (ucmdd --ram), both filled before the run. The daemon's RAM cases are
 * compared with the in-process RAM namespace (the figure); the
 * daemon's file case with an identical in-process controller made the same
 * way, which isolates what the daemon costs. Cases alternate round by round,
 * best of N. It reports; it never asserts a speed.
 *
 *   bench_daemon [--time S] [--rounds N] [--size BYTES] [--idle S] [--ucmdd PATH] [--only CASE[|CASE...]] [--json]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_daemon.h"
#include "compare.h"
#include "dirctrl.h"
#include "job.h"
#include "opts.h"
#include "rig.h"
#include "table.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"

#define RR_QD		32
#define RR_BATCH	8
#define NULL_BATCH	32

struct cfg {
	struct table_opts o;	/* --time, --rounds, --size, --json */
	double idle;
	struct daemon_opts dopt;	/* --ucmdd, --only */
};

struct ctx {
	const struct cfg *cfg;
	struct daemon_proc d;
	struct ucmd_engine *de;		/* connected to ucmdd */
	struct ucmd_peer *n_daemon, *n_inproc;
	struct kernel_peer *n_kernel;
	int nk_probe;
	struct rr *rr_dm, *rr_da, *rr_df, *rr_dfile, *rr_file, *rr_ram;
	struct dirctrl file;
	struct bench_rig *rig;
	struct bench_target rig_t;
	struct kread *kr;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_daemon: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* ---- cases ---------------------------------------------------------------- */

static void null_daemon(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	(void)arg;
	if (!c->n_daemon && !(c->n_daemon = ucmd_peer_new_engine(c->de, NULL_BATCH)))
		die("null peer through the daemon", EIO);
	r->ops = ucmd_peer_run(c->n_daemon, NULL_BATCH, BENCH_URING_CMD, s, &r->elapsed);
}

static void null_inproc(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	(void)arg;
	if (!c->n_inproc && !(c->n_inproc = ucmd_peer_new(NULL_BATCH)))
		die("in-process null peer", EIO);
	r->ops = ucmd_peer_run(c->n_inproc, NULL_BATCH, BENCH_URING_CMD, s, &r->elapsed);
}

static void null_kernel(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	enum bench_op op;

	(void)arg;
	if (!c->n_kernel) {
		if (!(c->n_kernel = kernel_peer_new(NULL_BATCH)))
			die("kernel null peer", EIO);
		c->nk_probe = kernel_peer_probe(c->n_kernel, BENCH_URING_CMD);
	}
	op = kernel_null_op(c->nk_probe);
	r->ops = kernel_peer_run(c->n_kernel, NULL_BATCH, op, s, &r->elapsed);
}

static void rr_case(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	const char *which = arg;
	struct rr **rp;

	if (!strcmp(which, "dm")) {
		rp = &c->rr_dm;
		if (!*rp)
			*rp = rr_new(c->de, "ng1n1", c->cfg->o.size, RR_QD, RR_BATCH, RR_MALLOC);
	} else if (!strcmp(which, "da")) {
		rp = &c->rr_da;
		if (!*rp)
			*rp = rr_new(c->de, "ng1n1", c->cfg->o.size, RR_QD, RR_BATCH, RR_ALLOC);
	} else if (!strcmp(which, "df")) {
		rp = &c->rr_df;
		if (!*rp)
			*rp = rr_new(c->de, "ng1n1", c->cfg->o.size, RR_QD, RR_BATCH, RR_ALLOC_FIXED);
	} else if (!strcmp(which, "dfile")) {
		rp = &c->rr_dfile;
		if (!*rp)
			*rp = rr_new(c->de, "ng0n1", c->cfg->o.size, RR_QD, RR_BATCH, RR_ALLOC);
	} else if (!strcmp(which, "file")) {
		rp = &c->rr_file;
		if (!*rp)
			*rp = rr_new(c->file.e, "ng0n1", c->cfg->o.size, RR_QD, RR_BATCH, RR_MALLOC);
	} else {
		rp = &c->rr_ram;
		if (!*rp) {
			struct bench_rig_params p = { .bytes = c->cfg->o.size, .lba_size = 4096,
						      .nr_io_queues = 1, .queue_depth = 256 };
			int ret = bench_rig_open(&p, &c->rig, &c->rig_t);
			if (ret)
				die("RAM controller", ret);
			ret = bench_fill(&c->rig_t, c->cfg->o.size);
			if (ret)
				die("filling the RAM namespace", ret);
			*rp = rr_new(c->rig_t.engine, c->rig_t.ng, c->cfg->o.size, RR_QD, RR_BATCH,
				     RR_MALLOC);
		}
	}
	if (!*rp)
		die("randread peer", ENOMEM);
	r->ops = rr_run(*rp, s, 0, &r->elapsed);
}

static void rr_kernel(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	(void)arg;
	if (!c->kr && !(c->kr = kread_new(c->cfg->o.size, RR_QD)))
		die("kernel tmpfs peer", EIO);
	r->ops = kread_run(c->kr, RR_BATCH, s, 0, &r->elapsed);
	if (r->ops < 0)
		die("kernel tmpfs read", (int)r->ops);
}

static const struct table_case cases[] = {
	{ "null-daemon-b32", "null", "null uring_cmd b32, through ucmdd", null_daemon, NULL },
	{ "null-inproc-b32", "null", "null uring_cmd b32, in-process", null_inproc, NULL },
	{ "null-kernel-b32", "null", "kernel /dev/null uring_cmd b32", null_kernel, NULL },
	{ "rr-daemon", "randread", "ucmdd RAM ns, plain buffers (bounced)", rr_case, "dm" },
	{ "rr-daemon-alloc", "randread", "ucmdd RAM ns, ucmd_buf_alloc buffers", rr_case, "da" },
	{ "rr-daemon-fixed", "randread", "ucmdd RAM ns, buf_alloc, registered", rr_case, "df" },
	{ "rr-daemon-file", "randread", "ucmdd tmpfs file ns, buf_alloc", rr_case, "dfile" },
	{ "rr-inproc-file", "randread", "in-process, same tmpfs file ns", rr_case, "file" },
	{ "rr-inproc-ram", "randread", "in-process, RAM namespace", rr_case, "ram" },
	{ "rr-kernel-tmpfs", "randread", "kernel io_uring read, tmpfs file", rr_kernel, NULL },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

static const struct table_ratio ratios[] = {
	{ "null-daemon-b32", "null-kernel-b32", "null b32: ucmdd / kernel", 1 },
	{ "null-daemon-b32", "null-inproc-b32", "null b32: ucmdd / in-process", 0 },
	/* the targets of docs/performance.md: plain memory 0.6x, shared buffers 0.85x */
	{ "rr-daemon", "rr-inproc-ram", "randread: ucmdd bounced / in-process RAM", 0.6 },
	{ "rr-daemon-alloc", "rr-inproc-ram", "randread: ucmdd buf_alloc / in-process RAM", 0.85 },
	{ "rr-daemon-fixed", "rr-inproc-ram", "randread: ucmdd fixed / in-process RAM", 0.5 },
	{ "rr-daemon-file", "rr-inproc-file", "randread: ucmdd file / in-process same file ns", 0.5 },
	{ "rr-daemon", "rr-kernel-tmpfs", "randread: ucmdd bounced / kernel tmpfs", 1 },
	{ "rr-daemon-alloc", "rr-kernel-tmpfs", "randread: ucmdd buf_alloc / kernel tmpfs", 1 },
	{ "rr-daemon-fixed", "rr-kernel-tmpfs", "randread: ucmdd fixed / kernel tmpfs", 1 },
};
#define NR_RATIOS (sizeof(ratios) / sizeof(ratios[0]))

static const struct table table = {
	.cases = cases, .nr_cases = NR_CASES, .ratios = ratios, .nr_ratios = NR_RATIOS,
	.label_width = 40, .ratio_width = 48,
};

/* ---- main ----------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: bench_daemon [--time S] [--rounds N] [--size BYTES] [--idle S] "
			"[--ucmdd PATH] [--only CASE[|CASE...]] [--json]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct cfg *c)
{
	static const struct option lo[] = {
		TABLE_LONGOPTS,
		DAEMON_LONGOPTS,
		{ "idle", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*c = (struct cfg){ .idle = 3.0 };
	table_opts_default(&c->o);
	daemon_opts_default(&c->dopt);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int t = table_opt(&c->o, ch, optarg);

		if (t < 0)
			usage();
		if (t > 0 || daemon_opt(&c->dopt, ch, optarg))
			continue;
		if (ch != 'i' || bench_parse_time(optarg, &c->idle) || c->idle <= 0)
			usage();
	}
	if (!c->o.rounds || optind != argc ||
	    !table_only_ok(&table, c->dopt.only))
		usage();
}

int main(int argc, char **argv)
{
	struct cfg cfg;
	/* static: cleanup at exit reads c.d, after main's frame is gone */
	static struct ctx c;
	struct table_run best[NR_CASES];
	char ddir[PATH_MAX];
	const char *what;
	double idle_cpu, idle0, idle1;
	int ret, stop_status;

	parse(argc, argv, &cfg);
	c.cfg = &cfg;
	if (access(cfg.dopt.ucmdd, X_OK))
		die(cfg.dopt.ucmdd, errno);

	/* two identical controllers on tmpfs: the daemon's and the in-process twin */
	if ((ret = daemon_proc_dir(&c.d, "ucmd-bench-daemon")))
		die("mkdtemp /dev/shm", ret);
	if ((ret = dirctrl_twins(c.d.dir, cfg.o.size, ddir, sizeof(ddir), &c.file, &what)))
		die(what, ret);

	ret = daemon_proc_start(&c.d, cfg.dopt.ucmdd, ddir, cfg.o.size);
	if (ret)
		die("starting ucmdd", ret);
	ret = ucmd_engine_connect(c.d.sock, &c.de);
	if (ret)
		die("ucmd_engine_connect", ret);
	if ((ret = daemon_proc_fill_ram(c.de, cfg.o.size)))
		die("filling ucmdd's RAM namespace", ret);

	table_run(&table, &c, cfg.o.seconds, cfg.o.rounds, cfg.dopt.only, best);

	/* every client of the daemon gone; then its CPU time over the idle window */
	ucmd_peer_free(c.n_daemon);
	rr_free(c.rr_dm);
	rr_free(c.rr_da);
	rr_free(c.rr_df);
	rr_free(c.rr_dfile);
	ucmd_engine_free(c.de);
	sleep(1);
	idle0 = daemon_proc_cpu(&c.d);
	usleep((useconds_t)(cfg.idle * 1e6));
	idle1 = daemon_proc_cpu(&c.d);
	idle_cpu = idle0 < 0 || idle1 < 0 ? -1 : 100.0 * (idle1 - idle0) / cfg.idle;
	stop_status = daemon_proc_stop(&c.d);

	const char *kop = bench_op_name(kernel_null_op(c.nk_probe));
	if (cfg.o.json) {
		json_object *root = json_object_new_object();

		table_json_opts(root, &cfg.o);
		json_object_object_add(root, "kernel_null_op", json_object_new_string(kop));
		json_object_object_add(root, "daemon_store", json_object_new_string("file on tmpfs"));
		table_json(root, &table, best, cfg.dopt.only);
		json_object_object_add(root, "idle_cpu_percent", json_object_new_double(idle_cpu));
		json_object_object_add(root, "idle_seconds", json_object_new_double(cfg.idle));
		json_object_object_add(root, "sigterm_exit", json_object_new_int(stop_status));
		table_json_emit(root);
	} else {
		printf("bench_daemon: %.2f s per case, best of %u rounds, namespaces %llu MiB "
		       "(ucmdd's: a file on tmpfs)\nkernel null op: %s\n\n", cfg.o.seconds,
		       cfg.o.rounds, (unsigned long long)(cfg.o.size >> 20), kop);
		table_print(&table, best, cfg.dopt.only);
		printf("\nucmdd idle, no clients, %.1f s: %.2f%% of one CPU (target ~0)\n",
		       cfg.idle, idle_cpu);
		printf("ucmdd SIGTERM exit status: %d\n", stop_status);
	}

	ucmd_peer_free(c.n_inproc);
	kernel_peer_free(c.n_kernel);
	rr_free(c.rr_file);
	rr_free(c.rr_ram);
	dirctrl_close(&c.file);
	bench_rig_close(c.rig);
	kread_free(c.kr);
	return stop_status == 0 ? 0 : 1;	/* cleanup() removes the directory */
}
