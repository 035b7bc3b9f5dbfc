/* SPDX-License-Identifier: MIT */
/*
 * copy_model: why an inline controller cannot reach the memcpy bound. One
 * core alternates a stand-in for the I/O stack's work (a loop over a 24 KiB
 * working set, about the per-read cost of ucmd's stack) with the 4 KiB copy
 * from a random offset of a 128 MiB buffer that bench_compare's rr-memcpy
 * makes. It prints ns per op for each way of ordering the two, side by side
 * in one run (best of rounds): whether a read hint, back-to-back copies or
 * prefetching the next copy buys any overlap, or the costs simply add.
 *
 *   copy_model [WORK]     WORK: iterations of the stand-in (default 160)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SRC_SIZE	(128ull << 20)
#define BLK		4096u
#define DEPTH		32u	/* destination buffers, as rr's queue depth */
#define BATCH		8u	/* commands per doorbell, as rr's batch */
#define WS		24576u
#define OPS		200000u
#define ROUNDS		7u

static uint8_t *src, *dst, *ws;
static uint64_t rng = 0x5eed;
static unsigned work = 160;
static volatile uint64_t sink;

static uint64_t xrnd(void)
{
	uint64_t x = rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The stand-in for the stack: dependent loads and stores over a small set. */
static void stack_work(void)
{
	uint64_t a = sink;

	for (unsigned i = 0; i < work; i++) {
		a = a * 31 + ws[(i * 64) % WS];
		ws[(i * 64 + 32) % WS] = (uint8_t)a;
	}
	sink = a;
}

static void copy(unsigned slot, uint64_t off)
{
	memcpy(dst + (slot % DEPTH) * BLK, src + off, BLK);
}

enum mode { COPY_ONLY, WORK_ONLY, INTERLEAVED, HINTED, BACK_TO_BACK, NEXT_PREFETCHED, NR_MODES };

static const char *const names[NR_MODES] = {
	[COPY_ONLY] = "copy only (the bound)",
	[WORK_ONLY] = "stack work only",
	[INTERLEAVED] = "work, copy, work, copy ...",
	[HINTED] = "first line of each hinted, then interleaved (ucmd today)",
	[BACK_TO_BACK] = "hinted, all work, then all copies back to back",
	[NEXT_PREFETCHED] = "hinted, interleaved, next copy's 4 KiB prefetched",
};

static void batch(enum mode m, unsigned n0)
{
	uint64_t off[BATCH];

	for (unsigned i = 0; i < BATCH; i++)
		off[i] = (xrnd() % (SRC_SIZE / BLK)) * BLK;
	if (m == HINTED || m == BACK_TO_BACK || m == NEXT_PREFETCHED)
		for (unsigned i = 0; i < BATCH; i++)
			__builtin_prefetch(src + off[i]);
	for (unsigned i = 0; i < BATCH; i++) {
		if (m != COPY_ONLY)
			stack_work();
		if (m == NEXT_PREFETCHED && i + 1 < BATCH)
			for (unsigned l = 0; l < BLK; l += 64)
				__builtin_prefetch(src + off[i + 1] + l);
		if (m != WORK_ONLY && m != BACK_TO_BACK)
			copy(n0 + i, off[i]);
	}
	if (m == BACK_TO_BACK)
		for (unsigned i = 0; i < BATCH; i++)
			copy(n0 + i, off[i]);
	__asm__ volatile("" : : "r"(dst) : "memory");
}

int main(int argc, char **argv)
{
	double best[NR_MODES];

	if (argc > 1 && (work = (unsigned)strtoul(argv[1], NULL, 0)) == 0) {
		fprintf(stderr, "usage: copy_model [WORK]\n");
		return 2;
	}
	src = aligned_alloc(4096, SRC_SIZE);
	dst = aligned_alloc(4096, DEPTH * BLK);
	ws = aligned_alloc(64, WS);
	if (!src || !dst || !ws) {
		fprintf(stderr, "copy_model: out of memory\n");
		return 1;
	}
	memset(src, 0x5a, SRC_SIZE);
	memset(dst, 0, DEPTH * BLK);
	memset(ws, 1, WS);
	for (unsigned m = 0; m < NR_MODES; m++)
		best[m] = 1e30;
	/* modes alternate round by round, so machine noise hits all */
	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned m = 0; m < NR_MODES; m++) {
			double t0 = now(), t;

			for (unsigned n = 0; n < OPS; n += BATCH)
				batch((enum mode)m, n);
			t = (now() - t0) / OPS * 1e9;
			if (t < best[m])
				best[m] = t;
		}
	printf("copy_model: stand-in work %u, 4 KiB copies from a 128 MiB buffer, batches of %u\n",
	       work, BATCH);
	for (unsigned m = 0; m < NR_MODES; m++)
		printf("  %-58s %6.0f ns/op  bound/this %.2fx\n", names[m], best[m],
		       best[COPY_ONLY] / best[m]);
	printf("  sum of copy only and work only                             %6.0f ns/op\n",
	       best[COPY_ONLY] + best[WORK_ONLY]);
	free(src);
	free(dst);
	free(ws);
	return 0;
}
