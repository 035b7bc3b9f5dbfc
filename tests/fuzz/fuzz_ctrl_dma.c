/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the emulated controller's PRP and SGL walker
 * (src/nvme/ctrl/dma.c) fed hostile descriptors directly, without the host
 * driver that normally builds them.
 *
 * Host memory is a 64 KiB arena at bus address ARENA_BUS whose bytes come
 * from the input, so PRP lists and SGL segments in it are the fuzzer's.
 * The DMA interface's map() accepts only windows inside the arena, and
 * returns a fresh heap copy of exactly the window asked for: a walker that
 * reads a PRP list entry or an SGL descriptor past what it mapped is a heap
 * overflow for ASan, not a silent read of neighbouring arena bytes. Every
 * iovec the walker hands back must lie inside one mapped window, and a
 * walk that succeeds must describe exactly the requested length. A data
 * transfer that the short path takes (ctrl_map_prp_short) must get the
 * same status from it as from the general walk, and the same length.
 *
 * Input: 1 byte selector (bit 0: data or metadata pointer; bit 1: which
 * controller, MDTS unlimited or 2^2 pages), 4 bytes transfer length (taken
 * modulo 1 MiB: past the arena on purpose), the 64-byte SQE, then the
 * arena's contents (zero padded).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvme/ctrl/ctrl_int.h"

#define ARENA_BUS	0x10000ull
#define ARENA_SIZE	(64u * 1024)
#define MAX_LEN		(1u << 20)
#define MAX_WINDOWS	(1u << 16)

struct window {
	uint8_t *p;
	uint64_t len;
};

static uint8_t arena[ARENA_SIZE];
static struct window windows[MAX_WINDOWS];
static unsigned nwindows;
static struct ucmd_ctrl *ctrls[2];

static void *arena_map(const struct ucmd_dma *dma, uint64_t addr, uint64_t len)
{
	uint8_t *p;

	(void)dma;
	if (addr < ARENA_BUS || len > ARENA_SIZE || addr - ARENA_BUS > ARENA_SIZE - len)
		return NULL;
	/* the walker maps at most a bounded number of windows per command */
	if (nwindows == MAX_WINDOWS)
		abort();
	p = malloc(len ? len : 1);
	if (!p)
		abort();
	memcpy(p, arena + (addr - ARENA_BUS), len);
	windows[nwindows].p = p;
	windows[nwindows++].len = len;
	return p;
}

static const struct ucmd_dma arena_dma = { .map = arena_map };

static void setup(void)
{
	struct ucmd_ctrl_params p = { .mode = UCMD_CTRL_INLINE };

	if (ctrl_create_dma(&p, &arena_dma, &ctrls[0]))
		abort();
	p.mdts = 2;
	if (ctrl_create_dma(&p, &arena_dma, &ctrls[1]))
		abort();
}

static bool in_window(const struct iovec *iov)
{
	const uint8_t *b = iov->iov_base;

	for (unsigned i = 0; i < nwindows; i++)
		if (b >= windows[i].p && iov->iov_len <= windows[i].len &&
		    (size_t)(b - windows[i].p) <= windows[i].len - iov->iov_len)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct ctrl_req req;
	struct ctrl_iovs v;
	uint32_t len = 0;
	uint64_t sum = 0;
	uint16_t st;
	uint8_t sel;

	if (!ctrls[0])
		setup();
	if (size < 1 + 4 + sizeof(req.cmd))
		return 0;
	sel = in[0];
	memcpy(&len, in + 1, 4);
	len %= MAX_LEN;
	memset(&req, 0, sizeof(req));
	memcpy(&req.cmd, in + 5, sizeof(req.cmd));
	in += 5 + sizeof(req.cmd);
	size -= 5 + sizeof(req.cmd);
	memset(arena, 0, sizeof(arena));
	memcpy(arena, in, size < ARENA_SIZE ? size : ARENA_SIZE);

	struct ucmd_ctrl *c = ctrls[(sel >> 1) & 1];
	ctrl_iovs_init(&v);
	nwindows = 0;
	st = sel & 1 ? ctrl_map_meta(c, &req, len, &v) : ctrl_map_data(c, &req, len, &v);
	if (st) {
		/* a failed walk gives back nothing (ucmd_map_* free the partial list) */
		if (v.iov || v.cnt || v.len)
			abort();
	} else {
		for (int i = 0; i < v.cnt; i++) {
			if (!v.iov[i].iov_len || !in_window(&v.iov[i]))
				abort();
			sum += v.iov[i].iov_len;
		}
		if (sum != len || v.len != len)
			abort();
	}
	ctrl_iovs_free(&v);
	/*
	 * The short path (a transfer PRP1 and PRP2 hold, without a list) must
	 * give the general walk's status and, on success, the same bytes.
	 */
	if (!(sel & 1) && ctrl_prp_short(&req, len)) {
		struct iovec iov[2];
		int cnt;

		if (ctrl_map_prp_short(c, &req, len, iov, &cnt) != st)
			abort();
		sum = 0;
		for (int i = 0; !st && i < cnt; i++) {
			if (!iov[i].iov_len || !in_window(&iov[i]))
				abort();
			sum += iov[i].iov_len;
		}
		if (!st && (sum != len || cnt > 2))
			abort();
	}
	for (unsigned i = 0; i < nwindows; i++)
		free(windows[i].p);
	return 0;
}
