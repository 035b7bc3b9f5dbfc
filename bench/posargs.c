/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posargs.h"

/* at most a day a run and 1000 runs: more is a typo, not a measurement */
static bool parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 86400)
		return false;
	*out = v;
	return true;
}

static bool parse_runs(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1000)
		return false;
	*out = (int)v;
	return true;
}

int bench_posargs(int argc, char **argv, const char *usage, double *secs, int *runs,
		  const char *word, bool *has_word)
{
	int max = word ? 4 : 3;

	if (has_word)
		*has_word = false;
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: %s %s\n", argv[0], usage);
		return 1;
	}
	if (argc > max || (argc > 1 && !parse_secs(argv[1], secs)) ||
	    (argc > 2 && !parse_runs(argv[2], runs)) ||
	    (argc > 3 && strcmp(argv[3], word))) {
		fprintf(stderr, "usage: %s %s\n  (SECONDS > 0 and at most 86400, RUNS 1..1000)\n",
			argv[0], usage);
		return 2;
	}
	if (argc > 3)
		*has_word = true;
	return 0;
}
