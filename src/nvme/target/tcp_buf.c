// SPDX-License-Identifier: MIT
/*
 * The data buffers of a connection's commands. Each slot keeps the buffer
 * of its last command (within NVMET_TCP_POOL_BUF, and NVMET_TCP_POOL_MEM
 * for the connection) for the next one it serves, so that a connection at
 * a steady load allocates nothing per command; only the receive thread
 * touches them.
 *
 * No byte the host has no right to may leave in a reused buffer. A buffer
 * is zeroed when it is allocated, so a kept one holds zeros or bytes of
 * this connection's own commands; the rule that keeps it so: a command's
 * buffer is zeroed before it runs, except for an I/O queue's Read, which
 * overwrites the blocks it reads (the stores read missing bytes as zeros)
 * and whose data is sent to the host whole on success. A Read that fails
 * (its data not sent) zeroes what it may have filled before its buffer is
 * kept, and the bytes past the blocks a Read names (a data block longer
 * than NLB blocks of at most 4 KiB) are zeroed before it runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvme/target/tcp.h"

#define NVM_OPC_READ	0x02
#define BUF_ALIGN	4096u

/* How many leading bytes of s's buffer the command surely overwrites on success. */
static uint32_t overwritten(const struct nvmet_tcp_conn *c, const struct nvmet_tcp_slot *s)
{
	uint64_t blocks;

	if (c->qid == 0 || s->h2c || s->sqe.opcode != NVM_OPC_READ)
		return 0;
	/*
	 * NLB + 1 blocks; the target does not know their size, 4 KiB bounds
	 * the formats ucmd's controllers offer without metadata in the block
	 */
	blocks = (uint64_t)(le32toh(s->sqe.cdw12) & 0xffff) + 1;
	return blocks * 4096 < s->len ? (uint32_t)(blocks * 4096) : s->len;
}

int nvmet_tcp_buf_get(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s)
{
	uint32_t keep = 0, cap = (s->len + BUF_ALIGN - 1) & ~(BUF_ALIGN - 1);
	uint8_t *b;

	if (s->pool && s->pool_cap >= s->len) {
		b = s->pool;
	} else {
		if (posix_memalign((void **)&b, BUF_ALIGN, cap))
			return -ENOMEM;
		/* fresh memory may hold what another connection freed */
		memset(b, 0, cap);
		if (cap <= NVMET_TCP_POOL_BUF &&
		    c->pool_bytes - s->pool_cap + cap <= NVMET_TCP_POOL_MEM) {
			free(s->pool);
			c->pool_bytes = c->pool_bytes - s->pool_cap + cap;
			s->pool = b;
			s->pool_cap = cap;
		}
		s->buf = b;
		s->unsent = !s->h2c;
		return 0;
	}
	if (!s->h2c) {
		keep = overwritten(c, s);
		memset(b + keep, 0, s->len - keep);
	}
	s->buf = b;
	s->unsent = !s->h2c;
	return 0;
}

void nvmet_tcp_buf_put(struct nvmet_tcp_slot *s)
{
	if (!s->buf || s->icd) {
		s->buf = NULL;
		return;
	}
	if (s->buf != s->pool)
		free(s->buf);
	else if (s->unsent)
		memset(s->buf, 0, s->len);
	s->buf = NULL;
	s->unsent = false;
}

void nvmet_tcp_buf_drain(struct nvmet_tcp_conn *c)
{
	for (unsigned i = 0; i < NVMET_TCP_QUEUE_SIZE; i++) {
		struct nvmet_tcp_slot *s = &c->slots[i];

		if (s->buf && !s->icd && s->buf != s->pool)
			free(s->buf);
		s->buf = NULL;
		free(s->pool);
		s->pool = NULL;
		s->pool_cap = 0;
	}
	c->pool_bytes = 0;
}
