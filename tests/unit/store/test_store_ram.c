/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_conformance.h"

#define TIB	(1ull << 40)
#define CHUNK	(64u << 10)

static int ram_factory_open(uint64_t size, void **ctx, struct store **out)
{
	*ctx = NULL;
	return store_ram_open(size, out);
}

static void ram_factory_cleanup(void *ctx)
{
	(void)ctx;
}

static const struct store_factory ram_factory = {
	.open = ram_factory_open,
	.cleanup = ram_factory_cleanup,
	.tracks_allocation = true,
};

/* Resident set size in bytes, from /proc/self/statm. */
static uint64_t rss_bytes(void)
{
	unsigned long pages_total, pages_res;
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &pages_total, &pages_res), 2);
	fclose(f);
	return (uint64_t)pages_res * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void test_tib_costs_little(void **state)
{
	struct store *st;
	uint64_t before, after;
	unsigned char buf[512];

	(void)state;
	before = rss_bytes();
	assert_int_equal(store_ram_open(TIB, &st), 0);
	assert_int_equal(st->size, TIB);
	/* a few writes spread over the whole terabyte, and reads of untouched space */
	for (int i = 0; i < 16; i++) {
		uint64_t off = (TIB / 16) * i + 4096 * i;

		conf_fill(buf, sizeof(buf), i);
		assert_int_equal(store_write(st, buf, sizeof(buf), off, false), 0);
	}
	assert_int_equal(store_read(st, buf, sizeof(buf), TIB - sizeof(buf)), 0);
	assert_int_equal(conf_check_byte(buf, sizeof(buf), 0), -1);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(store_read(st, buf, sizeof(buf), (TIB / 16) * i + 4096 * i), 0);
		assert_int_equal(conf_check(buf, sizeof(buf), i), -1);
	}
	after = rss_bytes();
	assert_true(after < before + (4u << 20));
	assert_int_equal(st->ops->allocated(st), 16 * CHUNK);
	store_close(st);
}

static void test_partial_chunk_dealloc(void **state)
{
	struct store *st;
	unsigned char b = 0x42;

	(void)state;
	assert_int_equal(store_ram_open(1 << 20, &st), 0);
	assert_int_equal(store_write(st, &b, 1, 0, false), 0);
	assert_int_equal(store_write(st, &b, 1, CHUNK - 1, false), 0);
	assert_int_equal(st->ops->allocated(st), CHUNK);
	/* a partial chunk is zeroed, not freed: byte 0 keeps its value */
	assert_int_equal(st->ops->deallocate(st, 1, CHUNK - 1), 0);
	assert_int_equal(st->ops->allocated(st), CHUNK);
	b = 0;
	assert_int_equal(store_read(st, &b, 1, 0), 0);
	assert_int_equal(b, 0x42);
	assert_int_equal(store_read(st, &b, 1, CHUNK - 1), 0);
	assert_int_equal(b, 0);
	/* a whole chunk is freed */
	assert_int_equal(st->ops->deallocate(st, 0, CHUNK), 0);
	assert_int_equal(st->ops->allocated(st), 0);
	store_close(st);
}

/* A store whose last chunk sticks out past its end. */
static void test_odd_size(void **state)
{
	struct store *st;
	unsigned char buf[100];

	(void)state;
	assert_int_equal(store_ram_open(CHUNK + 10, &st), 0);
	conf_fill(buf, 10, 5);
	assert_int_equal(store_write(st, buf, 10, CHUNK, false), 0);
	assert_int_equal(st->ops->allocated(st), CHUNK);
	assert_int_equal(store_write(st, buf, 10, 0, false), 0);
	assert_int_equal(st->ops->allocated(st), CHUNK + 10);	/* never more than the size */
	assert_int_equal(st->ops->deallocate(st, 0, CHUNK), 0);
	assert_int_equal(store_write(st, buf, 11, CHUNK, false), -ERANGE);
	/* deallocating to the end frees the sticking-out chunk */
	assert_int_equal(st->ops->deallocate(st, CHUNK, 10), 0);
	assert_int_equal(st->ops->allocated(st), 0);
	store_close(st);
}

/* The read-ahead hint is only a hint: nothing it is given changes the store. */
static void test_prefetch_is_a_hint(void **state)
{
	struct store *st;
	unsigned char buf[64], got[64];

	(void)state;
	assert_int_equal(store_ram_open(4 * CHUNK, &st), 0);
	assert_non_null(st->ops->prefetch);
	conf_fill(buf, sizeof(buf), 9);
	assert_int_equal(store_write(st, buf, sizeof(buf), CHUNK + 100, false), 0);
	st->ops->prefetch(st, CHUNK + 100, 4096);	/* written */
	st->ops->prefetch(st, 3 * CHUNK, 4096);		/* never written: no chunk */
	st->ops->prefetch(st, 4 * CHUNK, 4096);		/* at the end */
	st->ops->prefetch(st, UINT64_MAX, UINT64_MAX);	/* far past it */
	assert_int_equal(st->ops->allocated(st), CHUNK);
	assert_int_equal(store_read(st, got, sizeof(got), CHUNK + 100), 0);
	assert_memory_equal(got, buf, sizeof(buf));
	assert_int_equal(st->ops->resize(st, CHUNK), 0);
	st->ops->prefetch(st, CHUNK + 100, 4096);	/* cut off by the resize */
	assert_int_equal(st->ops->allocated(st), 0);
	store_close(st);
}

/*
 * I/O runs while another thread resizes. The first 4 chunks always exist,
 * so I/O there must succeed and keep its data; I/O past them may find the
 * store shorter (-ERANGE) but must never fail otherwise or touch a freed
 * chunk (ASan and TSan run this too).
 */
struct resize_race {
	struct store *st;
	atomic_bool stop;
	int id;
	unsigned errors;
};

static void *race_io(void *arg)
{
	struct resize_race *r = arg;
	unsigned char buf[4096], got[4096];

	for (unsigned i = 0; i < 3000; i++) {
		uint64_t low = (uint64_t)r->id * CHUNK + (i % 16) * 4096;
		uint64_t high = (uint64_t)(5 + r->id) * CHUNK + (i % 16) * 4096;
		int ret;

		memset(buf, (int)(i + r->id) & 0xff, sizeof(buf));
		if (store_write(r->st, buf, sizeof(buf), low, false) ||
		    store_read(r->st, got, sizeof(got), low) || memcmp(buf, got, sizeof(got)))
			r->errors++;
		ret = store_read(r->st, got, sizeof(got), high);
		if (ret && ret != -ERANGE)
			r->errors++;
		ret = store_write(r->st, buf, sizeof(buf), high, false);
		if (ret && ret != -ERANGE)
			r->errors++;
		r->st->ops->prefetch(r->st, high, 4096);
	}
	return NULL;
}

static void *race_resize(void *arg)
{
	struct resize_race *r = arg;

	/* across a leaf boundary too, so the top-level table grows and moves */
	for (unsigned i = 0; !atomic_load(&r->stop); i++)
		if (r->st->ops->resize(r->st, i & 1 ? 4 * CHUNK : (512ull << 20)))
			r->errors++;
	return NULL;
}

static void test_io_during_resize(void **state)
{
	struct resize_race io[3], rz = { .stop = false };
	pthread_t tio[3], trz;
	struct store *st = NULL;

	(void)state;
	assert_int_equal(store_ram_open(8 * CHUNK, &st), 0);
	rz.st = st;
	assert_int_equal(pthread_create(&trz, NULL, race_resize, &rz), 0);
	for (int i = 0; i < 3; i++) {
		io[i] = (struct resize_race){ .st = st, .id = i };
		assert_int_equal(pthread_create(&tio[i], NULL, race_io, &io[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pthread_join(tio[i], NULL), 0);
		assert_int_equal(io[i].errors, 0);
	}
	atomic_store(&rz.stop, true);
	assert_int_equal(pthread_join(trz, NULL), 0);
	assert_int_equal(rz.errors, 0);
	store_close(st);
}

static void test_open_limits(void **state)
{
	struct store *st = NULL;

	(void)state;
	assert_int_equal(store_ram_open(UINT64_MAX, &st), -EFBIG);
	assert_null(st);
	assert_int_equal(store_ram_open(1 << 20, NULL), -EINVAL);
	assert_int_equal(store_ram_open(0, &st), 0);
	assert_int_equal(store_read(st, NULL, 0, 0), 0);
	assert_int_equal(st->ops->resize(st, 1 << 20), 0);
	assert_int_equal(st->ops->resize(st, UINT64_MAX), -EFBIG);
	assert_int_equal(st->size, 1 << 20);
	store_close(st);
	store_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tib_costs_little),
		cmocka_unit_test(test_partial_chunk_dealloc),
		cmocka_unit_test(test_odd_size),
		cmocka_unit_test(test_prefetch_is_a_hint),
		cmocka_unit_test(test_io_during_resize),
		cmocka_unit_test(test_open_limits),
	};
	int failed;

	conf_factory = &ram_factory;
	failed = conf_run("store_ram_conformance");
	failed += cmocka_run_group_tests_name("store_ram", tests, NULL, NULL);
	return failed;
}
