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
 * 28 flags (bit 0: the record is made to match the request in position,
 * address, length and user_data, so that its offset alone decides), then
 * 32 bytes of record written at the position's slot, then the write data
 * area's first bytes.
 *
 * Invariants: 0 only for a record that names this request exactly and
 * data inside the area, the copy then being the area's bytes; otherwise
 * -ENOENT and the destination untouched.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char *dst;
	const size_t dst_max = SRV_BOUNCE_WDATA + 4096;
	struct ucmdd_bounce_wrec rec;
	unsigned pos, floor;
	uint64_t addr, ud;
	size_t n, rest;
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
	view.wrecs[pos & (SRV_BOUNCE_WRECS - 1)] = rec;
	rest = size - 29 - sizeof(rec);
	if (rest > SRV_BOUNCE_WDATA)
		rest = SRV_BOUNCE_WDATA;
	memcpy(view.wdata, data + 29 + sizeof(rec), rest);

	srv_bounce_enter(area, floor);
	memset(dst, 0x5a, n);
	ret = srv_bounce_wtake(area, dst, addr, n, pos, ud);
	srv_bounce_leave();
	if (ret == 0) {
		if ((int)(pos - floor) < 0 || rec.pos != pos || rec.addr != addr || rec.len != n ||
		    rec.user_data != ud || rec.off > SRV_BOUNCE_WDATA ||
		    n > SRV_BOUNCE_WDATA - rec.off || memcmp(dst, view.wdata + rec.off, n))
			abort();
	} else {
		if (ret != -ENOENT)
			abort();
		for (size_t i = 0; i < n; i++)
			if (dst[i] != 0x5a)
				abort();
	}
	return 0;
}
