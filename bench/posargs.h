/* SPDX-License-Identifier: MIT */
/*
 * The positional arguments bench_zns, bench_pi and bench_fdp share:
 * [SECONDS per run] [RUNS, best of] and, for some, one word. Each is
 * checked whole, so that "--help" or "2x" prints the usage and exits
 * rather than running a zero-second bench that reports nonsense.
 */
#ifndef UCMD_BENCH_POSARGS_H
#define UCMD_BENCH_POSARGS_H

#include <stdbool.h>

/*
 * secs and runs hold the defaults on entry. word: the one optional word
 * allowed third (NULL: none); *has_word tells whether it was given.
 * Returns 0 to run; 1 after -h/--help printed the usage to stdout (main
 * exits 0); 2 after a bad argument, the usage on stderr (main exits 2).
 */
int bench_posargs(int argc, char **argv, const char *usage, double *secs, int *runs,
		  const char *word, bool *has_word);

#endif
