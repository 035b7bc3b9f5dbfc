/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_conformance.h"

#define CONF_SIZE	(4u << 20)

const struct store_factory *conf_factory;

void conf_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;

		p[i] = (unsigned char)((x >> 29) ^ (x >> 47) ^ i);
	}
}

long conf_check(const void *buf, size_t len, uint64_t seed)
{
	unsigned char *want = malloc(len ? len : 1);
	long bad = -1;

	assert_non_null(want);
	conf_fill(want, len, seed);
	for (size_t i = 0; i < len; i++) {
		if (((const unsigned char *)buf)[i] != want[i]) {
			bad = (long)i;
			break;
		}
	}
	free(want);
	return bad;
}

long conf_check_byte(const void *buf, size_t len, unsigned char val)
{
	for (size_t i = 0; i < len; i++) {
		if (((const unsigned char *)buf)[i] != val)
			return (long)i;
	}
	return -1;
}

void conf_temp_path(char *buf, size_t len, const char *tag)
{
	int fd;

	snprintf(buf, len, "/var/tmp/ucmd-%s-XXXXXX", tag);
	fd = mkstemp(buf);
	assert_true(fd >= 0);
	close(fd);
	unlink(buf);	/* the store creates it; we only wanted a unique name */
}

int conf_setup(void **state)
{
	struct conf_state *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return -1;
	if (conf_factory->open(CONF_SIZE, &cs->ctx, &cs->st)) {
		free(cs);
		return -1;
	}
	*state = cs;
	return 0;
}

int conf_teardown(void **state)
{
	struct conf_state *cs = *state;

	store_close(cs->st);
	conf_factory->cleanup(cs->ctx);
	free(cs);
	return 0;
}

static struct store *st_of(void **state)
{
	return ((struct conf_state *)*state)->st;
}

/* Write `len` bytes of `val` at off (used to give ranges a known background). */
static void paint(struct store *st, uint64_t off, size_t len, unsigned char val)
{
	unsigned char *buf = malloc(len);

	assert_non_null(buf);
	memset(buf, val, len);
	assert_int_equal(store_write(st, buf, len, off, false), 0);
	free(buf);
}

/* Read [off, off + len) and return a malloc'd copy. */
static unsigned char *slurp(struct store *st, uint64_t off, size_t len)
{
	unsigned char *buf = malloc(len ? len : 1);

	assert_non_null(buf);
	memset(buf, 0x5a, len);
	assert_int_equal(store_read(st, buf, len, off), 0);
	return buf;
}

/* Write through one iovec split, read back through a different one. */
static void roundtrip_split(struct store *st, uint64_t off, const size_t *wl, int wn,
			    const size_t *rl, int rn, uint64_t seed)
{
	struct iovec wiov[16], riov[16];
	size_t total = 0, rtotal = 0;
	unsigned char *src, *dst;

	for (int i = 0; i < wn; i++)
		total += wl[i];
	for (int i = 0; i < rn; i++)
		rtotal += rl[i];
	assert_int_equal(total, rtotal);
	src = malloc(total);
	dst = calloc(1, total);
	assert_non_null(src);
	assert_non_null(dst);
	conf_fill(src, total, seed);
	for (int i = 0, at = 0; i < wn; at += wl[i], i++)
		wiov[i] = (struct iovec){ .iov_base = src + at, .iov_len = wl[i] };
	for (int i = 0, at = 0; i < rn; at += rl[i], i++)
		riov[i] = (struct iovec){ .iov_base = dst + at, .iov_len = rl[i] };
	assert_int_equal(st->ops->writev(st, wiov, wn, off, false), 0);
	assert_int_equal(st->ops->readv(st, riov, rn, off), 0);
	assert_int_equal(conf_check(dst, total, seed), -1);
	free(src);
	free(dst);
}

static void test_roundtrip_iovecs(void **state)
{
	struct store *st = st_of(state);
	/* odd sizes and a zero-length entry, at an unaligned offset */
	static const size_t w1[] = { 1, 4095, 0, 4096, 7, 70000 };
	static const size_t r1[] = { 3000, 6000, 68000, 1199 };
	/* block-sized pieces at an aligned offset (the device store's direct path) */
	static const size_t w2[] = { 4096, 8192, 65536 };
	static const size_t r2[] = { 65536, 4096, 8192 };

	roundtrip_split(st, 12345, w1, 6, r1, 4, 1);
	roundtrip_split(st, 65536 * 3, w2, 3, r2, 3, 2);
	/* straddling many 64 KiB boundaries, ending at the very last byte */
	roundtrip_split(st, CONF_SIZE - 200001, (size_t[]){ 100000, 100001 }, 2,
			(size_t[]){ 200001 }, 1, 3);
}

/* More iovec entries than any store hands to one system call. */
static void test_many_iovecs(void **state)
{
	struct store *st = st_of(state);
	enum { N = 300, SEG = 17 };
	static size_t lens[N];
	struct iovec wiov[N], riov[N];
	unsigned char src[N * SEG], dst[N * SEG];

	conf_fill(src, sizeof(src), 9);
	memset(dst, 0, sizeof(dst));
	for (int i = 0; i < N; i++) {
		lens[i] = SEG;
		wiov[i] = (struct iovec){ .iov_base = src + i * SEG, .iov_len = SEG };
		riov[i] = (struct iovec){ .iov_base = dst + i * SEG, .iov_len = SEG };
	}
	assert_int_equal(st->ops->writev(st, wiov, N, 777, true), 0);
	assert_int_equal(st->ops->readv(st, riov, N, 777), 0);
	assert_memory_equal(src, dst, sizeof(src));
	(void)lens;
}

static void test_unwritten_reads_zero(void **state)
{
	struct store *st = st_of(state);
	unsigned char *buf = slurp(st, 0, CONF_SIZE);

	assert_int_equal(conf_check_byte(buf, CONF_SIZE, 0), -1);
	free(buf);
	paint(st, 100000, 10, 0xee);
	buf = slurp(st, 99990, 30);
	assert_int_equal(conf_check_byte(buf, 10, 0), -1);
	assert_int_equal(conf_check_byte(buf + 10, 10, 0xee), -1);
	assert_int_equal(conf_check_byte(buf + 20, 10, 0), -1);
	free(buf);
}

typedef int (*zero_fn)(struct store *, uint64_t, uint64_t);

/* Zero [off, off + len) inside a painted area: exactly that range changes. */
static void zero_exact(struct store *st, zero_fn fn, uint64_t off, uint64_t len)
{
	const uint64_t lo = off > 70000 ? off - 70000 : 0;
	const uint64_t hi = off + len + 70000 < CONF_SIZE ? off + len + 70000 : CONF_SIZE;
	unsigned char *buf;

	paint(st, lo, hi - lo, 0xaa);
	assert_int_equal(fn(st, off, len), 0);
	buf = slurp(st, lo, hi - lo);
	assert_int_equal(conf_check_byte(buf, off - lo, 0xaa), -1);
	assert_int_equal(conf_check_byte(buf + (off - lo), len, 0), -1);
	assert_int_equal(conf_check_byte(buf + (off + len - lo), hi - off - len, 0xaa), -1);
	free(buf);
}

static void zero_cases(struct store *st, zero_fn fn)
{
	zero_exact(st, fn, 5000, 200000);		/* unaligned both ends, whole chunks inside */
	zero_exact(st, fn, 65536, 131072);		/* aligned to 64 KiB */
	zero_exact(st, fn, 300001, 3);			/* inside one block */
	zero_exact(st, fn, 1 << 20, 4096);		/* exactly one block */
	zero_exact(st, fn, CONF_SIZE - 70001, 70001);	/* up to the end */
	zero_exact(st, fn, 2 << 20, 0);			/* nothing */
}

static int do_dealloc(struct store *st, uint64_t off, uint64_t len)
{
	return st->ops->deallocate(st, off, len);
}

static int do_write_zeroes(struct store *st, uint64_t off, uint64_t len)
{
	return st->ops->write_zeroes(st, off, len);
}

static void test_deallocate_exact(void **state)
{
	zero_cases(st_of(state), do_dealloc);
}

static void test_write_zeroes_exact(void **state)
{
	zero_cases(st_of(state), do_write_zeroes);
}

static void test_allocated_drops(void **state)
{
	struct store *st = st_of(state);
	uint64_t before, after;

	if (!conf_factory->tracks_allocation)
		skip();
	paint(st, 0, 2 << 20, 0x11);
	assert_int_equal(st->ops->flush(st), 0);	/* settle delayed allocation */
	before = st->ops->allocated(st);
	assert_true(before >= (1u << 20));
	assert_true(before <= st->size);
	assert_int_equal(st->ops->deallocate(st, 0, 2 << 20), 0);
	assert_int_equal(st->ops->flush(st), 0);
	after = st->ops->allocated(st);
	assert_true(after < before);
	assert_true(after <= (256u << 10));
}

static void test_out_of_range(void **state)
{
	struct store *st = st_of(state);
	const uint64_t size = st->size;
	unsigned char buf[16] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };

	assert_int_equal(st->ops->readv(st, &iov, 1, size - 8), -ERANGE);
	assert_int_equal(st->ops->writev(st, &iov, 1, size - 8, false), -ERANGE);
	assert_int_equal(st->ops->readv(st, &iov, 1, UINT64_MAX - 4), -ERANGE);
	assert_int_equal(st->ops->writev(st, &iov, 1, UINT64_MAX - 4, true), -ERANGE);
	assert_int_equal(st->ops->deallocate(st, size - 8, 16), -ERANGE);
	assert_int_equal(st->ops->write_zeroes(st, size - 8, 16), -ERANGE);
	assert_int_equal(st->ops->deallocate(st, 16, UINT64_MAX - 8), -ERANGE);
	assert_int_equal(st->ops->write_zeroes(st, UINT64_MAX, 2), -ERANGE);
	assert_int_equal(st->ops->readv(st, NULL, 0, size + 1), -ERANGE);
	/* the last 16 bytes are in range and were not touched by the failures */
	assert_int_equal(st->ops->readv(st, &iov, 1, size - 16), 0);
	assert_int_equal(conf_check_byte(buf, sizeof(buf), 0), -1);
}

static void test_bad_arguments(void **state)
{
	struct store *st = st_of(state);
	struct iovec holes[2] = { { .iov_base = NULL, .iov_len = 0 }, { .iov_base = NULL, .iov_len = 8 } };
	struct iovec huge[2] = { { .iov_base = holes, .iov_len = SIZE_MAX }, { .iov_base = holes, .iov_len = 2 } };

	assert_int_equal(st->ops->readv(st, NULL, 0, 0), 0);
	assert_int_equal(st->ops->writev(st, NULL, 0, 0, true), 0);
	assert_int_equal(st->ops->readv(st, NULL, 0, st->size), 0);
	assert_int_equal(st->ops->readv(st, holes, 1, 100), 0);
	assert_int_equal(st->ops->readv(st, NULL, 1, 0), -EFAULT);
	assert_int_equal(st->ops->writev(st, NULL, 3, 0, false), -EFAULT);
	assert_int_equal(st->ops->readv(st, holes, -1, 0), -EINVAL);
	assert_int_equal(st->ops->readv(st, holes, 2, 0), -EFAULT);
	assert_int_equal(st->ops->writev(st, holes, 2, 0, false), -EFAULT);
	assert_int_equal(st->ops->writev(st, huge, 2, 0, false), -EINVAL);
	assert_int_equal(st->ops->deallocate(st, 0, 0), 0);
	assert_int_equal(st->ops->write_zeroes(st, st->size, 0), 0);
	assert_int_equal(st->ops->flush(st), 0);
}

static void test_resize(void **state)
{
	struct store *st = st_of(state);
	const uint64_t full = st->size, half = full / 2;
	unsigned char *buf;

	paint(st, 0, full, 0x77);
	/* shrink to an odd size: the kept bytes stay, the rest is gone */
	assert_int_equal(st->ops->resize(st, half + 100), 0);
	assert_int_equal(st->size, half + 100);
	buf = malloc(200);
	assert_non_null(buf);
	assert_int_equal(store_read(st, buf, 200, half), -ERANGE);
	free(buf);
	/* grow back: new space reads as zeros */
	assert_int_equal(st->ops->resize(st, full), 0);
	assert_int_equal(st->size, full);
	buf = slurp(st, 0, full);
	assert_int_equal(conf_check_byte(buf, half + 100, 0x77), -1);
	assert_int_equal(conf_check_byte(buf + half + 100, full - half - 100, 0), -1);
	free(buf);
	if (conf_factory->fixed_capacity) {
		assert_int_equal(st->ops->resize(st, 2 * full), -ENOSPC);
		assert_int_equal(st->size, full);
		return;
	}
	/* grow beyond the original size, write at the new end */
	assert_int_equal(st->ops->resize(st, 2 * full), 0);
	paint(st, 2 * full - 10, 10, 0x33);
	buf = slurp(st, full, full);
	assert_int_equal(conf_check_byte(buf, full - 10, 0), -1);
	assert_int_equal(conf_check_byte(buf + full - 10, 10, 0x33), -1);
	free(buf);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Random reads, writes (through misaligned buffers split in two iovecs),
 * deallocations and write-zeroes at arbitrary offsets, checked against a
 * plain byte array. Catches read-modify-write and boundary mistakes.
 */
static void test_random_vs_model(void **state)
{
	struct store *st = st_of(state);
	enum { SPAN = 1 << 20, MAXLEN = 20000 };
	unsigned char *model = calloc(1, SPAN);
	unsigned char *raw = malloc(MAXLEN + 64);
	uint64_t rng = 0x1234567887654321ull;

	assert_non_null(model);
	assert_non_null(raw);
	for (int op = 0; op < 400; op++) {
		uint64_t len = xorshift(&rng) % MAXLEN;
		uint64_t off = xorshift(&rng) % (SPAN - len);
		unsigned char *buf = raw + xorshift(&rng) % 64;	/* any alignment */
		size_t cut = len ? xorshift(&rng) % len : 0;
		struct iovec iov[2] = { { buf, cut }, { buf + cut, len - cut } };

		switch (xorshift(&rng) % 5) {
		case 0:
		case 1:
			conf_fill(buf, len, (uint64_t)op);
			assert_int_equal(st->ops->writev(st, iov, 2, off, op % 7 == 0), 0);
			memcpy(model + off, buf, len);
			break;
		case 2:
			assert_int_equal(st->ops->readv(st, iov, 2, off), 0);
			assert_memory_equal(buf, model + off, len);
			break;
		case 3:
			assert_int_equal(st->ops->deallocate(st, off, len), 0);
			memset(model + off, 0, len);
			break;
		default:
			assert_int_equal(st->ops->write_zeroes(st, off, len), 0);
			memset(model + off, 0, len);
			break;
		}
	}
	free(raw);
	raw = slurp(st, 0, SPAN);
	assert_memory_equal(raw, model, SPAN);
	free(raw);
	free(model);
}

struct disjoint_arg {
	struct store *st;
	int id, nthreads;
	int failures;
};

/* Each thread owns every nthreads-th 3000-byte slot; slots share chunks and blocks. */
static void *disjoint_worker(void *p)
{
	struct disjoint_arg *a = p;
	unsigned char wbuf[3000], rbuf[3000];

	for (int round = 0; round < 4; round++) {
		for (int k = a->id; k < 600; k += a->nthreads) {
			uint64_t off = (uint64_t)k * 3000;
			uint64_t seed = (uint64_t)k * 16 + round;

			conf_fill(wbuf, sizeof(wbuf), seed);
			if (store_write(a->st, wbuf, sizeof(wbuf), off, round == 3) ||
			    store_read(a->st, rbuf, sizeof(rbuf), off) ||
			    conf_check(rbuf, sizeof(rbuf), seed) != -1)
				a->failures++;
		}
	}
	return NULL;
}

static void test_threads_disjoint(void **state)
{
	struct store *st = st_of(state);
	enum { T = 4 };
	struct disjoint_arg args[T];
	pthread_t tids[T];
	unsigned char buf[3000];

	for (int i = 0; i < T; i++) {
		args[i] = (struct disjoint_arg){ .st = st, .id = i, .nthreads = T };
		assert_int_equal(pthread_create(&tids[i], NULL, disjoint_worker, &args[i]), 0);
	}
	for (int i = 0; i < T; i++) {
		assert_int_equal(pthread_join(tids[i], NULL), 0);
		assert_int_equal(args[i].failures, 0);
	}
	for (int k = 0; k < 600; k++) {
		assert_int_equal(store_read(st, buf, sizeof(buf), (uint64_t)k * 3000), 0);
		assert_int_equal(conf_check(buf, sizeof(buf), (uint64_t)k * 16 + 3), -1);
	}
}

int conf_run(const char *group)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip_iovecs, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_many_iovecs, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_unwritten_reads_zero, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_deallocate_exact, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_write_zeroes_exact, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_allocated_drops, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_out_of_range, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_bad_arguments, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_resize, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_random_vs_model, conf_setup, conf_teardown),
		cmocka_unit_test_setup_teardown(test_threads_disjoint, conf_setup, conf_teardown),
	};

	return _cmocka_run_group_tests(group, tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
