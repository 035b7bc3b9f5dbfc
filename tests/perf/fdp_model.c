/* SPDX-License-Identifier: MIT */
/*
 * fdp_model: the FDP media model alone (fdp_media.c), without a
 * controller or data: bench_fdp's workload (a namespace written full in
 * order, then uniformly random 1-block overwrites, handle = LBA % 8, 1 MiB
 * units of 4 KiB blocks, 7% spare, persistently isolated handles), timed
 * by CPU time per host write. The figure of docs/performance.md's table
 * of the model's steps; it shows what the model costs apart from the
 * caches the data copy takes.
 *
 *   fdp_model [BLOCKS, default 65536] [WRITES, default 4000000]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nvme/ctrl/fdp.h"

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

int main(int argc, char **argv)
{
	uint64_t nlba = argc > 1 ? strtoull(argv[1], NULL, 0) : 65536;
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 0) : 4000000, seed = 42;
	struct fdp_media m;
	double t;

	if (!n || fdp_media_init(&m, nlba, 256, 8, 1, 7, true)) {
		fprintf(stderr, "fdp_model: a namespace of 1..%llu blocks, some writes\n",
			UCMD_FDP_MAX_BLOCKS);
		return 1;
	}
	for (uint64_t lba = 0; lba < nlba; lba++)
		fdp_media_write(&m, (uint32_t)(lba % 8), lba, 1);
	m.moved = m.erased = 0;
	t = cpu_now();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t lba = rnd(&seed) % nlba;

		fdp_media_write(&m, (uint32_t)(lba % 8), lba, 1);
	}
	t = cpu_now() - t;
	printf("%llu blocks, %llu random writes: %.1f ns CPU a write, %.2f blocks moved a write "
	       "(WAF %.2f)\n", (unsigned long long)nlba, (unsigned long long)n, t / (double)n * 1e9,
	       (double)m.moved / (double)n, (double)(m.moved + n) / (double)n);
	fdp_media_free(&m);
	return 0;
}
