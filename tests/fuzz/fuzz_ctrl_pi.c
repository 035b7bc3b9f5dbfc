/* SPDX-License-Identifier: MIT */
/*
 * Protection information tuples (src/nvme/ctrl/pi.c) on random formats,
 * command fields, data and metadata. Asserted, not just run:
 *  - the checks answer only 0 or their own statuses, and 0 without PRCHK;
 *  - a generated tuple always passes every check of the same command;
 *  - one flipped data bit after generation is a guard error, unless the
 *    tuple holds the escape values;
 *  - reading a tuple and writing it back changes no byte;
 *  - a storage tag no wider than the Storage and Reference Space is a valid
 *    format, and STC checks only the bits LBSTM keeps.
 *
 * Input: [0] type [1] pif [2] bit 0 first, bits 7:1 the Storage Tag Size
 * [3] bits 1:0 ms selector, bit 2 LBSTM all ones (else SLBA's bytes)
 * [4] bit 0 lbads selector, bit 1 STC
 * [5..6] control [7..14] ILBRT [15..22] SLBA [23..24] LBAT [25..26] LBATM
 * [27..30] block index [31..32] bit to flip, then data and metadata bytes
 * (zero-padded).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvme/ctrl/pi.h"

#define HDR 33
#define PRCHK_ALL (NVME_IO_PRINFO_PRCHK_GUARD | NVME_IO_PRINFO_PRCHK_APP | NVME_IO_PRINFO_PRCHK_REF)

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void check_status(uint16_t st)
{
	if (st != 0 && st != PI_SC_GUARD && st != PI_SC_APPTAG && st != PI_SC_STAG &&
	    st != PI_SC_REFTAG)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	static const uint16_t ms[4] = { 8, 16, 64, 24 };
	static const uint32_t lbads[2] = { 512, 4096 };
	static uint8_t data[4096], md[64], md2[64];
	uint8_t h[HDR] = { 0 };
	struct pi_fmt f;
	struct pi_cmd c;
	struct pi_tuple t;
	uint32_t i;
	size_t rest;
	uint16_t st;

	memcpy(h, in, size < HDR ? size : HDR);
	f = (struct pi_fmt){ .type = h[0], .pif = h[1], .first = h[2] & 1,
			     .ms = ms[h[3] & 3], .lbads = lbads[h[4] & 1], .sts = h[2] >> 1,
			     .lbstm = h[3] & 4 ? ~0ull : le(h + 15, 8) };
	if (!pi_fmt_valid(&f)) {
		if (f.type >= 1 && f.type <= 3 && (f.pif == 0 || (f.pif == 2 && f.ms >= 16)) &&
		    f.sts <= (f.pif == 2 ? 48 : 32))
			abort();	/* a format that can carry the tuple was refused */
		return 0;
	}
	c = (struct pi_cmd){ .control = (uint16_t)le(h + 5, 2), .ilbrt = le(h + 7, 8),
			     .slba = le(h + 15, 8), .lbat = (uint16_t)le(h + 23, 2),
			     .lbatm = (uint16_t)le(h + 25, 2), .stc = h[4] & 2 };
	i = (uint32_t)le(h + 27, 4);
	memset(data, 0, sizeof(data));
	memset(md, 0, sizeof(md));
	rest = size > HDR ? size - HDR : 0;
	memcpy(data, in + HDR, rest < f.lbads ? rest : f.lbads);
	if (rest > f.lbads)
		memcpy(md, in + HDR + f.lbads, rest - f.lbads < f.ms ? rest - f.lbads : f.ms);

	st = pi_cmd_check(&f, &c);
	if (st != 0 && st != PI_SC_INVALID_PI)
		abort();

	/* hostile metadata */
	check_status(pi_check(&f, &c, i, data, md));
	{
		struct pi_cmd none = c;

		none.control &= (uint16_t)~PRCHK_ALL;
		none.stc = false;
		if (pi_check(&f, &none, i, data, md))
			abort();
		/* STC alone: 88h or nothing, and nothing when LBSTM keeps no bit */
		none.stc = true;
		st = pi_check(&f, &none, i, data, md);
		if (st && (st != PI_SC_STAG || !f.sts || !(f.lbstm & ((1ull << f.sts) - 1))))
			abort();
	}
	memcpy(md2, md, sizeof(md));
	pi_tuple_get(&f, md2, &t);
	pi_tuple_put(&f, md2, &t);
	if (memcmp(md, md2, sizeof(md)))
		abort();

	/* generated, then checked by the same command with every check on */
	c.control |= PRCHK_ALL;
	c.stc = true;
	pi_generate(&f, &c, i, data, md);
	if (pi_check(&f, &c, i, data, md))
		abort();
	/* the bytes around the tuple are the input's */
	for (size_t b = 0; b < f.ms; b++) {
		size_t off = pi_tuple_offset(&f);

		if ((b < off || b >= off + pi_tuple_size(&f)) && md[b] != md2[b])
			abort();
	}

	/* one bit of data flipped: the guard sees it, unless escaped */
	{
		unsigned bit = (unsigned)le(h + 31, 2) % (f.lbads * 8);
		bool esc;

		unsigned rbits = (f.pif == 2 ? 48 : 32) - f.sts;

		pi_tuple_get(&f, md, &t);
		esc = t.apptag == 0xffff && (f.type != 3 || t.reftag == (1ull << rbits) - 1);
		data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		st = pi_check(&f, &c, i, data, md);
		if (st != (esc ? 0 : PI_SC_GUARD))
			abort();
	}
	return 0;
}
