/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "hist.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

unsigned hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned k = 63u - (unsigned)__builtin_clzll(v);	/* k >= HIST_SUB_BITS */
	unsigned shift = k - HIST_SUB_BITS;
	/* v >> shift is in [HIST_SUB, 2 * HIST_SUB): its low bits pick the bucket */
	return (shift + 1) * HIST_SUB + (unsigned)((v >> shift) & (HIST_SUB - 1));
}

uint64_t hist_bucket_low(unsigned idx)
{
	if (idx < HIST_SUB)
		return idx;
	unsigned shift = idx / HIST_SUB - 1;
	return (uint64_t)(HIST_SUB + idx % HIST_SUB) << shift;
}

uint64_t hist_bucket_high(unsigned idx)
{
	if (idx < HIST_SUB)
		return idx;
	unsigned shift = idx / HIST_SUB - 1;
	return hist_bucket_low(idx) + ((1ull << shift) - 1);
}

uint64_t hist_bucket_value(unsigned idx)
{
	uint64_t lo = hist_bucket_low(idx);

	return lo + (hist_bucket_high(idx) - lo) / 2;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	/* rank in 1..count; the epsilon keeps 99.9% of 1000 at rank 999, not 1000 */
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count - 1e-9);
	uint64_t seen = 0;

	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t v = hist_bucket_value(i);
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}
