/* SPDX-License-Identifier: MIT */
/*
 * A log-linear latency histogram (HDR-style): values below 2^HIST_SUB_BITS
 * are counted exactly; above, every power-of-two range [2^k, 2^(k+1)) is
 * cut into 2^HIST_SUB_BITS equal buckets. A bucket's width is then at most
 * 1/128 of its lower bound, and reporting its midpoint is within 1/256
 * (0.4%) of any value in it, over the whole uint64_t range. Recording is
 * one clz and one increment; per-thread histograms merge by addition.
 */
#ifndef UCMD_BENCH_HIST_H
#define UCMD_BENCH_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS	7
#define HIST_SUB	(1u << HIST_SUB_BITS)
/* octaves 2^7 .. 2^63 each have HIST_SUB buckets, plus the exact [0, 128) */
#define HIST_BUCKETS	((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t min, max;
	uint64_t sum;		/* ns: 2^64 ns is 584 years of summed latency */
	uint64_t buckets[HIST_BUCKETS];
};

void hist_init(struct hist *h);
unsigned hist_index(uint64_t v);
/* Smallest and largest value that land in bucket idx, and what we report. */
uint64_t hist_bucket_low(unsigned idx);
uint64_t hist_bucket_high(unsigned idx);
uint64_t hist_bucket_value(unsigned idx);

static inline void hist_add_n(struct hist *h, uint64_t v, uint64_t n)
{
	if (!n)
		return;
	h->buckets[hist_index(v)] += n;
	if (!h->count || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count += n;
	h->sum += v * n;
}

static inline void hist_add(struct hist *h, uint64_t v)
{
	hist_add_n(h, v, 1);
}

void hist_merge(struct hist *dst, const struct hist *src);
double hist_mean(const struct hist *h);
/*
 * The p-th percentile (0 < p <= 100): the value at rank ceil(p/100 * count)
 * in sorted order, as its bucket reports it, clamped to [min, max]. 0 when
 * the histogram is empty.
 */
uint64_t hist_percentile(const struct hist *h, double p);

#endif
