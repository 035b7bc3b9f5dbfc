/* SPDX-License-Identifier: MIT */
/* The hook chain: registration order, first denial wins, every hook point. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "core/uring_cmd.h"
#include "ringutil.h"
#include "security/hooks.h"

static char trace[64];

static void mark(char c)
{
	size_t n = strlen(trace);
	if (n + 1 < sizeof(trace)) {
		trace[n] = c;
		trace[n + 1] = 0;
	}
}

static int a_cmd(void *priv, const struct io_uring_cmd *cmd)
{
	(void)priv;
	(void)cmd;
	mark('a');
	return 0;
}

/* b denies cmd_op 1 with -EACCES, and every SQPOLL ring with -EPERM */
static int b_cmd(void *priv, const struct io_uring_cmd *cmd)
{
	(void)priv;
	mark('b');
	return cmd->cmd_op == 1 ? -EACCES : 0;
}

static int b_sqpoll(void *priv, const struct ucmd_cred *cred)
{
	(void)priv;
	(void)cred;
	mark('S');
	return -EPERM;
}

static int c_cmd(void *priv, const struct io_uring_cmd *cmd)
{
	(void)priv;
	(void)cmd;
	mark('c');
	return 0;
}

static int c_override(void *priv, const struct ucmd_cred *cur, const struct ucmd_cred *new_cred)
{
	(void)priv;
	(void)cur;
	(void)new_cred;
	mark('o');
	return -EACCES;
}

static const struct ucmd_security_ops mod_a = { .name = "a", .uring_cmd = a_cmd };
static const struct ucmd_security_ops mod_b = { .name = "b", .uring_cmd = b_cmd,
						.uring_sqpoll = b_sqpoll };
static const struct ucmd_security_ops mod_c = { .name = "c", .uring_cmd = c_cmd,
						.uring_override_creds = c_override };

static unsigned provider_calls;
static int count_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	(void)cmd;
	(void)issue_flags;
	provider_calls++;
	return 0;
}

static const struct ucmd_file_ops count_fops = { .name = "count", .uring_cmd = count_uring_cmd };

static int32_t run_cmd(struct ucmd_ring *ring, int fd, uint32_t op, uint16_t personality)
{
	struct cqe_copy c;
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);

	ucmd_prep_uring_cmd(sqe, (int)op, fd);
	sqe->personality = personality;
	trace[0] = 0;
	return submit_one(ring, &c);
}

static void test_chain(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;

	(void)state;
	assert_int_equal(engine_add_device(e, "count", &count_fops, NULL), 0);
	assert_int_equal(security_register(e, &mod_a, NULL), 0);
	assert_int_equal(security_register(e, &mod_b, NULL), 0);
	assert_int_equal(security_register(e, &mod_c, NULL), 0);
	assert_int_equal(security_register(e, &mod_c, NULL), -EEXIST);
	int fd = ucmd_open(e, "count", O_RDWR);
	ring_setup(e, &ring, 4, 0);

	/* allowed: every module asked, in order, then the provider */
	assert_int_equal(run_cmd(&ring, fd, 2, 0), 0);
	assert_string_equal(trace, "abc");
	assert_int_equal(provider_calls, 1);

	/* denied by b: c is not asked, the provider never sees it */
	assert_int_equal(run_cmd(&ring, fd, 1, 0), -EACCES);
	assert_string_equal(trace, "ab");
	assert_int_equal(provider_calls, 1);

	/* the override-creds hook judges a personality before anything runs */
	int id = ucmd_register_personality(&ring);
	assert_true(id > 0);
	assert_int_equal(run_cmd(&ring, fd, 2, (uint16_t)id), -EACCES);
	assert_string_equal(trace, "o");
	assert_int_equal(ucmd_unregister_personality(&ring, id), 0);
	assert_int_equal(ucmd_unregister_personality(&ring, id), -EINVAL);

	/* b gone: op 1 passes */
	assert_int_equal(security_unregister(e, "b"), 0);
	assert_int_equal(security_unregister(e, "b"), -ENOENT);
	assert_int_equal(run_cmd(&ring, fd, 1, 0), 0);
	assert_string_equal(trace, "ac");
	assert_int_equal(provider_calls, 2);

	ucmd_queue_exit(&ring);
	ucmd_engine_free(e);
}

static void test_sqpoll_hook(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;
	struct io_uring_params p;

	(void)state;
	assert_int_equal(security_register(e, &mod_b, NULL), 0);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	trace[0] = 0;
	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), -EPERM);
	assert_string_equal(trace, "S");
	/* a ring without a polling thread is not the hook's business */
	memset(&p, 0, sizeof(p));
	trace[0] = 0;
	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), 0);
	assert_string_equal(trace, "");
	ucmd_queue_exit(&ring);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_sqpoll_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
