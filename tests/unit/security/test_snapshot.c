/* SPDX-License-Identifier: MIT */
/*
 * The snapshot guarantee. The policy allows reads and denies everything else
 * on the device; a thread rewrites the opcode of every SQE in the
 * application's SQ memory between read and write as fast as it can while the
 * main thread submits reads. The engine copies each SQE once at prep, the
 * policy judges describe() of that copy and the provider executes the same
 * copy, so not one write may reach the device, and the audit trail must
 * record exactly what was executed.
 *
 * The racing thread races with the engine's copy of the SQE on purpose (an
 * application may do that to a kernel too), so this test is not in the
 * 'threaded' suite: TSan would rightly report the race it is made of.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "secutil.h"
#include "security/security.h"

#define N_CMDS 20000
#define ENTRIES 8

struct racer {
	struct ucmd_ring *ring;
	atomic_bool stop;
	unsigned long flips;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	volatile uint8_t *sqes = (volatile uint8_t *)r->ring->sq.sqes;
	uint8_t op = TP_WRITE;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		for (unsigned i = 0; i < ENTRIES; i++)
			sqes[i * 128 + offsetof(struct io_uring_sqe, cmd)] = op;
		op = op == TP_WRITE ? TP_READ : TP_WRITE;
		r->flips++;
	}
	return NULL;
}

static void test_snapshot(void **state)
{
	static const char policy[] =
		"[rule reads]\ndevice = ng9n1\nverb = read\naction = allow\naudit = yes\n"
		"[rule rest]\naction = deny\n";
	const char *ppath = sec_tmpfile(policy);
	const char *apath = sec_tmpfile("");
	struct ucmd_engine *e = ucmd_engine_new();
	struct racer r = { 0 };
	struct ucmd_ring ring;
	pthread_t th;
	char err[256];
	unsigned allowed = 0, denied = 0;
	static char *lines[N_CMDS + 16];
	static struct tp_exec log[N_CMDS];
	int fd;

	(void)state;
	tp_reset();
	tp_register(e, "ng9n1");
	assert_int_equal(ucmd_security_setup(e, ppath, apath, err, sizeof(err)), 0);
	sec_ring(e, &ring, ENTRIES);
	fd = ucmd_open(e, "ng9n1", O_RDWR);
	assert_true(fd >= 0);
	r.ring = &ring;
	assert_int_equal(pthread_create(&th, NULL, race, &r), 0);
	for (unsigned i = 0; i < N_CMDS; i++) {
		tp_prep(&ring, fd, TP_IO, TP_READ, i, 1);
		int res = sec_submit_one(&ring);
		if (res == 0)
			allowed++;
		else if (res == -EACCES)
			denied++;
		else
			fail_msg("command %u: res %d", i, res);
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	print_message("%u allowed, %u denied, %lu flips\n", allowed, denied, r.flips);

	assert_int_equal(tp_nr_writes(), 0);
	assert_int_equal(tp_nr_exec(), allowed);
	unsigned nexec = tp_log(log, N_CMDS);

	ucmd_queue_exit(&ring);
	ucmd_security_teardown(e);
	ucmd_engine_free(e);

	/* one record per command, in order; allowed ones are exactly the executed ones */
	unsigned n = sec_read_lines(apath, lines, N_CMDS + 16), x = 0, nallow = 0, ndeny = 0;
	assert_int_equal(n, N_CMDS);
	for (unsigned i = 0; i < n; i++) {
		json_object *o = json_tokener_parse(lines[i]), *v;
		assert_non_null(o);
		assert_true(json_object_object_get_ex(o, "decision", &v));
		bool allow = !strcmp(json_object_get_string(v), "allow");
		assert_true(json_object_object_get_ex(o, "verb", &v));
		const char *verb = json_object_get_string(v);
		assert_true(json_object_object_get_ex(o, "range", &v));
		json_object *slba;
		assert_true(json_object_object_get_ex(v, "slba", &slba));
		assert_int_equal(json_object_get_uint64(slba), i);
		if (allow) {
			assert_string_equal(verb, "read");
			assert_true(x < nexec);
			assert_int_equal(log[x].opcode, TP_READ);
			assert_int_equal(log[x].slba, i);
			x++;
			nallow++;
		} else {
			/* the snapshot said write: that is what was judged and refused */
			assert_string_equal(verb, "write");
			ndeny++;
		}
		json_object_put(o);
	}
	assert_int_equal(nallow, allowed);
	assert_int_equal(ndeny, denied);
	sec_free_lines(lines, n);
	unlink(ppath);
	unlink(apath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
