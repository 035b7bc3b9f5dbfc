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
 * With selector bit 2 the command is windowed (ctrl_set_dma_window, the
 * host's IOMMU): four (offset, length) pairs of 16-bit numbers after the SQE
 * are its two data segments, its list and its metadata in the arena, and
 * every map() the walker makes must then lie in the pages of one of them,
 * checked here with page arithmetic of its own.
 *
 * Input: 1 byte selector (bit 0: data or metadata pointer; bit 1: which
 * controller, MDTS unlimited or 2^2 pages; bit 2: windowed), 4 bytes
 * transfer length (taken modulo 1 MiB: past the arena on purpose), the
 * 64-byte SQE, the window's 16 bytes when windowed, then the arena's
 * contents (zero padded).
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

/* the window: [lo, hi) bus ranges, pages whole */
static bool win_on;
static struct iovec win_seg[2];
static struct ucmd_dma_window win;
static uint64_t win_lo[4], win_hi[4];

static bool fz_window(void *arg, uint16_t sqid, uint16_t cid, struct ucmd_dma_window *out)
{
	(void)arg;
	(void)sqid;
	(void)cid;
	*out = win;
	return win_on;
}

static bool in_window_pages(uint64_t addr, uint64_t len)
{
	for (unsigned i = 0; i < 4; i++)
		if (win_hi[i] > win_lo[i] && addr >= win_lo[i] && addr + len <= win_hi[i] &&
		    addr + len >= addr)
			return true;
	return false;
}

static void *arena_map(const struct ucmd_dma *dma, uint64_t addr, uint64_t len)
{
	uint8_t *p;

	(void)dma;
	if (addr < ARENA_BUS || len > ARENA_SIZE || addr - ARENA_BUS > ARENA_SIZE - len)
		return NULL;
	/* a windowed command's maps are checked before they reach map() */
	if (win_on && !in_window_pages(addr, len))
		abort();
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
	ctrl_set_dma_window(ctrls[0], fz_window, NULL);
	ctrl_set_dma_window(ctrls[1], fz_window, NULL);
}

static void window_from(const uint8_t *w)
{
	uint64_t r[4][2];

	for (unsigned i = 0; i < 4; i++) {
		uint16_t off, len;

		memcpy(&off, w + 4 * i, 2);
		memcpy(&len, w + 4 * i + 2, 2);
		r[i][0] = ARENA_BUS + off;
		r[i][1] = len;
		/* the pages of [off, off + len): empty ranges give none */
		win_lo[i] = len ? r[i][0] & ~4095ull : 0;
		win_hi[i] = len ? (r[i][0] + len + 4095) & ~4095ull : 0;
	}
	win_seg[0] = (struct iovec){ (void *)(uintptr_t)r[0][0], r[0][1] };
	win_seg[1] = (struct iovec){ (void *)(uintptr_t)r[1][0], r[1][1] };
	win = (struct ucmd_dma_window){ .seg = win_seg, .nr_seg = 2, .list = r[2][0],
					.list_len = r[2][1], .meta = r[3][0], .meta_len = r[3][1] };
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
	win_on = false;
	if (sel & 4) {
		if (size < 16)
			return 0;
		window_from(in);
		win_on = true;
		in += 16;
		size -= 16;
	}
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
