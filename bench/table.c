/* SPDX-License-Identifier: MIT */
/* The case table, its best-of-N runner and its report (table.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "table.h"

void table_opts_default(struct table_opts *o)
{
	*o = (struct table_opts){ .seconds = 1.0, .rounds = 3, .size = 128ull << 20 };
}

int table_opt(struct table_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case 't':
		return bench_parse_time(arg, &o->seconds) || o->seconds <= 0 ? -1 : 1;
	case 'r':
		o->rounds = (unsigned)atoi(arg);
		return 1;
	case 's':
		return bench_parse_size(arg, &o->size) || o->size < (1u << 20) ? -1 : 1;
	case 'j':
		o->json = true;
		return 1;
	default:
		return 0;
	}
}

int table_find(const struct table *t, const char *name)
{
	for (unsigned i = 0; i < t->nr_cases; i++)
		if (!strcmp(t->cases[i].name, name))
			return (int)i;
	return -1;
}

bool table_picks(const char *only, const char *name)
{
	size_t n = strlen(name);

	if (!only)
		return true;
	for (const char *p = only;; p++) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);

		if (l == n && !strncmp(p, name, n))
			return true;
		if (!bar)
			return false;
		p = bar;
	}
}

bool table_only_ok(const struct table *t, const char *only)
{
	unsigned picked = 0, names = 1;

	if (!only)
		return true;
	/* every name it lists is a case: as many cases picked as names (none empty or twice) */
	for (unsigned i = 0; i < t->nr_cases; i++)
		picked += table_picks(only, t->cases[i].name);
	for (const char *p = only; *p; p++)
		names += *p == '|';
	return picked == names;
}

double table_rate(const struct table_run *r)
{
	return r->ops > 0 && r->elapsed > 0 ? (double)r->ops / r->elapsed : 0;
}

void table_run(const struct table *t, struct ctx *c, double seconds, unsigned rounds,
	       const char *only, struct table_run *best)
{
	memset(best, 0, t->nr_cases * sizeof(*best));
	/* warm-up: fixtures built, caches and allocator free lists filled */
	for (unsigned i = 0; i < t->nr_cases; i++) {
		struct table_run r = { 0 };
		if (!table_picks(only, t->cases[i].name))
			continue;
		t->cases[i].fn(c, t->cases[i].arg, seconds / 5, &r);
	}
	for (unsigned round = 0; round < rounds; round++)
		for (unsigned i = 0; i < t->nr_cases; i++) {
			struct table_run r = { 0 };
			if (!table_picks(only, t->cases[i].name))
				continue;
			t->cases[i].fn(c, t->cases[i].arg, seconds, &r);
			if (table_rate(&r) > table_rate(&best[i]))
				best[i] = r;
		}
}

/* The best rate of the case a ratio names; a name not in the table is the bench's bug. */
static double rate_of(const struct table *t, const struct table_run *best, const char *name)
{
	int i = table_find(t, name);

	if (i < 0) {
		fprintf(stderr, "bench: a ratio names no case %s\n", name);
		abort();
	}
	return table_rate(&best[i]);
}

void table_print(const struct table *t, const struct table_run *best, const char *only)
{
	const int lw = t->label_width, rw = t->ratio_width;

	if (t->counters)
		printf("%-16s %-*s %14s %10s\n", "case", lw, "what", "ops/s", "extra");
	else
		printf("%-16s %-*s %14s\n", "case", lw, "what", "ops/s");
	for (unsigned i = 0; i < t->nr_cases; i++) {
		const struct table_case *k = &t->cases[i];
		const struct table_run *b = &best[i];
		char extra[48] = "";

		if (!table_picks(only, k->name))
			continue;
		if (i > 0 && strcmp(k->group, t->cases[i - 1].group))
			printf("\n");
		if (!t->counters) {
			printf("%-16s %-*s %14.0f\n", k->name, lw, k->label, table_rate(b));
			continue;
		}
		if (b->doorbells)
			snprintf(extra, sizeof(extra), "%.3f db/op %.3f wk/op",
				 (double)b->doorbells / (double)b->ops,
				 (double)b->wakeups / (double)b->ops);
		printf("%-16s %-*s %14.0f %s\n", k->name, lw, k->label, table_rate(b), extra);
	}
	printf("\n%-*s %9s %8s\n", rw, "ratio", "measured", "target");
	for (unsigned i = 0; i < t->nr_ratios; i++) {
		const struct table_ratio *q = &t->ratios[i];
		double va = rate_of(t, best, q->a), vb = rate_of(t, best, q->b);

		if (!va || !vb)
			continue;
		if (q->target > 0)
			printf("%-*s %8.2fx %7.2fx%s\n", rw, q->what, va / vb, q->target,
			       va / vb >= q->target ? "" : "  MISSED");
		else
			printf("%-*s %8.2fx %8s\n", rw, q->what, va / vb, "-");
	}
}

void table_json_opts(json_object *root, const struct table_opts *o)
{
	json_object_object_add(root, "seconds", json_object_new_double(o->seconds));
	json_object_object_add(root, "rounds", json_object_new_int((int)o->rounds));
	json_object_object_add(root, "size", json_object_new_int64((int64_t)o->size));
}

void table_json(json_object *root, const struct table *t, const struct table_run *best,
		const char *only)
{
	json_object *cs = json_object_new_object(), *rs = json_object_new_array();

	for (unsigned i = 0; i < t->nr_cases; i++) {
		const struct table_case *k = &t->cases[i];
		const struct table_run *b = &best[i];
		json_object *e;

		if (!table_picks(only, k->name))
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "group", json_object_new_string(k->group));
		json_object_object_add(e, "what", json_object_new_string(k->label));
		json_object_object_add(e, "ops_per_sec", json_object_new_double(table_rate(b)));
		if (b->doorbells)
			json_object_object_add(e, "doorbells_per_op",
					       json_object_new_double((double)b->doorbells /
								      (double)b->ops));
		if (b->wakeups)
			json_object_object_add(e, "ctrl_wakeups_per_op",
					       json_object_new_double((double)b->wakeups /
								      (double)b->ops));
		json_object_object_add(cs, k->name, e);
	}
	json_object_object_add(root, "cases", cs);
	for (unsigned i = 0; i < t->nr_ratios; i++) {
		const struct table_ratio *q = &t->ratios[i];
		double va = rate_of(t, best, q->a), vb = rate_of(t, best, q->b);
		json_object *e;

		if (!va || !vb)
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "what", json_object_new_string(q->what));
		json_object_object_add(e, "ratio", json_object_new_double(va / vb));
		if (q->target > 0)
			json_object_object_add(e, "target", json_object_new_double(q->target));
		json_object_array_add(rs, e);
	}
	json_object_object_add(root, "ratios", rs);
}

void table_json_emit(json_object *root)
{
	printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	json_object_put(root);
}
