/* SPDX-License-Identifier: MIT */
/*
 * bench_compare: ucmd against its references, side by side, in one run.
 *   null     null uring_cmd, ucmd vs the kernel's io_uring on /dev/null, batch 1 and 32
 *   randread 4 KiB random reads at QD32 on a RAM namespace: passthrough, block path,
 *            the kernel's io_uring on a tmpfs file, and memcpy from random offsets
 *   plug     plugging on vs off at QD32, 512-byte random reads (t/io_uring's peak-IOPS
 *            shape), controller in thread mode with trapping doorbells
 *   sync     synchronous ioctl at QD1 vs passthrough at QD1 and QD128
 *   instr    instructions per op of null and randread cases, under callgrind
 * Cases alternate round by round, best of N, so machine noise hits all.
 * It reports; it never asserts a speed.
 *
 *   bench_compare [--time S] [--rounds N] [--size BYTES] [--json] [--callgrind]
 *                 [--only CASE --ops N]     (one case, fixed op count: for callgrind)
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "job.h"
#include "opts.h"
#include "rig.h"
#include "table.h"

struct cfg {
	struct table_opts o;	/* --time, --rounds, --size, --json */
	bool callgrind;
	const char *only;
	uint64_t ops;		/* --only CASE --ops N: a fixed count for every case; else 0 */
	const char *self;
};

/* Lazily built fixtures, shared by the cases of a group. */
struct ctx {
	const struct cfg *cfg;
	struct ucmd_peer *nu;
	struct kernel_peer *nk;
	int nk_probe;
	struct bench_rig *rig_inline, *rig_thread;
	struct bench_target t_inline, t_thread;
	struct kread *kr;
	uint8_t *copy_src, *copy_dst;
};

#define RR_QD		32
#define RR_BATCH	8

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_compare: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* ---- null uring_cmd ------------------------------------------------------- */

static void null_ucmd(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	unsigned batch = (unsigned)(uintptr_t)arg;
	uint64_t ops = c->cfg->ops;

	if (!c->nu && !(c->nu = ucmd_peer_new(32)))
		die("ucmd null peer", EIO);
	if (ops) {
		r->ops = ucmd_peer_run_n(c->nu, batch, BENCH_URING_CMD, (ops + batch - 1) / batch);
		return;
	}
	r->ops = ucmd_peer_run(c->nu, batch, BENCH_URING_CMD, s, &r->elapsed);
}

static void null_kernel(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	unsigned batch = (unsigned)(uintptr_t)arg;
	uint64_t ops = c->cfg->ops;
	enum bench_op op;

	if (!c->nk) {
		if (!(c->nk = kernel_peer_new(32)))
			die("kernel null peer", EIO);
		c->nk_probe = kernel_peer_probe(c->nk, BENCH_URING_CMD);
	}
	op = kernel_null_op(c->nk_probe);
	if (ops) {
		r->ops = kernel_peer_run_n(c->nk, batch, op, (ops + batch - 1) / batch);
		return;
	}
	r->ops = kernel_peer_run(c->nk, batch, op, s, &r->elapsed);
}

/* ---- ucmd bench jobs ------------------------------------------------------- */

struct jobdef {
	enum bench_path path;
	unsigned qd, bs_submit, bs_complete;
	bool thread_ctrl, noplug;
};

static struct bench_target *rig(struct ctx *c, bool thread)
{
	struct bench_rig **rp = thread ? &c->rig_thread : &c->rig_inline;
	struct bench_target *t = thread ? &c->t_thread : &c->t_inline;

	if (!*rp) {
		/*
		 * The plugging rig: a doorbell wakes the controller thread and
		 * traps (waits for the pass in progress), and reads are 512
		 * bytes, so what plugging saves is not hidden behind data copies.
		 */
		struct bench_rig_params p = {
			.thread_mode = thread, .db_trap = thread, .bytes = c->cfg->o.size,
			.lba_size = thread ? 512 : 4096, .nr_io_queues = 1, .queue_depth = 256,
		};
		int ret = bench_rig_open(&p, rp, t);
		if (ret)
			die("RAM controller", ret);
		/* reads must copy real data, as from the tmpfs file and the memcpy source */
		ret = bench_fill(t, c->cfg->o.size);
		if (ret)
			die("filling the RAM namespace", ret);
	}
	return t;
}

static void job(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	const struct jobdef *j = arg;
	struct bench_target *t = rig(c, j->thread_ctrl);
	struct bench_rig *rg = j->thread_ctrl ? c->rig_thread : c->rig_inline;
	struct bench_result *res;
	struct bench_opts o;
	uint64_t db0, wk0, cmd0, db1, wk1, cmd1;

	bench_opts_default(&o);
	o.rw = RW_RANDREAD;
	o.bs = t->lba_size;
	o.size = c->cfg->o.size;
	o.path = j->path;
	o.iodepth = j->qd;
	o.batch_submit = j->bs_submit;
	o.batch_complete = j->bs_complete;
	o.noplug = j->noplug;
	o.progress = false;
	o.runtime = s;
	o.ops = c->cfg->ops;
	bench_rig_stats(rg, &db0, &wk0, &cmd0);
	int ret = bench_run(&o, t, &res);
	bench_rig_stats(rg, &db1, &wk1, &cmd1);
	if (ret || res->io_errors) {
		fprintf(stderr, "bench_compare: %s: %s (%llu I/O errors, first %d)\n",
			bench_path_name(j->path), res ? res->errmsg : "", res ?
			(unsigned long long)res->io_errors : 0ull, res ? res->first_error : 0);
		exit(1);
	}
	r->ops = (int64_t)(res->dir[DIR_READ].ios + res->dir[DIR_WRITE].ios);
	r->elapsed = res->elapsed;
	r->doorbells = db1 - db0;
	r->wakeups = wk1 - wk0;
	free(res);
}

static void kernel_tmpfs(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	(void)arg;
	if (!c->kr && !(c->kr = kread_new(c->cfg->o.size, RR_QD)))
		die("kernel tmpfs peer", EIO);
	/* a failed read leaves r->ops < 0: a rate of 0, reported as such */
	r->ops = kread_run(c->kr, RR_BATCH, s, c->cfg->ops, &r->elapsed);
}

static inline uint64_t xrnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* The bound: what moving the data costs with no I/O stack at all. */
static void copy_bound(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	uint64_t ops = c->cfg->ops, blocks = c->cfg->o.size / 4096, rng = 0x5eed, n = 0;
	double start = bench_now(), now;

	(void)arg;
	if (!c->copy_src) {
		c->copy_src = aligned_alloc(4096, c->cfg->o.size);
		c->copy_dst = aligned_alloc(4096, RR_QD * 4096);
		if (!c->copy_src || !c->copy_dst)
			die("copy buffers", ENOMEM);
		memset(c->copy_src, 0x5a, c->cfg->o.size);
		memset(c->copy_dst, 0, RR_QD * 4096);
	}
	do {
		for (unsigned i = 0; i < 256; i++, n++)
			memcpy(c->copy_dst + (n % RR_QD) * 4096,
			       c->copy_src + (xrnd(&rng) % blocks) * 4096, 4096);
		/* keep the copies: the compiler may not drop them */
		__asm__ volatile("" : : "r"(c->copy_dst) : "memory");
		now = bench_now();
	} while (ops ? n < ops : now - start < s);
	r->ops = (int64_t)n;
	r->elapsed = now - start;
}

static const struct jobdef j_rr_pt = { PATH_PASSTHRU, RR_QD, RR_BATCH, RR_BATCH, false, false };
static const struct jobdef j_rr_blk = { PATH_BLOCK, RR_QD, RR_BATCH, RR_BATCH, false, false };
static const struct jobdef j_plug_on = { PATH_PASSTHRU, 32, 32, 32, true, false };
static const struct jobdef j_plug_off = { PATH_PASSTHRU, 32, 32, 32, true, true };
static const struct jobdef j_sync1 = { PATH_SYNC, 1, 1, 1, false, false };
static const struct jobdef j_pt1 = { PATH_PASSTHRU, 1, 1, 1, false, false };
static const struct jobdef j_pt128 = { PATH_PASSTHRU, 128, 32, 32, false, false };

static const struct table_case cases[] = {
	{ "null-ucmd-b1", "null", "ucmd null uring_cmd, batch 1", null_ucmd, (void *)1 },
	{ "null-kernel-b1", "null", "kernel /dev/null uring_cmd, batch 1", null_kernel, (void *)1 },
	{ "null-ucmd-b32", "null", "ucmd null uring_cmd, batch 32", null_ucmd, (void *)32 },
	{ "null-kernel-b32", "null", "kernel /dev/null uring_cmd, batch 32", null_kernel,
	  (void *)32 },
	{ "rr-passthru", "randread", "ucmd passthrough ng0n1", job, &j_rr_pt },
	{ "rr-block", "randread", "ucmd block path nvme0n1", job, &j_rr_blk },
	{ "rr-kernel-tmpfs", "randread", "kernel io_uring read, tmpfs file", kernel_tmpfs, NULL },
	{ "rr-memcpy", "randread", "memcpy 4 KiB from random offsets", copy_bound, NULL },
	{ "plug-on", "plug", "passthrough 512 B QD32 batch 32, plugged", job, &j_plug_on },
	{ "plug-off", "plug", "passthrough 512 B QD32 batch 32, --noplug", job, &j_plug_off },
	{ "sync-qd1", "sync", "sync ioctl NVME_IOCTL_IO64_CMD, QD1", job, &j_sync1 },
	{ "passthru-qd1", "sync", "async passthrough, QD1", job, &j_pt1 },
	{ "passthru-qd128", "sync", "async passthrough, QD128 batch 32", job, &j_pt128 },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

/* The ratios the issue asks for: case a over case b. */
static const struct table_ratio ratios[] = {
	{ "null-ucmd-b1", "null-kernel-b1", "null uring_cmd batch 1: ucmd / kernel", 10 },
	{ "null-ucmd-b32", "null-kernel-b32", "null uring_cmd batch 32: ucmd / kernel", 5 },
	{ "rr-passthru", "rr-kernel-tmpfs", "randread QD32: passthru / kernel tmpfs", 2 },
	{ "rr-passthru", "rr-memcpy", "randread QD32: passthru / memcpy bound", 0.5 },
	{ "rr-passthru", "rr-block", "randread QD32: passthru / block path", 1 },
	{ "plug-on", "plug-off", "thread-mode QD32: plugged / unplugged", 1.5 },
	{ "passthru-qd1", "sync-qd1", "QD1: async passthru / sync ioctl", 0 },
	{ "passthru-qd128", "sync-qd1", "QD128 async / QD1 sync ioctl", 0 },
};
#define NR_RATIOS (sizeof(ratios) / sizeof(ratios[0]))

static const struct table table = {
	.cases = cases, .nr_cases = NR_CASES, .ratios = ratios, .nr_ratios = NR_RATIOS,
	.label_width = 42, .ratio_width = 44, .counters = true,
};

static void usage(void)
{
	fprintf(stderr, "usage: bench_compare [--time S] [--rounds N] [--size BYTES] [--json] "
			"[--callgrind]\n"
			"                     [--only CASE --ops N]\ncases:");
	for (unsigned i = 0; i < NR_CASES; i++)
		fprintf(stderr, " %s", cases[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

static void parse(int argc, char **argv, struct cfg *c)
{
	static const struct option lo[] = {
		TABLE_LONGOPTS,
		{ "callgrind", no_argument, NULL, 'c' },
		{ "only", required_argument, NULL, 'o' },
		{ "ops", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*c = (struct cfg){ .self = argv[0] };
	table_opts_default(&c->o);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int t = table_opt(&c->o, ch, optarg);

		if (t < 0)
			usage();
		if (t > 0)
			continue;
		switch (ch) {
		case 'c': c->callgrind = true; break;
		case 'o':
			if (table_find(&table, optarg) < 0)
				usage();
			c->only = optarg;
			break;
		case 'n':
			if (bench_parse_size(optarg, &c->ops) || !c->ops)
				usage();
			break;
		default:
			usage();
		}
	}
	if (!c->o.rounds || optind != argc || (c->ops && !c->only))
		usage();
}

static void ctx_free(struct ctx *c)
{
	ucmd_peer_free(c->nu);
	kernel_peer_free(c->nk);
	bench_rig_close(c->rig_inline);
	bench_rig_close(c->rig_thread);
	kread_free(c->kr);
	free(c->copy_src);
	free(c->copy_dst);
}

/* ---- instructions per op under callgrind ---------------------------------- */

/*
 * Run `self --only CASE --ops n` under callgrind and return the instructions
 * it executed in user space (callgrind's "Collected"). Two runs, n and 2n
 * ops, and the difference over n cancel setup and teardown.
 */
static int64_t callgrind_ir(const struct cfg *cfg, const char *name, uint64_t n)
{
	char ops[32], size[32], cmd[1024];
	FILE *p;
	char line[512];
	int64_t ir = -1;

	snprintf(ops, sizeof(ops), "%llu", (unsigned long long)n);
	/* instruction counts do not depend on the namespace size: keep setup cheap */
	snprintf(size, sizeof(size), "%llu", (unsigned long long)(16ull << 20));
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=callgrind --callgrind-out-file=/dev/null %s --only %s --ops %s "
		 "--size %s 2>&1 >/dev/null", cfg->self, name, ops, size);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *x = strstr(line, "Collected :");
		if (x)
			ir = strtoll(x + 11, NULL, 10);
	}
	if (pclose(p) != 0)
		return -1;
	return ir;
}

struct instr { const char *name; double per_op; bool kernel; };

static const char *const instr_cases[] = {
	"null-ucmd-b1", "null-kernel-b1", "null-ucmd-b32", "null-kernel-b32",
	"rr-passthru", "rr-block", "rr-kernel-tmpfs", "rr-memcpy",
};
#define NR_INSTR (sizeof(instr_cases) / sizeof(instr_cases[0]))

static void measure_instr(const struct cfg *cfg, struct instr *out)
{
	const uint64_t n = 20000;

	for (unsigned i = 0; i < NR_INSTR; i++) {
		int64_t a = callgrind_ir(cfg, instr_cases[i], n);
		int64_t b = callgrind_ir(cfg, instr_cases[i], 2 * n);
		out[i].name = instr_cases[i];
		out[i].kernel = strstr(instr_cases[i], "kernel") != NULL;
		out[i].per_op = a > 0 && b > a ? (double)(b - a) / (double)n : -1;
		if (!cfg->o.json)
			fprintf(stderr, "callgrind %-16s %.0f instructions/op\n", instr_cases[i],
				out[i].per_op);
	}
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	struct cfg cfg;
	struct ctx c = { 0 };
	struct table_run best[NR_CASES];
	struct instr instr[NR_INSTR];

	parse(argc, argv, &cfg);
	c.cfg = &cfg;
	if (cfg.only && cfg.ops) {
		/* one case, a fixed count (cfg.ops): what callgrind measures */
		const struct table_case *k = &cases[table_find(&table, cfg.only)];
		struct table_run r = { 0 };

		k->fn(&c, k->arg, 0, &r);
		printf("%s %lld ops\n", cfg.only, (long long)r.ops);
		ctx_free(&c);
		return 0;
	}
	table_run(&table, &c, cfg.o.seconds, cfg.o.rounds, cfg.only, best);
	if (cfg.callgrind)
		measure_instr(&cfg, instr);

	const char *kop = bench_op_name(kernel_null_op(c.nk_probe));
	if (cfg.o.json) {
		json_object *root = json_object_new_object();

		table_json_opts(root, &cfg.o);
		json_object_object_add(root, "kernel_null_op", json_object_new_string(kop));
		table_json(root, &table, best, cfg.only);
		if (cfg.callgrind) {
			json_object *in = json_object_new_object();
			for (unsigned i = 0; i < NR_INSTR; i++)
				json_object_object_add(in, instr[i].name,
						       json_object_new_double(instr[i].per_op));
			json_object_object_add(root, "instructions_per_op_user_space", in);
		}
		table_json_emit(root);
	} else {
		printf("bench_compare: %.2f s per case, best of %u rounds, namespace/file %llu MiB\n",
		       cfg.o.seconds, cfg.o.rounds, (unsigned long long)(cfg.o.size >> 20));
		printf("kernel null op: %s\n\n", kop);
		table_print(&table, best, cfg.only);
		if (cfg.callgrind) {
			printf("\ninstructions per op (callgrind, user space only: a kernel case's\n"
			       "syscall work is invisible to valgrind)\n");
			for (unsigned i = 0; i < NR_INSTR; i++)
				printf("%-16s %10.0f%s\n", instr[i].name, instr[i].per_op,
				       instr[i].kernel ? "  (+ kernel, not counted)" : "");
		}
	}
	ctx_free(&c);
	return 0;
}
