/* SPDX-License-Identifier: MIT */
/*
 * srv_msg_check: every request ucmdd accepts is exactly its op's header
 * and payload; anything else -- short, long, truncated, unknown op, flags,
 * pads, unterminated names, unknown open flags -- is refused with the
 * errno its reply carries, before any handler sees it.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "server/ctl.h"

#define HDR sizeof(struct ucmdd_hdr)

static const size_t op_size[UCMDD_OP_MAX] = {
	[UCMDD_HELLO] = sizeof(struct ucmdd_hello),
	[UCMDD_DEVICE_NAMES] = 0,
	[UCMDD_DISK_STAT] = sizeof(struct ucmdd_name),
	[UCMDD_OPEN] = sizeof(struct ucmdd_open),
	[UCMDD_CLOSE] = sizeof(struct ucmdd_fd),
	[UCMDD_IOCTL] = sizeof(struct ucmdd_ioctl),
	[UCMDD_QUEUE_INIT] = sizeof(struct ucmdd_queue_init),
	[UCMDD_QUEUE_EXIT] = sizeof(struct ucmdd_ring_id),
	[UCMDD_REGISTER] = sizeof(struct ucmdd_register),
	[UCMDD_REGION_ADD] = sizeof(struct ucmdd_region),
	[UCMDD_REGION_DEL] = sizeof(struct ucmdd_region),
	[UCMDD_ANA_STATE] = sizeof(struct ucmdd_ana_state),
	[UCMDD_ADOPT] = 0,
	[UCMDD_PORT_STATE] = sizeof(struct ucmdd_port_state),
	[UCMDD_REGS_READ] = sizeof(struct ucmdd_regs_read),
	[UCMDD_CTRL_ANA_STATE] = sizeof(struct ucmdd_ctrl_ana_state),
	[UCMDD_RING_BOUNCE] = sizeof(struct ucmdd_ring_id),
};

static _Alignas(8) unsigned char buf[UCMDD_MSG_MAX + 64];

/* A valid request of op with a payload of len bytes (zeroed, names filled); its length. */
static size_t msg(unsigned op, size_t len)
{
	struct ucmdd_hdr h = { .magic = UCMDD_MAGIC, .op = (uint16_t)op, .seq = 1,
			       .len = (uint32_t)len };

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &h, HDR);
	if (op == UCMDD_OPEN && len >= sizeof(struct ucmdd_open))
		strcpy((char *)buf + HDR + offsetof(struct ucmdd_open, name), "ng0n1");
	if (op == UCMDD_DISK_STAT && len >= sizeof(struct ucmdd_name))
		strcpy((char *)buf + HDR, "nvme0n1");
	return HDR + len;
}

static struct ucmdd_hdr *hdr(void)
{
	return (struct ucmdd_hdr *)(void *)buf;
}

static void test_every_op_exact_size(void **state)
{
	(void)state;
	for (unsigned op = 1; op < UCMDD_OP_MAX; op++) {
		size_t n = msg(op, op_size[op]);

		assert_int_equal(srv_msg_check(buf, n), 0);
		/* one byte more or less, with the header saying so: wrong size for the op */
		n = msg(op, op_size[op] + 1);
		assert_int_equal(srv_msg_check(buf, n), -EINVAL);
		if (op_size[op]) {
			n = msg(op, op_size[op] - 1);
			assert_int_equal(srv_msg_check(buf, n), -EINVAL);
		}
	}
}

static void test_header(void **state)
{
	size_t n;

	(void)state;
	/* shorter than a header, down to nothing */
	for (size_t l = 0; l < HDR; l++) {
		msg(UCMDD_HELLO, sizeof(struct ucmdd_hello));
		assert_int_equal(srv_msg_check(buf, l), -EPROTO);
	}
	n = msg(UCMDD_HELLO, sizeof(struct ucmdd_hello));
	hdr()->magic ^= 1;
	assert_int_equal(srv_msg_check(buf, n), -EPROTO);
	/* the header's len disagrees with what arrived: truncated or padded */
	n = msg(UCMDD_HELLO, sizeof(struct ucmdd_hello));
	assert_int_equal(srv_msg_check(buf, n - 1), -EPROTO);
	assert_int_equal(srv_msg_check(buf, n + 1), -EPROTO);
	hdr()->len = UINT32_MAX;
	assert_int_equal(srv_msg_check(buf, n), -EPROTO);
	/* larger than any message */
	n = msg(UCMDD_HELLO, UCMDD_MSG_MAX - HDR + 1);
	assert_int_equal(srv_msg_check(buf, n), -EMSGSIZE);
	n = msg(UCMDD_HELLO, sizeof(struct ucmdd_hello));
	hdr()->flags = 1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	n = msg(UCMDD_HELLO, sizeof(struct ucmdd_hello));
	hdr()->pad = 0x80000000u;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	n = msg(UCMDD_HELLO, sizeof(struct ucmdd_hello));
	hdr()->result = -1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
}

static void test_ops_out_of_range(void **state)
{
	(void)state;
	for (unsigned op = UCMDD_OP_MAX; op <= 0xffff; op += op < 300 ? 1 : 997) {
		size_t n = msg(op, 0);

		assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	}
	assert_int_equal(srv_msg_check(buf, msg(0, 0)), -EINVAL);
	assert_int_equal(srv_msg_check(buf, msg(0xffff, 0)), -EINVAL);
}

static void test_payload_fields(void **state)
{
	struct ucmdd_open *o = (void *)(buf + HDR);
	size_t n;

	(void)state;
	/* open: access modes and O_CLOEXEC only; name terminated within 64 */
	for (int f = 0; f < 3; f++) {
		n = msg(UCMDD_OPEN, sizeof(*o));
		o->flags = f;
		assert_int_equal(srv_msg_check(buf, n), 0);
		o->flags = f | O_CLOEXEC;
		assert_int_equal(srv_msg_check(buf, n), 0);
	}
	int bad[] = { 3, O_CREAT | O_RDWR, O_TRUNC, O_APPEND, O_NONBLOCK, O_DIRECT, O_PATH, -1,
		      INT32_MIN };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = msg(UCMDD_OPEN, sizeof(*o));
		o->flags = bad[i];
		assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	}
	n = msg(UCMDD_OPEN, sizeof(*o));
	memset(o->name, 'a', sizeof(o->name));
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	o->name[63] = 0;
	assert_int_equal(srv_msg_check(buf, n), 0);
	/* without UCMDD_OPEN_FIXED the number must be 0; with it, in 0..SRV_FD_SPACE-1 */
	o->fd = 1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	o->flags = O_RDWR | UCMDD_OPEN_FIXED;
	assert_int_equal(srv_msg_check(buf, n), 0);
	o->fd = (int32_t)SRV_FD_SPACE - 1;
	assert_int_equal(srv_msg_check(buf, n), 0);
	o->fd = (int32_t)SRV_FD_SPACE;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	o->fd = -1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);

	n = msg(UCMDD_DISK_STAT, sizeof(struct ucmdd_name));
	memset(buf + HDR, 'x', UCMDD_NAME_MAX);
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);

	/* every pad field */
	n = msg(UCMDD_CLOSE, sizeof(struct ucmdd_fd));
	((struct ucmdd_fd *)(void *)(buf + HDR))->pad = 1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	n = msg(UCMDD_IOCTL, sizeof(struct ucmdd_ioctl));
	((struct ucmdd_ioctl *)(void *)(buf + HDR))->pad = 1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	n = msg(UCMDD_QUEUE_INIT, sizeof(struct ucmdd_queue_init));
	/* flags: UCMDD_QI_SQES_AT_OFF, _SUBMIT_COPY and _RELAY are known, any other bit refused */
	((struct ucmdd_queue_init *)(void *)(buf + HDR))->flags = 8;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	((struct ucmdd_queue_init *)(void *)(buf + HDR))->flags = UCMDD_QI_RELAY;
	assert_int_equal(srv_msg_check(buf, n), 0);
	((struct ucmdd_queue_init *)(void *)(buf + HDR))->flags = UCMDD_QI_SQES_AT_OFF;
	assert_int_equal(srv_msg_check(buf, n), 0);
	((struct ucmdd_queue_init *)(void *)(buf + HDR))->flags = UCMDD_QI_SUBMIT_COPY;
	assert_int_equal(srv_msg_check(buf, n), 0);
	n = msg(UCMDD_QUEUE_EXIT, sizeof(struct ucmdd_ring_id));
	((struct ucmdd_ring_id *)(void *)(buf + HDR))->pad = 1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	n = msg(UCMDD_REGISTER, sizeof(struct ucmdd_register));
	((struct ucmdd_register *)(void *)(buf + HDR))->flags = 2;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	/* a ring named by its memfd has no id too */
	((struct ucmdd_register *)(void *)(buf + HDR))->flags = UCMDD_REG_SHARED;
	((struct ucmdd_register *)(void *)(buf + HDR))->ring_id = 1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	((struct ucmdd_register *)(void *)(buf + HDR))->ring_id = 0;
	assert_int_equal(srv_msg_check(buf, n), 0);
	n = msg(UCMDD_ANA_STATE, sizeof(struct ucmdd_ana_state));
	((struct ucmdd_ana_state *)(void *)(buf + HDR))->pad = 1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	n = msg(UCMDD_REGS_READ, sizeof(struct ucmdd_regs_read));
	((struct ucmdd_regs_read *)(void *)(buf + HDR))->pad = 1;
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	/* a controller's name must end within its 64 bytes */
	n = msg(UCMDD_CTRL_ANA_STATE, sizeof(struct ucmdd_ctrl_ana_state));
	memset(buf + HDR, 'a', UCMDD_NAME_MAX);
	assert_int_equal(srv_msg_check(buf, n), -EINVAL);
	buf[HDR + UCMDD_NAME_MAX - 1] = 0;
	assert_int_equal(srv_msg_check(buf, n), 0);
}

static void test_fds_per_op(void **state)
{
	struct ucmdd_register *reg = (void *)(buf + HDR);
	unsigned min, max;

	(void)state;
	for (unsigned op = 1; op < UCMDD_OP_MAX; op++) {
		size_t n = msg(op, op_size[op]);

		srv_msg_fds(buf, n, &min, &max);
		if (op == UCMDD_REGION_ADD || op == UCMDD_ADOPT) {
			assert_int_equal(min, 1);
			assert_int_equal(max, 1);
		} else {
			/* register carries one only for an eventfd (below) */
			assert_int_equal(min, 0);
			assert_int_equal(max, 0);
		}
	}
	msg(UCMDD_REGISTER, sizeof(*reg));
	reg->opcode = IORING_REGISTER_EVENTFD;
	srv_msg_fds(buf, HDR + sizeof(*reg), &min, &max);
	assert_int_equal(min, 1);
	assert_int_equal(max, 1);
	reg->opcode = IORING_REGISTER_EVENTFD_ASYNC;
	srv_msg_fds(buf, HDR + sizeof(*reg), &min, &max);
	assert_int_equal(max, 1);
	reg->opcode = IORING_REGISTER_FILES;
	srv_msg_fds(buf, HDR + sizeof(*reg), &min, &max);
	assert_int_equal(max, 0);
	/* a ring named by its memfd: that first, then the eventfd */
	reg->flags = UCMDD_REG_SHARED;
	reg->opcode = IORING_REGISTER_PROBE;
	srv_msg_fds(buf, HDR + sizeof(*reg), &min, &max);
	assert_int_equal(min, 1);
	assert_int_equal(max, 1);
	reg->opcode = IORING_REGISTER_EVENTFD;
	srv_msg_fds(buf, HDR + sizeof(*reg), &min, &max);
	assert_int_equal(min, 2);
	assert_int_equal(max, 2);
	reg->flags = 0;
	/* a relay ring's QUEUE_INIT carries the shared ring's memfd */
	msg(UCMDD_QUEUE_INIT, sizeof(struct ucmdd_queue_init));
	((struct ucmdd_queue_init *)(void *)(buf + HDR))->flags = UCMDD_QI_RELAY;
	srv_msg_fds(buf, HDR + sizeof(struct ucmdd_queue_init), &min, &max);
	assert_int_equal(min, 1);
	assert_int_equal(max, 1);
}

/* Random bytes never crash it, and whatever passes is a well-formed request. */
static void test_random(void **state)
{
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		size_t n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = msg(1 + x % (UCMDD_OP_MAX + 2), x >> 8 & 0x7f);
		/* flip a few bytes of the header and payload */
		for (int k = 0; k < 3; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[x % (n + 1)] ^= (unsigned char)(x >> 32);
		}
		if (srv_msg_check(buf, n) == 0) {
			assert_int_equal(hdr()->magic, UCMDD_MAGIC);
			assert_true(hdr()->op > 0 && hdr()->op < UCMDD_OP_MAX);
			assert_int_equal(hdr()->len, op_size[hdr()->op]);
			assert_int_equal(n, HDR + hdr()->len);
			assert_int_equal(hdr()->flags | hdr()->pad | (uint32_t)hdr()->result, 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_op_exact_size),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_ops_out_of_range),
		cmocka_unit_test(test_payload_fields),
		cmocka_unit_test(test_fds_per_op),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
