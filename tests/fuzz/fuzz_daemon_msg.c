/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: ucmdd's request check, srv_msg_check() (src/server/
 * client.c), on any bytes a client may send as one SOCK_SEQPACKET message.
 * The input is the message, exactly as received (libFuzzer's buffer is
 * allocated to its size, so ASan sees any read past what was sent).
 *
 * Invariants: the answer is 0 or a negative errno; the same message gets
 * the same answer; the message is not written; and a message accepted has
 * a whole header with the magic, a known op, flags 0, a length field equal
 * to the payload actually sent, at most UCMDD_MSG_MAX bytes in all, and a
 * payload at least as long as the structure its op carries (what the
 * request handlers then read).
 *
 * Input: the message. Seeds (corpus/daemon_msg/, gen_seeds.py): one valid
 * request of each op, and a few broken ones.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/proto.h"
#include "server/server.h"

static size_t min_payload(uint16_t op)
{
	switch (op) {
	case UCMDD_HELLO: return sizeof(struct ucmdd_hello);
	case UCMDD_DEVICE_NAMES: return 0;
	case UCMDD_DISK_STAT: return sizeof(struct ucmdd_name);
	case UCMDD_OPEN: return sizeof(struct ucmdd_open);
	case UCMDD_CLOSE: return sizeof(struct ucmdd_fd);
	case UCMDD_IOCTL: return sizeof(struct ucmdd_ioctl);
	case UCMDD_QUEUE_INIT: return sizeof(struct ucmdd_queue_init);
	case UCMDD_QUEUE_EXIT: return sizeof(struct ucmdd_ring_id);
	case UCMDD_REGISTER: return sizeof(struct ucmdd_register);
	case UCMDD_REGION_ADD:
	case UCMDD_REGION_DEL: return sizeof(struct ucmdd_region);
	case UCMDD_ANA_STATE: return sizeof(struct ucmdd_ana_state);
	case UCMDD_ADOPT: return 0;	/* the pidfd travels as SCM_RIGHTS */
	case UCMDD_PORT_STATE: return sizeof(struct ucmdd_port_state);
	case UCMDD_REGS_READ: return sizeof(struct ucmdd_regs_read);
	case UCMDD_CTRL_ANA_STATE: return sizeof(struct ucmdd_ctrl_ana_state);
	case UCMDD_RING_BOUNCE: return sizeof(struct ucmdd_ring_id);
	default: return SIZE_MAX;
	}
}

static void die(const char *what, size_t len, int ret)
{
	fprintf(stderr, "fuzz_daemon_msg: %s (message of %zu bytes, answer %d)\n", what, len, ret);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t before[UCMDD_MSG_MAX + 4096];
	struct ucmdd_hdr h;
	int ret, again;

	if (size <= sizeof(before))
		memcpy(before, data, size);
	ret = srv_msg_check(data, size);
	if (ret > 0 || ret < -4095)
		die("not 0 or -errno", size, ret);
	again = srv_msg_check(data, size);
	if (again != ret)
		die("a second check answers differently", size, again);
	if (size <= sizeof(before) && memcmp(before, data, size))
		die("the message was written", size, ret);
	if (ret)
		return 0;

	/* accepted: everything the handlers rely on holds */
	if (size < sizeof(h))
		die("accepted a message shorter than its header", size, ret);
	if (size > UCMDD_MSG_MAX)
		die("accepted a message over UCMDD_MSG_MAX", size, ret);
	memcpy(&h, data, sizeof(h));
	if (h.magic != UCMDD_MAGIC)
		die("accepted a bad magic", size, ret);
	if (h.op == 0 || h.op >= UCMDD_OP_MAX)
		die("accepted an unknown op", size, ret);
	if (h.flags)
		die("accepted flags that are not 0", size, ret);
	if ((size_t)h.len != size - sizeof(h))
		die("accepted a length field that is not the payload sent", size, ret);
	if ((size_t)h.len < min_payload(h.op))
		die("accepted a payload shorter than its op's structure", size, ret);
	return 0;
}
