/* SPDX-License-Identifier: MIT */
/*
 * Behaviour every store must show, written once and run by each store's test
 * binary against its own factory.
 */
#ifndef UCMD_TEST_STORE_CONFORMANCE_H
#define UCMD_TEST_STORE_CONFORMANCE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/store.h"

struct store_factory {
	/* Open a fresh, empty store of `size` bytes; *ctx is handed to cleanup. */
	int (*open)(uint64_t size, void **ctx, struct store **out);
	void (*cleanup)(void *ctx);
	/* allocated() tracks writes and deallocation (false: reports the size) */
	bool tracks_allocation;
	/* a block device: cannot grow past the size it was opened with */
	bool fixed_capacity;
};

/* Set by each test binary before running the conformance group. */
extern const struct store_factory *conf_factory;

struct conf_state {
	struct store *st;
	void *ctx;
};

/* Deterministic bytes that differ per seed and per position. */
void conf_fill(void *buf, size_t len, uint64_t seed);
/* Index of the first byte that differs from conf_fill(seed), or -1. */
long conf_check(const void *buf, size_t len, uint64_t seed);
/* Index of the first byte that is not `val`, or -1. */
long conf_check_byte(const void *buf, size_t len, unsigned char val);

/* Run the conformance group; returns the number of failed tests. */
int conf_run(const char *group);

/* Opens a 4 MiB store from conf_factory into a struct conf_state. */
int conf_setup(void **state);
int conf_teardown(void **state);

/* A temporary path under /var/tmp (which is on disk, unlike /tmp on some hosts). */
void conf_temp_path(char *buf, size_t len, const char *tag);

#endif /* UCMD_TEST_STORE_CONFORMANCE_H */
