/* SPDX-License-Identifier: MIT */
/*
 * The harness bench_compare and bench_daemon share: a table of cases and of
 * the ratios between them, run round by round (best of N, so machine noise
 * hits every case alike), printed or as JSON, and the options both take
 * (--time, --rounds, --size, --json). What a case measures, and what else a
 * program prints, stays in the program.
 */
#ifndef BENCH_TABLE_H
#define BENCH_TABLE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* Each program's fixtures, built lazily by its cases; opaque here. */
struct ctx;

struct table_run {
	int64_t ops;
	double elapsed;
	uint64_t doorbells, wakeups;	/* thread-mode controller counters; 0 where none */
};

/* Runs one case for about `seconds`, filling r; exits on failure. */
typedef void (*table_fn)(struct ctx *c, const void *arg, double seconds, struct table_run *r);

struct table_case {
	const char *name, *group, *label;
	table_fn fn;
	const void *arg;
};

/* Case a over case b; a target of 0 is reported as none. */
struct table_ratio {
	const char *a, *b, *what;
	double target;
};

struct table {
	const struct table_case *cases;
	unsigned nr_cases;
	const struct table_ratio *ratios;
	unsigned nr_ratios;
	int label_width, ratio_width;	/* printed column widths */
	bool counters;			/* print the "extra" column: doorbells, wakeups per op */
};

/* The options every table bench takes. */
struct table_opts {
	double seconds;		/* per case per round */
	unsigned rounds;
	uint64_t size;		/* namespaces and files, bytes */
	bool json;
};

/* Their getopt_long entries; table_opt() handles these values of ch. */
#define TABLE_LONGOPTS \
	{ "time", required_argument, NULL, 't' }, \
	{ "rounds", required_argument, NULL, 'r' }, \
	{ "size", required_argument, NULL, 's' }, \
	{ "json", no_argument, NULL, 'j' }

/* 1 s, 3 rounds, 128 MiB, text. */
void table_opts_default(struct table_opts *o);
/*
 * 1 when ch is one of TABLE_LONGOPTS and arg is valid, -1 when arg is not, 0
 * when ch is not one of them. --rounds is checked after parsing (!o->rounds).
 */
int table_opt(struct table_opts *o, int ch, const char *arg);

/* The index of the case called name, or -1. */
int table_find(const struct table *t, const char *name);
/* Whether --only ONLY ("CASE" or "CASE|CASE...", NULL: all) runs the case called name. */
bool table_picks(const char *only, const char *name);
/* Whether every name ONLY lists (once each) is a case of t; NULL is. */
bool table_only_ok(const struct table *t, const char *only);
/* ops per second, 0 when none */
double table_rate(const struct table_run *r);

/*
 * A warm-up pass of seconds/5 per case (fixtures built, caches and allocator
 * free lists filled), then `rounds` passes of every case in turn, keeping in
 * best[i] (nr_cases entries) the run of case i with the best rate. only: the
 * cases it names (table_picks), or NULL for all.
 */
void table_run(const struct table *t, struct ctx *c, double seconds, unsigned rounds,
	       const char *only, struct table_run *best);

/* The cases (a blank line between groups), then the ratios, MISSED below target. */
void table_print(const struct table *t, const struct table_run *best, const char *only);

/* "seconds", "rounds", "size" into root. */
void table_json_opts(json_object *root, const struct table_opts *o);
/* "cases" (an object by name) and "ratios" (an array) into root. */
void table_json(json_object *root, const struct table *t, const struct table_run *best,
		const char *only);
/* root, pretty, on stdout; then released. */
void table_json_emit(json_object *root);

#endif
