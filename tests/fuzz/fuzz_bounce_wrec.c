/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: ucmdd's reading of a write record the client wrote in
 * its bounce area (src/server/bounce_area.c, srv_bounce_wtake): any record
 * and any data, for any request. The area is the daemon's own (made by
 * srv_bounce_create); the input is what a hostile client writes in it.
 *
 * Input: bytes 0..3 the request's SQ position, 4..7 the pass's floor (the
 * SQ head when the pass began), 8..15 the buffer's address, 16..19 its
 * length (at most the write data area and a page), 20..27 its user_data,
 * 28 flags (bit 7: a read record, UCMDD_BOUNCE_WREC_READ in nr; bit 0: the
 * record is made to match the request in position,
 * address, length and user_data, so that its offset alone decides; bit 1:
 * it is made a table record of 1 + (flags >> 2) ranges (up to one past the
 * most), its table 8-aligned, and its last range written to hold the
 * request, its copy at the record's len), then 32 bytes of record written
 * at the position's slot, then the write data area's first bytes.
 *
 * Invariants, against a model of the format (proto.h) written here with
 * 128-bit sums: 0 only when the record is the request's (position,
 * user_data, not below the floor) and its one range, or the first of its
 * table's that holds the request's range, lies inside the area, the copy
 * then being that range's bytes; otherwise -ENOENT and the destination
 * untouched (a read record's data is never taken). srv_bounce_wchecked
 * says yes only for a read record of this request holding the range.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "server/bounce_area.h"

struct wview {
	struct ucmdd_bounce_wrec *wrecs;
	unsigned char *wdata;
};

static struct srv_bounce *area;
static struct wview view;

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void setup(void)
{
	struct ucmdd_bounce_rep rep;
	unsigned char *mem;

	if (srv_bounce_create(NULL, 0, &area, &rep))
		abort();
	/* the client's view: a second mapping of the same memfd */
	mem = mmap(NULL, rep.size, PROT_READ | PROT_WRITE, MAP_SHARED, srv_bounce_fd(area), 0);
	if (mem == MAP_FAILED)
		abort();
	view.wrecs = (struct ucmdd_bounce_wrec *)(mem + rep.wrecs_off);
	view.wdata = mem + rep.wdata_off;
	if (rep.nr_wrecs != SRV_BOUNCE_WRECS || rep.wdata_len != SRV_BOUNCE_WDATA)
		abort();
}

/* Where [ua, ua + n) lies in the area when [a, a + l) copied at o holds it, or -1. */
static int64_t model_range(uint64_t a, uint64_t l, uint64_t o, uint64_t ua, uint64_t n)
{
	const unsigned __int128 w = SRV_BOUNCE_WDATA;

	if ((unsigned __int128)o + l > w)
		return -1;
	if (ua < a || (unsigned __int128)ua + n > (unsigned __int128)a + l)
		return -1;
	return (int64_t)(o + (ua - a));
}

static int64_t model(const struct ucmdd_bounce_wrec *r, uint64_t ua, uint64_t n)
{
	struct ucmdd_bounce_wseg e;

	if (!r->nr)
		return model_range(r->addr, r->len, r->off, ua, n);
	if (r->nr > UCMDD_BOUNCE_WSEG_MAX || r->off % 8 ||
	    (unsigned __int128)r->off + (unsigned __int128)r->nr * sizeof(e) > SRV_BOUNCE_WDATA)
		return -1;
	for (uint32_t i = 0; i < r->nr; i++) {
		int64_t at;

		memcpy(&e, view.wdata + r->off + (size_t)i * sizeof(e), sizeof(e));
		at = model_range(e.addr, e.len, e.off, ua, n);
		if (at >= 0)
			return at;
	}
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char *dst;
	const size_t dst_max = SRV_BOUNCE_WDATA + 4096;
	struct ucmdd_bounce_wrec rec;
	unsigned pos, floor;
	uint64_t addr, ud;
	size_t n, rest;
	int64_t at;
	int ret;

	if (!area) {
		setup();
		dst = malloc(dst_max);
		if (!dst)
			abort();
	}
	if (size < 29 + sizeof(rec))
		return 0;
	pos = get32(data);
	floor = get32(data + 4);
	addr = get64(data + 8);
	n = get32(data + 16) % (dst_max + 1);
	ud = get64(data + 20);
	memcpy(&rec, data + 29, sizeof(rec));
	if (data[28] & 1) {
		rec.pos = pos;
		rec.addr = addr;
		rec.len = (uint32_t)n;
		rec.user_data = ud;
	}
	rest = size - 29 - sizeof(rec);
	if (rest > SRV_BOUNCE_WDATA)
		rest = SRV_BOUNCE_WDATA;
	memcpy(view.wdata, data + 29 + sizeof(rec), rest);
	if (data[28] & 2) {
		struct ucmdd_bounce_wseg e = { .addr = addr, .len = (uint32_t)n, .off = rec.len };

		rec.nr = 1u + (data[28] >> 2) % (UCMDD_BOUNCE_WSEG_MAX + 1);
		rec.off = (rec.off % SRV_BOUNCE_WDATA) & ~7u;
		if (rec.off + (size_t)rec.nr * sizeof(e) <= SRV_BOUNCE_WDATA)
			memcpy(view.wdata + rec.off + (size_t)(rec.nr - 1) * sizeof(e), &e, sizeof(e));
	}
	if (data[28] & 0x80)
		rec.nr = UCMDD_BOUNCE_WREC_READ;
	view.wrecs[pos & (SRV_BOUNCE_WRECS - 1)] = rec;

	at = model(&rec, addr, n);
	srv_bounce_enter(area, floor);
	/* a read record's word: only its own request's, only a range it holds */
	if (srv_bounce_wchecked(area, addr, n, pos, ud) !=
	    ((int)(pos - floor) >= 0 && rec.pos == pos && rec.user_data == ud &&
	     rec.nr == UCMDD_BOUNCE_WREC_READ && addr >= rec.addr &&
	     (unsigned __int128)addr + n <= (unsigned __int128)rec.addr + rec.len))
		abort();
	memset(dst, 0x5a, n);
	ret = srv_bounce_wtake(area, dst, addr, n, pos, ud);
	srv_bounce_leave();
	if (ret == 0) {
		if ((int)(pos - floor) < 0 || rec.pos != pos || rec.user_data != ud || at < 0 ||
		    memcmp(dst, view.wdata + at, n))
			abort();
	} else {
		if (ret != -ENOENT)
			abort();
		if ((int)(pos - floor) >= 0 && rec.pos == pos && rec.user_data == ud && at >= 0)
			abort();
		for (size_t i = 0; i < n; i++)
			if (dst[i] != 0x5a)
				abort();
	}
	return 0;
}
