/* SPDX-License-Identifier: MIT */
/* bench_compare's peers that must not see ucmd's headers (kernel_read.c). */
#ifndef BENCH_COMPARE_H
#define BENCH_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "null_bench.h"

struct kread;
/* A tmpfs file of size bytes, filled, and a ring of qd entries reading it. */
struct kread *kread_new(uint64_t size, unsigned qd);
/* 4 KiB random reads, qd in flight, batch per submit and reap; for seconds or ops. */
int64_t kread_run(struct kread *k, unsigned batch, double seconds, uint64_t ops,
		  double *elapsed);
void kread_free(struct kread *k);

#endif
