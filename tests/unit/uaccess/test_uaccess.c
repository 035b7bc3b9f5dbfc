/* SPDX-License-Identifier: MIT */
/*
 * The user memory accessor: both backends (the in-process fault guard and
 * process_vm_readv/writev) copy good memory, report every kind of bad
 * address as not copied without a crash, agree with each other, and the
 * guard leaves every fault that is not its own to the handler before it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "uaccess/uaccess.h"

#define PG 4096u
#define WILD 0xdead0000000ull

/* cmocka sets its own SIGSEGV handler around each test: ucmd's goes in front. */
#define GUARD() assert_int_equal(ucmd_uaccess_init(), 0)

static uint8_t *map(size_t pages, int prot)
{
	uint8_t *m = mmap(NULL, pages * PG, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	return m;
}

static void backends(struct user_mm *remote, const struct user_mm **out)
{
	assert_int_equal(user_mm_init_remote(remote, getpid()), 0);
	out[0] = &user_mm_self;
	out[1] = remote;
}

static void test_good_copies(void **state)
{
	struct user_mm remote;
	const struct user_mm *mm[2];
	uint8_t *src = map(3, PROT_READ | PROT_WRITE), *dst = map(3, PROT_READ | PROT_WRITE);

	(void)state;
	GUARD();
	backends(&remote, mm);
	for (int b = 0; b < 2; b++) {
		for (size_t i = 0; i < 3 * PG; i++)
			src[i] = (uint8_t)(i * 7 + (size_t)b);
		memset(dst, 0, 3 * PG);
		assert_int_equal(mm[b]->ops->copy_to(mm[b], (uintptr_t)dst + 5, src, 3 * PG - 9), 0);
		assert_memory_equal(dst + 5, src, 3 * PG - 9);
		assert_int_equal(dst[4], 0);
		assert_int_equal(dst[3 * PG - 4], 0);
		memset(dst, 0, 3 * PG);
		assert_int_equal(mm[b]->ops->copy_from(mm[b], dst, (uintptr_t)src + 1, PG), 0);
		assert_memory_equal(dst, src + 1, PG);
		assert_int_equal(mm[b]->ops->clear(mm[b], (uintptr_t)src + 100, 2 * PG), 0);
		for (size_t i = 100; i < 100 + 2 * PG; i++)
			assert_int_equal(src[i], 0);
		assert_int_equal(src[99], (uint8_t)(99 * 7 + (size_t)b));
		assert_int_equal(mm[b]->ops->fault_in_readable(mm[b], (uintptr_t)src, 3 * PG), 0);
		memcpy(dst, src, 3 * PG);
		assert_int_equal(mm[b]->ops->fault_in_writeable(mm[b], (uintptr_t)src, 3 * PG), 0);
		assert_memory_equal(dst, src, 3 * PG);	/* probing changed nothing */
		/* nothing to do is not a fault */
		assert_int_equal(mm[b]->ops->copy_from(mm[b], dst, 0, 0), 0);
	}
	user_mm_release(&remote);
	munmap(src, 3 * PG);
	munmap(dst, 3 * PG);
}

static void test_bad_addresses(void **state)
{
	struct user_mm remote;
	const struct user_mm *mm[2];
	uint8_t *none = map(1, PROT_NONE), *ro = map(1, PROT_READ);
	uint8_t *half = map(2, PROT_READ | PROT_WRITE);
	uint8_t local[2 * PG];
	uint64_t bad[] = { 0, 8, WILD, (uintptr_t)none, (uintptr_t)half + PG - 16,
			   UCMD_TASK_SIZE - 8, UINT64_MAX - 8, 0x8000000000000000ull };

	(void)state;
	GUARD();
	assert_int_equal(mprotect(half + PG, PG, PROT_NONE), 0);
	backends(&remote, mm);
	for (int b = 0; b < 2; b++) {
		for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
#ifdef __SANITIZE_ADDRESS__
			/*
			 * Under ASan WILD is ASan's shadow memory, mapped: the
			 * guard refuses it, process_vm_* would reach it.
			 */
			if (b == 1 && bad[i] == WILD)
				continue;
#endif
			assert_int_not_equal(mm[b]->ops->copy_from(mm[b], local, bad[i], 64), 0);
			assert_int_not_equal(mm[b]->ops->copy_to(mm[b], bad[i], local, 64), 0);
			assert_int_not_equal(mm[b]->ops->clear(mm[b], bad[i], 64), 0);
			assert_int_not_equal(mm[b]->ops->fault_in_readable(mm[b], bad[i], 64), 0);
			assert_int_not_equal(mm[b]->ops->fault_in_writeable(mm[b], bad[i], 64), 0);
		}
		/* read-only: readable, not writeable */
		assert_int_equal(mm[b]->ops->copy_from(mm[b], local, (uintptr_t)ro, PG), 0);
		assert_int_not_equal(mm[b]->ops->copy_to(mm[b], (uintptr_t)ro, local, PG), 0);
		assert_int_equal(mm[b]->ops->fault_in_readable(mm[b], (uintptr_t)ro, PG), 0);
		assert_int_not_equal(mm[b]->ops->fault_in_writeable(mm[b], (uintptr_t)ro, PG), 0);
	}
	/* the convenience forms */
	assert_int_equal(copy_from_user(local, (void *)(uintptr_t)WILD, 8), -EFAULT);
	assert_int_equal(copy_to_user(none, local, 8), -EFAULT);
	assert_int_equal(clear_user(ro, 8), -EFAULT);
	assert_int_equal(fault_in_writeable(ro, 8), -EFAULT);
	assert_int_equal(fault_in_readable(none, 1), -EFAULT);
	assert_int_equal(copy_from_user(local, half, 64), 0);
	user_mm_release(&remote);
	munmap(none, PG);
	munmap(ro, PG);
	munmap(half, 2 * PG);
}

/* SIGBUS: a shared mapping past the end of its file. */
static void test_sigbus(void **state)
{
	char path[] = "/tmp/ucmd-uaccess-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *m, local[64];

	(void)state;
	GUARD();
	assert_true(fd >= 0);
	unlink(path);
	m = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(copy_from_user(local, m, sizeof(local)), -EFAULT);
	assert_int_equal(copy_to_user(m, local, sizeof(local)), -EFAULT);
	munmap(m, PG);
	close(fd);
}

/* A fault outside a guarded access still kills, through the previous handler. */
static void test_other_faults_still_crash(void **state)
{
	uint8_t *none = map(1, PROT_NONE), local[8];
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		/* the child's previous handler is the default action, not cmocka's */
		sigaction(SIGSEGV, &dfl, NULL);
		if (ucmd_uaccess_init() || copy_from_user(local, none, 8) != -EFAULT)
			_exit(1);
		*(volatile uint8_t *)none = 1;	/* ucmd's handler must not swallow this */
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	/* SIGSEGV, or SIGABRT when ASan reports it (abort_on_error) */
	assert_true(WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGABRT);
	munmap(none, PG);
}

/* Each thread has its own recovery point. */
static void *faulter(void *arg)
{
	uint8_t *none = arg, good[64] = { 1 }, local[64];

	for (int i = 0; i < 2000; i++) {
		if (copy_from_user(local, none + (i % 64), 8) != -EFAULT)
			return (void *)1;
		if (copy_from_user(local, good, sizeof(good)) || local[0] != 1)
			return (void *)1;
	}
	return NULL;
}

static void test_threads(void **state)
{
	uint8_t *none = map(1, PROT_NONE);
	pthread_t t[4];
	void *ret;

	(void)state;
	GUARD();
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, faulter, none), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	munmap(none, PG);
}

static unsigned long queries(struct user_mm *mm)
{
	return atomic_load(&mm->queries);
}

/*
 * A batch asks a mapping's protection once for all its copies; outside a
 * batch every copy asks; an answer never outlives its batch, so a
 * protection the owner changed between two batches is honoured.
 */
static void test_batch_queries(void **state)
{
	struct user_mm remote;
	/* a: four pages, a hole, b: one page, a mapping of its own */
	uint8_t *a = map(6, PROT_READ | PROT_WRITE), *b = a + 5 * PG;
	uint8_t src[64];
	unsigned long q;

	(void)state;
	assert_int_equal(mprotect(a + 4 * PG, PG, PROT_NONE), 0);
	memset(src, 0x5a, sizeof(src));
	assert_int_equal(user_mm_init_remote(&remote, getpid()), 0);
	if (remote.maps_fd < 0) {
		user_mm_release(&remote);
		skip();	/* Linux before 6.11: no PROCMAP_QUERY, nothing is asked */
	}
	q = queries(&remote);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(user_mm_copy_to(&remote, (uintptr_t)(a + i * PG), src, 64), 0);
	assert_int_equal(queries(&remote) - q, 4);

	q = queries(&remote);
	user_mm_batch_begin();
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(user_mm_copy_to(&remote, (uintptr_t)(a + i * PG), src, 64), 0);
	assert_int_equal(queries(&remote) - q, 1);
	/* another mapping is asked about */
	assert_int_equal(user_mm_copy_to(&remote, (uintptr_t)b, src, 64), 0);
	assert_int_equal(queries(&remote) - q, 2);
	user_mm_batch_end();
	assert_memory_equal(a + 3 * PG, src, 64);

	/* the next batch sees what the owner did meanwhile */
	assert_int_equal(mprotect(b, PG, PROT_READ), 0);
	user_mm_batch_begin();
	assert_int_equal(user_mm_copy_to(&remote, (uintptr_t)b, src, 64), -EFAULT);
	/* nested batches end with the outermost */
	user_mm_batch_begin();
	user_mm_batch_end();
	q = queries(&remote);
	assert_int_equal(user_mm_copy_to(&remote, (uintptr_t)b, src, 64), -EFAULT);
	assert_int_equal(queries(&remote) - q, 0);
	user_mm_batch_end();
	q = queries(&remote);
	assert_int_equal(user_mm_copy_to(&remote, (uintptr_t)b, src, 64), -EFAULT);
	assert_int_equal(queries(&remote) - q, 1);

	user_mm_release(&remote);
	munmap(a, 6 * PG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_copies),
		cmocka_unit_test(test_bad_addresses),
		cmocka_unit_test(test_sigbus),
		cmocka_unit_test(test_other_faults_still_crash),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_batch_queries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
