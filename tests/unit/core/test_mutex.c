/* SPDX-License-Identifier: MIT */
/* uring_lock's futex mutex: exclusion under contention, sleepers woken. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <cmocka.h>

#include "core/core.h"
#include "lib/cpu.h"

#define THREADS	4
#define ROUNDS	5000

static struct mutex lock = MUTEX_INIT;
static unsigned long counter;	/* plain on purpose: only the lock protects it */

static void *hammer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		mutex_lock(&lock);
		/* a read-modify-write held open, so a second holder would lose counts */
		unsigned long v = counter;
		for (int k = 0; k < 50; k++)
			cpu_relax();
		__asm__ volatile("" ::: "memory");
		counter = v + 1;
		mutex_unlock(&lock);
	}
	return NULL;
}

static void test_exclusion(void **state)
{
	pthread_t t[THREADS];

	(void)state;
	counter = 0;
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(counter, (unsigned long)THREADS * ROUNDS);
	assert_int_equal(atomic_load(&lock.v), 0);
}

static void *take_and_note(void *arg)
{
	int *got = arg;

	mutex_lock(&lock);
	*got = 1;
	mutex_unlock(&lock);
	return NULL;
}

/* A waiter that outlasts the spin goes to sleep (the word says so) and the
 * unlock wakes it. */
static void test_sleeper_woken(void **state)
{
	struct timespec pause = { 0, 1000 * 1000 };
	pthread_t t;
	int got = 0, waited = 0;

	(void)state;
	mutex_lock(&lock);
	assert_int_equal(pthread_create(&t, NULL, take_and_note, &got), 0);
	while (atomic_load(&lock.v) != 2 && waited++ < 10000)
		nanosleep(&pause, NULL);
	assert_int_equal(atomic_load(&lock.v), 2);	/* marked: a waiter sleeps */
	nanosleep(&pause, NULL);
	assert_int_equal(got, 0);			/* and it is still waiting */
	mutex_unlock(&lock);
	pthread_join(t, NULL);
	assert_int_equal(got, 1);
	assert_int_equal(atomic_load(&lock.v), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exclusion),
		cmocka_unit_test(test_sleeper_woken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
