/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: SQE preparation and submission. The input is a ring
 * configuration byte, then rounds of raw SQEs (random opcodes, flags, fds,
 * personalities, buf_index, links) with raw SQ array entries (bad and
 * duplicate indexes included), each round submitted and reaped on a ring of
 * a private engine whose only device is "null".
 *
 * It must never hang, so it only waits for CQEs that must come: every
 * consumed, valid SQ entry without IOSQE_CQE_SKIP_SUCCESS posts exactly one
 * CQE, and on the null device everything completes (IOSQE_ASYNC ones on the
 * worker). A lost CQE therefore shows up as a libFuzzer timeout.
 *
 * Invariants checked: every res is 0 or a negative errno, except a write's
 * byte count (null reads see EOF; NOP and null uring_cmds give 0); each CQE
 * carries a tag we submitted, and no SQE posts more CQEs than the times it
 * was consumed.
 *
 * Input: [config] then records [n-1 (low 3 bits)] n x ([sq array byte][SQE]).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ucmd/ucmd.h"

#define MAX_ROUNDS	32
#define MAX_TAGS	(MAX_ROUNDS * 8 + 1)	/* tag 0: SQEs never written */
#define NR_IOVS		1024	/* UIO_MAXIOV: the most READV may read */
#define BUF_LEN		4096

enum {
	CFG_SQE64	= 1 << 0,	/* a 64-byte SQE ring instead of SQE128|CQE32 */
	CFG_SUBMIT_ALL	= 1 << 1,
	CFG_CQSIZE	= 1 << 2,	/* CQ as small as the SQ: overflow */
	CFG_NO_FILES	= 1 << 3,
	CFG_NO_BUFS	= 1 << 4,
	CFG_DROP_PERS	= 1 << 5,	/* unregister the personality before use */
	/* bits 6-7: log2 of SQ entries */
};

struct state {
	struct ucmd_ring ring;
	unsigned sqe_size, entries;
	unsigned ntags;
	/* per tag (the user_data we give each SQE written) */
	unsigned consumed[MAX_TAGS], posted[MAX_TAGS];
	unsigned char skip[MAX_TAGS];
	unsigned char opcode[MAX_TAGS];
	/* CQEs still owed: consumed entries without CQE_SKIP_SUCCESS */
	unsigned long owed;
};

static struct iovec iovs[NR_IOVS];
static unsigned char buf[BUF_LEN];

static void die(const char *what, unsigned long a, unsigned long b)
{
	fprintf(stderr, "fuzz_sqe_prep: invariant broken: %s (%lu, %lu)\n", what, a, b);
	abort();
}

/*
 * The engine trusts addresses as the kernel trusts copy_from_user's fault
 * handling: READV/WRITEV read an iovec array at addr. Point plausible ones at
 * our array so a bad address is the input's choice only where the engine
 * can reject it without touching memory (0, or beyond the user range).
 */
static struct __kernel_timespec timeout_ts;

static void sanitize(struct io_uring_sqe *sqe)
{
	/*
	 * A timeout's timespec: a plausible address gets a short one (under
	 * a quarter millisecond, from the input), so that every round ends;
	 * 0 and non-user addresses stay, for prep to refuse.
	 */
	if (sqe->opcode == IORING_OP_TIMEOUT || sqe->opcode == IORING_OP_LINK_TIMEOUT) {
		if (sqe->addr && sqe->addr < (1ull << 47)) {
			timeout_ts.tv_sec = 0;
			timeout_ts.tv_nsec = (long long)(sqe->addr & 0xff) * 1000;
			sqe->addr = (uint64_t)(uintptr_t)&timeout_ts;
		}
		return;
	}
	if (sqe->opcode != IORING_OP_READV && sqe->opcode != IORING_OP_WRITEV)
		return;
	if (sqe->addr && sqe->addr < (1ull << 47))
		sqe->addr = (uint64_t)(uintptr_t)iovs;
}

/* Ops whose res may be positive: bytes written, or how many a cancel took. */
static bool is_write(uint8_t op)
{
	return op == IORING_OP_WRITE || op == IORING_OP_WRITEV || op == IORING_OP_WRITE_FIXED ||
	       op == IORING_OP_ASYNC_CANCEL;
}

static void reap(struct state *s)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	ucmd_for_each_cqe(&s->ring, head, cqe) {
		uint64_t tag = cqe->user_data;
		if (tag >= s->ntags)
			die("CQE for an unknown tag", (unsigned long)tag, s->ntags);
		/* a NOP with IORING_NOP_INJECT_RESULT posts whatever 32 bits it was given */
		if (cqe->res < -4095 && s->opcode[tag] != IORING_OP_NOP)
			die("CQE res is not an errno", (unsigned long)tag,
			    (unsigned long)(long)cqe->res);
		if (cqe->res > 0 && !is_write(s->opcode[tag]) && s->opcode[tag] != IORING_OP_NOP)
			die("positive res for an op that gives 0", s->opcode[tag],
			    (unsigned long)cqe->res);
		if (++s->posted[tag] > s->consumed[tag])
			die("more CQEs than submissions", s->posted[tag], s->consumed[tag]);
		if (!s->skip[tag]) {
			if (!s->owed)
				die("an unowed CQE", (unsigned long)tag, 0);
			s->owed--;
		}
		n++;
	}
	ucmd_cq_advance(&s->ring, n);
}

/* Submit what is queued, account what was consumed, reap what is owed. */
static void submit_round(struct state *s, bool wait)
{
	struct ucmd_sq *sq = &s->ring.sq;
	unsigned old = __atomic_load_n(sq->khead, __ATOMIC_ACQUIRE);
	unsigned shift = ucmd_sqe_shift(&s->ring);
	int ret = wait ? ucmd_submit_and_wait(&s->ring, 0) : ucmd_submit(&s->ring);
	unsigned now = __atomic_load_n(sq->khead, __ATOMIC_ACQUIRE);

	if (ret < 0 && ret != -EBUSY && ret != -EAGAIN)
		die("submit failed", (unsigned long)(long)-ret, 0);
	if ((unsigned)(ret > 0 ? ret : 0) > now - old)
		die("submitted more than consumed", (unsigned long)ret, now - old);
	/* The SQEs cannot change during the submission: read them back now. */
	for (unsigned p = old; p != now; p++) {
		unsigned idx = sq->array[p & sq->ring_mask];
		if (idx >= s->entries)
			continue;	/* dropped: no CQE */
		const struct io_uring_sqe *sqe = &sq->sqes[idx << shift];
		uint64_t tag = sqe->user_data;
		if (tag >= s->ntags)
			die("SQE with a tag we never gave", (unsigned long)tag, s->ntags);
		s->consumed[tag]++;
		if (!s->skip[tag])
			s->owed++;
	}
	reap(s);
	while (s->owed) {
		struct io_uring_cqe *cqe;
		ret = ucmd_wait_cqe(&s->ring, &cqe);
		if (ret)
			die("wait_cqe failed", (unsigned long)(long)-ret, s->owed);
		reap(s);
	}
}

static int setup(struct ucmd_engine *e, struct state *s, uint8_t cfg)
{
	struct io_uring_params p;
	int fd, ret;

	memset(&p, 0, sizeof(p));
	if (!(cfg & CFG_SQE64))
		p.flags |= IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	if (cfg & CFG_SUBMIT_ALL)
		p.flags |= IORING_SETUP_SUBMIT_ALL;
	s->entries = 1u << (cfg >> 6);
	if (cfg & CFG_CQSIZE) {
		p.flags |= IORING_SETUP_CQSIZE;
		p.cq_entries = s->entries;
	}
	ret = ucmd_queue_init_engine(e, s->entries, &s->ring, &p);
	if (ret)
		return ret;
	s->entries = p.sq_entries;
	s->sqe_size = (unsigned)sizeof(struct io_uring_sqe) << ucmd_sqe_shift(&s->ring);
	/* fd 0 on the engine: "null"; fixed slot 1 is sparse. */
	fd = ucmd_open(e, "null", O_RDWR);
	if (fd < 0)
		return fd;
	if (!(cfg & CFG_NO_FILES)) {
		int files[2] = { fd, -1 };
		if ((ret = ucmd_register_files(&s->ring, files, 2)))
			return ret;
	}
	if (!(cfg & CFG_NO_BUFS)) {
		struct iovec v = { buf, sizeof(buf) };
		if ((ret = ucmd_register_buffers(&s->ring, &v, 1)))
			return ret;
	}
	ret = ucmd_register_personality(&s->ring);
	if (ret < 0)
		return ret;
	if ((cfg & CFG_DROP_PERS) && (ret = ucmd_unregister_personality(&s->ring, ret)))
		return ret;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state s;
	struct ucmd_engine *e;
	size_t off = 1;

	if (size < 1)
		return 0;
	memset(&s, 0, sizeof(s));
	/* Unwritten SQEs are zero: a NOP with user_data 0, so tag 0 is theirs. */
	s.ntags = 1;
	/* READV/WRITEV contents come from the input, tiled; null never reads them. */
	for (size_t i = 0; i < sizeof(iovs); i++)
		((unsigned char *)iovs)[i] = data[i % size];
	e = ucmd_engine_new();
	if (!e)
		return 0;
	if (setup(e, &s, data[0]))
		goto out;
	for (unsigned round = 0; round < MAX_ROUNDS && off < size; round++) {
		uint8_t hdr = data[off++];
		unsigned n = (hdr & 7) + 1;
		for (unsigned i = 0; i < n && off < size; i++) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&s.ring);
			unsigned slot, chunk;
			uint8_t a = data[off++];
			if (!sqe)
				break;	/* left from a stopped submission: next round */
			slot = (s.ring.sq.sqe_tail - 1) & s.ring.sq.ring_mask;
			/* mostly valid indexes, sometimes out of range ones */
			s.ring.sq.array[slot] = a >= 0xf0 ? s.entries + (a & 0xf) : a % s.entries;
			memset(sqe, 0, s.sqe_size);
			chunk = size - off < s.sqe_size ? (unsigned)(size - off) : s.sqe_size;
			memcpy(sqe, data + off, chunk);
			off += chunk;
			sanitize(sqe);
			s.skip[s.ntags] = !!(sqe->flags & IOSQE_CQE_SKIP_SUCCESS);
			s.opcode[s.ntags] = sqe->opcode;
			sqe->user_data = s.ntags++;
		}
		submit_round(&s, hdr & 8);
	}
	/* Anything still queued goes too, so every path ends reaped. */
	submit_round(&s, true);
out:
	ucmd_queue_exit(&s.ring);
	ucmd_engine_free(e);
	return 0;
}
