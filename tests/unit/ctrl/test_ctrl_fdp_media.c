/* SPDX-License-Identifier: MIT */
/*
 * The FDP media model on its own (fdp_media.c), driven with seeded
 * workloads: uniform random overwrites of a full namespace (the bench's),
 * hot and cold data on separate handles, multi-block writes, trims, handle
 * updates, and a model rebuilt from what nsN.fdp keeps. Each workload's
 * outcome (every map entry, stream, unit's write pointer, age, owner, state
 * and valid count, the free list, blocks moved and erased, and every
 * reallocation the model reported) is folded into one fingerprint that
 * must be what the model has always given (the figures were taken from
 * the model before its maps were laid out for the caches): making the
 * model cheaper must not change a figure of log 22h, an event or a
 * persisted map. The model's invariants are checked at the end of each.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvme/ctrl/fdp.h"

struct run {
	uint64_t fp;		/* FNV-1a over everything the model reported */
	uint64_t moved, erased, reallocs;
};

static void mix(struct run *r, uint64_t v)
{
	r->fp = (r->fp ^ v) * 1099511628211ull;
}

static void on_realloc(void *arg, uint16_t owner, uint64_t lba, uint32_t nmoved)
{
	struct run *r = arg;

	mix(r, owner);
	mix(r, lba);
	mix(r, nmoved);
	r->reallocs++;
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* What a later write depends on, and what the logs and nsN.fdp show */
static void mix_state(struct run *r, const struct fdp_media *m)
{
	for (uint64_t i = 0; i < m->nlba; i++)
		mix(r, m->l2p[i]);
	for (uint32_t s = 0; s < m->nstreams; s++)
		mix(r, m->stream[s]);
	for (uint32_t u = 0; u < m->nru; u++) {
		mix(r, m->ru[u].wp);
		mix(r, m->ru[u].sealed);
		mix(r, m->ru[u].owner);
		mix(r, m->ru[u].state);
		mix(r, m->ru[u].valid);
	}
	mix(r, m->clock);
	mix(r, m->nfree);
	mix(r, m->free_head);
	for (uint32_t s = 0; s < m->nstreams / 2; s++)
		mix(r, fdp_media_ruamw(m, s));
}

/* Every mapped block is where its unit says, and each unit counts what it holds */
static void check(const struct fdp_media *m)
{
	uint32_t *valid = calloc(m->nru, sizeof(*valid)), nfree = 0;
	uint64_t live = 0;

	assert_non_null(valid);
	/* the valid bitmap has a bit for each mapped block and no other */
	for (uint64_t w = 0; w < ((uint64_t)m->nru * m->bpr + 63) / 64; w++)
		live += (uint64_t)__builtin_popcountll(m->vmap[w]);
	for (uint64_t lba = 0; lba < m->nlba; lba++) {
		uint32_t p = m->l2p[lba];

		if (!p--)
			continue;
		assert_true(p < m->nru * m->bpr);
		assert_int_equal(m->p2l[p], lba + 1);
		assert_true(p % m->bpr < m->ru[p / m->bpr].wp);
		assert_int_not_equal(m->ru[p / m->bpr].state, FDP_RU_FREE);
		assert_true(m->vmap[p / 64] >> (p % 64) & 1);
		valid[p / m->bpr]++;
		live--;
	}
	assert_int_equal(live, 0);
	for (uint32_t u = 0; u < m->nru; u++) {
		assert_int_equal(valid[u], m->ru[u].valid);
		nfree += m->ru[u].state == FDP_RU_FREE;
	}
	assert_int_equal(nfree, m->nfree);
	free(valid);
}

static void take(struct run *r, struct fdp_media *m)
{
	r->moved += m->moved;
	r->erased += m->erased;
	m->moved = m->erased = 0;
}

static void start(struct run *r, struct fdp_media *m, uint64_t nlba, uint32_t bpr,
		  uint16_t nruh, bool persistent)
{
	memset(r, 0, sizeof(*r));
	r->fp = 1469598103934665603ull;
	assert_int_equal(fdp_media_init(m, nlba, bpr, nruh, 1, 7, persistent), 0);
	m->realloc = on_realloc;
	m->arg = r;
	/* written full in order, as bench_fdp does */
	for (uint64_t lba = 0; lba < nlba; lba++)
		assert_int_equal(fdp_media_write(m, (uint32_t)(lba % nruh), lba, 1), 0);
	take(r, m);
}

static void finish(struct run *r, struct fdp_media *m)
{
	check(m);
	mix_state(r, m);
	mix(r, r->moved);
	mix(r, r->erased);
	print_message("moved %llu erased %llu reallocs %llu fp %016llx\n",
		      (unsigned long long)r->moved, (unsigned long long)r->erased,
		      (unsigned long long)r->reallocs, (unsigned long long)r->fp);
}

/* 4 KiB random overwrites, handle = LBA % handles: bench_fdp's workload */
static void uniform(struct run *r, struct fdp_media *m, uint64_t n, uint64_t seed)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t lba = rnd(&seed) % m->nlba;

		assert_int_equal(fdp_media_write(m, (uint32_t)(lba % m->nruh), lba, 1), 0);
		take(r, m);
	}
}

/*
 * 80% of the writes to 20% of the LBAs on handle 0, the rest elsewhere;
 * some of several blocks, some trims (deallocate), some handle updates.
 */
static void mixed(struct run *r, struct fdp_media *m, uint64_t n, uint64_t seed)
{
	uint64_t hot = m->nlba / 5;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t x = rnd(&seed) % 1000, lba, k;

		if (x < 5) {
			fdp_media_trim(m, rnd(&seed) % m->nlba, 1 + rnd(&seed) % 64);
			continue;
		}
		if (x < 8) {
			mix(r, fdp_media_ruh_update(m, (uint32_t)(rnd(&seed) % m->nruh)));
			continue;
		}
		lba = x < 800 ? rnd(&seed) % hot : hot + rnd(&seed) % (m->nlba - hot);
		k = 1 + rnd(&seed) % 16;
		if (lba + k > m->nlba)
			k = m->nlba - lba;
		assert_int_equal(fdp_media_write(m, x < 800 ? 0 : 1 + (uint32_t)(rnd(&seed) %
							    (m->nruh - 1u)), lba, k), 0);
		take(r, m);
	}
}

static void test_uniform_persistent(void **state)
{
	struct fdp_media m;
	struct run r;

	(void)state;
	start(&r, &m, 16384, 256, 8, true);
	uniform(&r, &m, 200000, 42);
	finish(&r, &m);
	/* the figures (WAF near 5 at 7% spare) and the state every unit is in */
	assert_int_equal(r.moved, 365067);
	assert_int_equal(r.erased, 561408);
	assert_int_equal(r.reallocs, 2193);
	assert_int_equal(r.fp, 0x1d89b570a92070e2ull);
	fdp_media_free(&m);
}

/* Initially isolated handles share one GC destination; units of 48 blocks */
static void test_uniform_shared_gc(void **state)
{
	struct fdp_media m;
	struct run r;

	(void)state;
	start(&r, &m, 12000, 48, 4, false);
	uniform(&r, &m, 150000, 9);
	finish(&r, &m);
	assert_int_equal(r.fp, 0xd81c64d672945c58ull);
	fdp_media_free(&m);
}

/* Units of 100 blocks (not a multiple of 64) and of 3 */
static void test_mixed(void **state)
{
	struct fdp_media m;
	struct run r;

	(void)state;
	start(&r, &m, 20000, 100, 8, true);
	mixed(&r, &m, 60000, 5);
	finish(&r, &m);
	assert_int_equal(r.fp, 0x77e28b016f622b2bull);
	fdp_media_free(&m);
	start(&r, &m, 3000, 3, 3, false);
	mixed(&r, &m, 20000, 6);
	finish(&r, &m);
	assert_int_equal(r.fp, 0x5632e2ab864471bbull);
	fdp_media_free(&m);
}

/*
 * A model rebuilt from what nsN.fdp keeps (the map, the streams, each
 * unit's write pointer, age, owner and state, the clock) goes on exactly
 * as the one it was saved from.
 */
static void test_rebuild(void **state)
{
	struct fdp_media m, n;
	struct run r, r2;

	(void)state;
	start(&r, &m, 10000, 64, 8, true);
	mixed(&r, &m, 30000, 11);
	assert_int_equal(fdp_media_init(&n, m.nlba, m.bpr, m.nruh, m.nrg, 7, m.persistent), 0);
	memcpy(n.l2p, m.l2p, m.nlba * sizeof(*m.l2p));
	memcpy(n.stream, m.stream, m.nstreams * sizeof(*m.stream));
	for (uint32_t u = 0; u < m.nru; u++)
		n.ru[u] = (struct fdp_ru){ .wp = m.ru[u].wp, .sealed = m.ru[u].sealed,
					   .owner = m.ru[u].owner, .state = m.ru[u].state };
	n.clock = m.clock;
	assert_int_equal(fdp_media_rebuild(&n), 0);
	check(&n);
	r2 = r;
	n.realloc = on_realloc;
	n.arg = &r2;
	mixed(&r, &m, 30000, 12);
	mixed(&r2, &n, 30000, 12);
	finish(&r, &m);
	finish(&r2, &n);
	assert_int_equal(r2.fp, r.fp);
	assert_int_equal(r.fp, 0xc0218cafed6331f0ull);
	/* two blocks mapped to one place: refused */
	uint64_t a = 0, b;

	while (!n.l2p[a])
		a++;
	for (b = a + 1; !n.l2p[b]; b++)
		;
	n.l2p[b] = n.l2p[a];
	assert_int_equal(fdp_media_rebuild(&n), -EINVAL);
	fdp_media_free(&m);
	fdp_media_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uniform_persistent),
		cmocka_unit_test(test_uniform_shared_gc),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_rebuild),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
