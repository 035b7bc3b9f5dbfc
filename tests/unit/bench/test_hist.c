/* SPDX-License-Identifier: MIT */
/* The bench histogram: the 1% bound, percentiles, merging. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "hist.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double relerr(uint64_t reported, uint64_t v)
{
	return fabs((double)reported - (double)v) / (double)(v ? v : 1);
}

/* Every value, from 0 to 2^64-1, is reported within 1% (in fact 1/256). */
static void test_bound_wide_range(void **state)
{
	(void)state;
	double worst = 0;
	/* exhaustive over the exact range and the first octaves */
	for (uint64_t v = 0; v < (1u << 16); v++) {
		double e = relerr(hist_bucket_value(hist_index(v)), v);
		worst = e > worst ? e : worst;
		assert_true(hist_bucket_low(hist_index(v)) <= v);
		assert_true(hist_bucket_high(hist_index(v)) >= v);
	}
	/* log-uniform samples up to 2^64, and every octave's edges */
	for (int i = 0; i < 2000000; i++) {
		unsigned bits = 1 + (unsigned)(next() % 64);
		uint64_t v = next() >> (64 - bits);
		double e = relerr(hist_bucket_value(hist_index(v)), v);
		worst = e > worst ? e : worst;
	}
	for (unsigned k = 0; k < 64; k++) {
		uint64_t lo = 1ull << k, hi = lo | (lo - 1);
		assert_true(relerr(hist_bucket_value(hist_index(lo)), lo) < 0.01);
		assert_true(relerr(hist_bucket_value(hist_index(hi)), hi) < 0.01);
		assert_true(hist_index(hi) < HIST_BUCKETS);
	}
	assert_int_equal(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
	assert_true(worst < 0.01);
	assert_true(worst <= 1.0 / 256);
}

/* Buckets tile the range: each starts one past the previous one's end. */
static void test_buckets_contiguous(void **state)
{
	(void)state;
	for (unsigned i = 1; i < HIST_BUCKETS; i++) {
		assert_int_equal(hist_bucket_low(i), hist_bucket_high(i - 1) + 1);
		assert_int_equal(hist_index(hist_bucket_low(i)), i);
		assert_int_equal(hist_index(hist_bucket_high(i)), i);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static const double pcts[] = { 1, 50, 90, 99, 99.9, 99.99 };

/* Percentiles match the exact order statistic within 1%. */
static void check_against_sorted(uint64_t *v, size_t n)
{
	struct hist *h = malloc(sizeof(*h));
	long double sum = 0;

	assert_non_null(h);
	hist_init(h);
	for (size_t i = 0; i < n; i++) {
		hist_add(h, v[i]);
		sum += v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	assert_int_equal(h->count, n);
	assert_int_equal(h->min, v[0]);
	assert_int_equal(h->max, v[n - 1]);
	assert_true(fabs(hist_mean(h) - (double)(sum / n)) < 1e-6 * (double)(sum / n) + 1e-9);
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		size_t rank = (size_t)ceil(pcts[i] / 100.0 * (double)n - 1e-9);
		uint64_t exact = v[rank ? rank - 1 : 0];
		uint64_t got = hist_percentile(h, pcts[i]);
		assert_true(relerr(got, exact) < 0.01);
	}
	assert_int_equal(hist_percentile(h, 100), v[n - 1]);
	free(h);
}

static void test_percentiles_uniform(void **state)
{
	(void)state;
	size_t n = 100000;
	uint64_t *v = malloc(n * sizeof(*v));
	assert_non_null(v);
	/* 1..100000 once each: p50 is 50000, p99.99 is 99990 */
	for (size_t i = 0; i < n; i++)
		v[i] = i + 1;
	struct hist *h = malloc(sizeof(*h));
	hist_init(h);
	for (size_t i = 0; i < n; i++)
		hist_add(h, v[i]);
	assert_true(relerr(hist_percentile(h, 50), 50000) < 0.01);
	assert_true(relerr(hist_percentile(h, 90), 90000) < 0.01);
	assert_true(relerr(hist_percentile(h, 99.99), 99990) < 0.01);
	free(h);
	check_against_sorted(v, n);
	free(v);
}

static void test_percentiles_exponential_and_bimodal(void **state)
{
	(void)state;
	size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v));
	assert_non_null(v);
	/* exponential, mean 10 µs in ns: a long tail like real latencies */
	for (size_t i = 0; i < n; i++) {
		double u = ((double)(next() >> 11) + 0.5) / 9007199254740992.0;
		v[i] = (uint64_t)(-log(u) * 10000.0);
	}
	check_against_sorted(v, n);
	/* 99% at 1 µs, 1% at 1 ms: p99 is 1 µs, p99.9 is 1 ms */
	for (size_t i = 0; i < n; i++)
		v[i] = i % 100 == 0 ? 1000000 : 1000;
	struct hist *h = malloc(sizeof(*h));
	hist_init(h);
	for (size_t i = 0; i < n; i++)
		hist_add(h, v[i]);
	assert_true(relerr(hist_percentile(h, 99), 1000) < 0.01);
	assert_true(relerr(hist_percentile(h, 99.9), 1000000) < 0.01);
	free(h);
	check_against_sorted(v, n);
	free(v);
}

static void test_empty_and_single(void **state)
{
	(void)state;
	struct hist *h = malloc(sizeof(*h));
	hist_init(h);
	assert_int_equal(hist_percentile(h, 50), 0);
	assert_true(hist_mean(h) == 0);
	hist_add(h, 123456789);
	/* one sample: every percentile is that sample exactly (clamped to min/max) */
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		assert_int_equal(hist_percentile(h, pcts[i]), 123456789);
	free(h);
}

/* Per-thread histograms merged equal one histogram of all the samples. */
static void test_merge(void **state)
{
	(void)state;
	enum { T = 4, N = 50000 };
	struct hist *all = malloc(sizeof(*all)), *sum = malloc(sizeof(*sum));
	struct hist *part = malloc((T + 1) * sizeof(*part));
	assert_non_null(all);
	assert_non_null(sum);
	assert_non_null(part);
	hist_init(all);
	hist_init(sum);
	for (int t = 0; t <= T; t++) {
		hist_init(&part[t]);
		if (t == T)
			break;	/* the last part stays empty: it merges as nothing */
		for (int i = 0; i < N; i++) {
			/* each "thread" its own range: min and max come from different parts */
			uint64_t v = (uint64_t)(t + 1) * 1000 + next() % (1000u << (4 * t));
			hist_add(&part[t], v);
			hist_add(all, v);
		}
	}
	for (int t = T; t >= 0; t--)
		hist_merge(sum, &part[t]);
	assert_int_equal(sum->count, (uint64_t)T * N);
	assert_int_equal(sum->count, all->count);
	assert_int_equal(sum->min, all->min);
	assert_int_equal(sum->max, all->max);
	assert_int_equal(sum->min, part[0].min);
	assert_int_equal(sum->max, part[T - 1].max);
	assert_true(fabs(hist_mean(sum) - hist_mean(all)) < 1e-9 * hist_mean(all));
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		assert_int_equal(sum->buckets[b], all->buckets[b]);
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		assert_int_equal(hist_percentile(sum, pcts[i]), hist_percentile(all, pcts[i]));
	free(all);
	free(sum);
	free(part);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_wide_range),
		cmocka_unit_test(test_buckets_contiguous),
		cmocka_unit_test(test_percentiles_uniform),
		cmocka_unit_test(test_percentiles_exponential_and_bimodal),
		cmocka_unit_test(test_empty_and_single),
		cmocka_unit_test(test_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
