/* SPDX-License-Identifier: MIT */
/*
 * bench_null: the cost of the uring_cmd framework itself. Null commands go
 * through ucmd (engine "null" device) and through the kernel's io_uring on
 * /dev/null, same ring shape (SQE128|CQE32, fixed file), batch 1 and 32.
 * Peers alternate round by round, best of N, so that machine noise hits
 * both. It reports; it never asserts a speed.
 *
 *   bench_null [--time S] [--rounds N] [--warmup S] [--json]
 *              [--only ucmd|kernel] [--batch N]
 * --only and --batch narrow the run, for profiling one side under perf.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "null_bench.h"

#define NR_BATCHES 2
#define MAX_KOPS 2
static const unsigned batches[NR_BATCHES] = { 1, 32 };

struct opts {
	double seconds, warmup;
	unsigned rounds;
	bool json;
	bool no_ucmd, no_kernel;
	unsigned batch;			/* 0: all of batches[] */
};

struct result {
	unsigned batch;
	double ucmd;			/* best ops/s */
	double kernel[MAX_KOPS];	/* best ops/s per kernel op */
};

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--time S] [--rounds N] [--warmup S] [--json]\n"
		"       [--only ucmd|kernel] [--batch 1|32]\n", argv0);
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "time", required_argument, NULL, 't' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "only", required_argument, NULL, 'o' },
		{ "batch", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .seconds = 1.0, .warmup = 0.2, .rounds = 3 };
	while ((c = getopt_long(argc, argv, "t:r:w:jo:b:h", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			o->seconds = atof(optarg);
			break;
		case 'r':
			o->rounds = (unsigned)atoi(optarg);
			break;
		case 'w':
			o->warmup = atof(optarg);
			break;
		case 'j':
			o->json = true;
			break;
		case 'o':
			if (!strcmp(optarg, "ucmd"))
				o->no_kernel = true;
			else if (!strcmp(optarg, "kernel"))
				o->no_ucmd = true;
			else
				usage(argv[0]);
			break;
		case 'b':
			o->batch = (unsigned)atoi(optarg);
			if (o->batch != batches[0] && o->batch != batches[1])
				usage(argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (o->seconds <= 0 || o->warmup < 0 || !o->rounds || optind != argc)
		usage(argv[0]);
}

/*
 * What the kernel is measured with. With uring_cmd on /dev/null (Linux 6.0+)
 * that is the like-for-like peer. Without it a uring_cmd still goes through
 * io_uring_cmd prep and issue before failing, and NOP is the bare ring round
 * trip: both are measured and labelled, neither passed off as the real thing.
 */
static unsigned kernel_ops(struct kernel_peer *k, enum bench_op *ops, int *probe)
{
	*probe = kernel_peer_probe(k, BENCH_URING_CMD);
	if (*probe == 0) {
		ops[0] = BENCH_URING_CMD;
		return 1;
	}
	if (*probe == -EOPNOTSUPP) {
		ops[0] = BENCH_URING_CMD_FAIL;
		ops[1] = BENCH_NOP;
		return 2;
	}
	ops[0] = BENCH_NOP;
	return 1;
}

static double rate(int64_t ops, double elapsed)
{
	return ops > 0 && elapsed > 0 ? (double)ops / elapsed : 0;
}

static double best(double a, double b)
{
	return a > b ? a : b;
}

static void measure(struct ucmd_peer *u, struct kernel_peer *k, const enum bench_op *kops,
		    unsigned nk, const struct opts *o, struct result *res)
{
	double el;

	for (unsigned b = 0; b < NR_BATCHES; b++) {
		unsigned n = batches[b];
		struct result *r = &res[b];

		memset(r, 0, sizeof(*r));
		r->batch = n;
		if (o->batch && o->batch != n)
			continue;
		/* Warm caches, allocator free lists and the CPU's clock first. */
		if (!o->no_ucmd)
			ucmd_peer_run(u, n, BENCH_URING_CMD, o->warmup, &el);
		for (unsigned j = 0; j < nk && !o->no_kernel; j++)
			kernel_peer_run(k, n, kops[j], o->warmup, &el);
		for (unsigned round = 0; round < o->rounds; round++) {
			int64_t ops;
			if (!o->no_ucmd) {
				ops = ucmd_peer_run(u, n, BENCH_URING_CMD, o->seconds, &el);
				r->ucmd = best(r->ucmd, rate(ops, el));
			}
			for (unsigned j = 0; j < nk && !o->no_kernel; j++) {
				ops = kernel_peer_run(k, n, kops[j], o->seconds, &el);
				r->kernel[j] = best(r->kernel[j], rate(ops, el));
			}
		}
	}
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void print_table(const struct opts *o, const enum bench_op *kops, unsigned nk, int probe,
			const struct result *res)
{
	printf("null uring_cmd: %.2f s per run, best of %u, SQE128|CQE32, fixed file\n",
	       o->seconds, o->rounds);
	if (probe == 0)
		printf("kernel /dev/null supports uring_cmd: like-for-like comparison\n");
	else
		printf("kernel /dev/null uring_cmd gives %d (%s): the kernel column is NOT a "
		       "working uring_cmd\n", probe, strerror(-probe));
	printf("%-6s %14s  %-24s %14s %12s\n", "batch", "ucmd ops/s", "kernel op", "kernel ops/s",
	       "ucmd/kernel");
	for (unsigned b = 0; b < NR_BATCHES; b++)
		for (unsigned j = 0; j < nk && (!o->batch || o->batch == res[b].batch); j++)
			printf("%-6u %14.0f  %-24s %14.0f %11.2fx\n", res[b].batch, res[b].ucmd,
			       bench_op_name(kops[j]), res[b].kernel[j],
			       ratio(res[b].ucmd, res[b].kernel[j]));
}

static void print_json(const struct opts *o, const enum bench_op *kops, unsigned nk, int probe,
		       const struct result *res)
{
	json_object *root = json_object_new_object(), *arr = json_object_new_array();

	json_object_object_add(root, "benchmark", json_object_new_string("null_uring_cmd"));
	json_object_object_add(root, "seconds", json_object_new_double(o->seconds));
	json_object_object_add(root, "rounds", json_object_new_int((int)o->rounds));
	json_object_object_add(root, "kernel_uring_cmd_supported", json_object_new_boolean(!probe));
	json_object_object_add(root, "kernel_uring_cmd_probe_res", json_object_new_int(probe));
	for (unsigned b = 0; b < NR_BATCHES; b++) {
		for (unsigned j = 0; j < nk && (!o->batch || o->batch == res[b].batch); j++) {
			json_object *e = json_object_new_object();
			json_object_object_add(e, "batch", json_object_new_int((int)res[b].batch));
			json_object_object_add(e, "ucmd_ops_per_sec",
					       json_object_new_double(res[b].ucmd));
			json_object_object_add(e, "kernel_op",
					       json_object_new_string(bench_op_name(kops[j])));
			json_object_object_add(e, "kernel_ops_per_sec",
					       json_object_new_double(res[b].kernel[j]));
			json_object_object_add(e, "ratio",
					       json_object_new_double(ratio(res[b].ucmd,
									    res[b].kernel[j])));
			json_object_array_add(arr, e);
		}
	}
	json_object_object_add(root, "results", arr);
	printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	json_object_put(root);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct result res[NR_BATCHES];
	enum bench_op kops[MAX_KOPS];
	unsigned nk;
	int probe;

	parse(argc, argv, &o);
	/* One ring per peer, as deep as the largest batch, drained every batch. */
	struct ucmd_peer *u = ucmd_peer_new(batches[NR_BATCHES - 1]);
	struct kernel_peer *k = kernel_peer_new(batches[NR_BATCHES - 1]);
	if (!u || !k) {
		ucmd_peer_free(u);
		kernel_peer_free(k);
		return 1;
	}
	nk = kernel_ops(k, kops, &probe);
	measure(u, k, kops, nk, &o, res);
	if (o.json)
		print_json(&o, kops, nk, probe, res);
	else
		print_table(&o, kops, nk, probe, res);
	ucmd_peer_free(u);
	kernel_peer_free(k);
	return 0;
}
