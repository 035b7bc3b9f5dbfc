/* SPDX-License-Identifier: MIT */
/*
 * A client's shared regions (src/server/mem.c) looked up without their
 * lock: a lookup never waits for an add or a delete (which hold the lock
 * across mmap), and lookups racing adds and deletes on other threads only
 * ever see whole entries whose memory is mapped (run under TSan in the
 * threaded suite, under ASan in the unit suite).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "srv_fixture.h"

#define RPAGE 4096u

static int setup(void **state)
{
	struct sfx *s = calloc(1, sizeof(*s));

	sfx_setup(s, NULL);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct sfx *s = *state;

	sfx_teardown(s);
	free(s);
	return 0;
}

/* A sealed memfd of one page, filled with fill. */
static int memfd_page(unsigned char fill)
{
	int fd = memfd_create("region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	char *p;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, RPAGE), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	p = mmap(NULL, RPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memset(p, fill, RPAGE);
	munmap(p, RPAGE);
	return fd;
}

/* Such a page, mapped here (the client's address), and its memfd in *fdp. */
static char *region_page(int *fdp, unsigned char fill)
{
	char *p;

	*fdp = memfd_page(fill);
	p = mmap(NULL, RPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, *fdp, 0);
	assert_true(p != MAP_FAILED);
	return p;
}

struct looker {
	struct srv_client *c;
	uint64_t caddr;
	void *got;
};

static void *look_once(void *arg)
{
	struct looker *l = arg;

	l->got = srv_region_lookup(l->c, l->caddr + 8, 16);
	return NULL;
}

/*
 * An add or delete holds region_lock (across an mmap, for an add); a ring
 * worker's lookup meanwhile does not wait for it. The deadline only ends
 * the test when a lookup blocks (the old lookup took the lock: it never
 * returned while the lock was held).
 */
static void test_lookup_never_waits(void **state)
{
	struct sfx *s = *state;
	int fd;
	char *p = region_page(&fd, 0x33);
	struct looker l = { .c = &s->c, .caddr = (uint64_t)(uintptr_t)p };
	struct timespec until;
	pthread_t th;

	assert_int_equal(srv_region_add(&s->c, fd, l.caddr, RPAGE), 0);
	close(fd);
	pthread_mutex_lock(&s->c.region_lock);
	assert_int_equal(pthread_create(&th, NULL, look_once, &l), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 30;
	assert_int_equal(pthread_timedjoin_np(th, NULL, &until), 0);
	pthread_mutex_unlock(&s->c.region_lock);
	/* the daemon's own mapping of the same memfd */
	assert_non_null(l.got);
	assert_ptr_not_equal(l.got, p + 8);
	assert_int_equal(*(unsigned char *)l.got, 0x33);
	munmap(p, RPAGE);
}

#define RACE_REGIONS 48u
#define RACE_ROUNDS 2000u

struct racer {
	struct srv_client *c;
	uint64_t caddr[RACE_REGIONS];
	int stop;
	unsigned long seen, missed;
};

/*
 * Looks up every region the main thread adds or deletes meanwhile: what it
 * finds must be the region's own bytes (region i holds i + 1), read
 * through the daemon's mapping.
 */
static void *race_lookups(void *arg)
{
	struct racer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		for (unsigned i = 0; i < RACE_REGIONS; i++) {
			uint64_t a = __atomic_load_n(&r->caddr[i], __ATOMIC_ACQUIRE);
			const unsigned char *got;

			if (!a)
				continue;
			got = srv_region_lookup(r->c, a + RPAGE - 64, 64);
			if (!got) {
				__atomic_fetch_add(&r->missed, 1, __ATOMIC_RELAXED);
				continue;
			}
			assert_int_equal(got[0], i + 1);
			assert_int_equal(got[63], i + 1);
			__atomic_fetch_add(&r->seen, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void test_lookups_race_add_del(void **state)
{
	struct sfx *s = *state;
	struct racer r = { .c = &s->c };
	char *pages[RACE_REGIONS];
	pthread_t th;

	/* addresses known first: the reader may look before each is added */
	for (unsigned i = 0; i < RACE_REGIONS; i++) {
		int fd;

		pages[i] = region_page(&fd, (unsigned char)(i + 1));
		close(fd);
	}
	assert_int_equal(pthread_create(&th, NULL, race_lookups, &r), 0);
	for (unsigned i = 0; i < RACE_REGIONS; i++) {
		uint64_t a = (uint64_t)(uintptr_t)pages[i];
		/* the daemon maps a second memfd of the same bytes: the client's is pages[i] */
		int fd = memfd_page((unsigned char)(i + 1));

		__atomic_store_n(&r.caddr[i], a, __ATOMIC_RELEASE);
		assert_int_equal(srv_region_add(&s->c, fd, a, RPAGE), 0);
		close(fd);
		/* deleted at once, half of them: the reader races the retirement too */
		if (i % 2)
			assert_int_equal(srv_region_del(&s->c, a), 0);
	}
	/* the reader keeps looking while the table stands still */
	for (unsigned k = 0; k < RACE_ROUNDS && !__atomic_load_n(&r.seen, __ATOMIC_RELAXED); k++)
		sched_yield();
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	/* a deleted region is not found again; a kept one is */
	for (unsigned i = 0; i < RACE_REGIONS; i++) {
		const unsigned char *got = srv_region_lookup(&s->c, r.caddr[i], 1);

		if (i % 2)
			assert_null(got);
		else
			assert_true(got && *got == i + 1);
		munmap(pages[i], RPAGE);
	}
	assert_int_equal(s->c.nr_regions, RACE_REGIONS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lookup_never_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookups_race_add_del, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
