/* SPDX-License-Identifier: MIT */
/*
 * Protection information tuples: layout, guard, check and generation
 * (pi.h). The guard covers the block's data and, when the tuple sits at the
 * end of a larger metadata area, the metadata bytes before it; a tuple at
 * the start covers the data only.
 */
#include <string.h>

#include "lib/crc_pi.h"
#include "nvme/ctrl/pi.h"

static uint64_t get_be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(uint8_t *p, unsigned n, uint64_t v)
{
	for (unsigned i = n; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

static bool wide(const struct pi_fmt *f)
{
	return f->pif == PI_PIF_64B;
}

unsigned pi_space_bits(const struct pi_fmt *f)
{
	return wide(f) ? 48 : 32;
}

/* The low n bits set (n up to 63: the space has at most 48) */
static uint64_t low_bits(unsigned n)
{
	return (1ull << n) - 1;
}

/* The reference tag's bits: the space less the storage tag, or none */
static unsigned ref_bits(const struct pi_fmt *f)
{
	return f->sts < pi_space_bits(f) ? pi_space_bits(f) - f->sts : 0;
}

static uint64_t ref_mask(const struct pi_fmt *f)
{
	return low_bits(ref_bits(f));
}

/* The command's LBST: the space's STS most significant bits */
static uint64_t cmd_stag(const struct pi_fmt *f, const struct pi_cmd *c)
{
	return f->sts ? (c->ilbrt & low_bits(pi_space_bits(f))) >> ref_bits(f) : 0;
}

size_t pi_tuple_size(const struct pi_fmt *f)
{
	return wide(f) ? 16 : 8;
}

size_t pi_tuple_offset(const struct pi_fmt *f)
{
	return f->first ? 0 : f->ms - pi_tuple_size(f);
}

bool pi_fmt_valid(const struct pi_fmt *f)
{
	if (f->type < NVME_NS_DPS_PI_TYPE1 || f->type > NVME_NS_DPS_PI_TYPE3)
		return false;
	if (f->pif != PI_PIF_16B && f->pif != PI_PIF_64B)
		return false;
	if (f->sts > pi_space_bits(f))
		return false;
	return f->lbads > 0 && f->ms >= pi_tuple_size(f);
}

bool pi_md_is_tuple(const struct pi_fmt *f)
{
	return f->ms == pi_tuple_size(f);
}

void pi_tuple_get(const struct pi_fmt *f, const void *md, struct pi_tuple *t)
{
	const uint8_t *p = (const uint8_t *)md + pi_tuple_offset(f);
	uint64_t space;

	if (wide(f)) {
		t->guard = get_be(p, 8);
		t->apptag = (uint16_t)get_be(p + 8, 2);
		space = get_be(p + 10, 6);
	} else {
		t->guard = get_be(p, 2);
		t->apptag = (uint16_t)get_be(p + 2, 2);
		space = get_be(p + 4, 4);
	}
	t->reftag = space & ref_mask(f);
	t->stag = f->sts ? space >> ref_bits(f) : 0;
}

void pi_tuple_put(const struct pi_fmt *f, void *md, const struct pi_tuple *t)
{
	uint8_t *p = (uint8_t *)md + pi_tuple_offset(f);
	uint64_t space = (t->reftag & ref_mask(f)) |
			 (f->sts ? (t->stag & low_bits(f->sts)) << ref_bits(f) : 0);

	if (wide(f)) {
		put_be(p, 8, t->guard);
		put_be(p + 8, 2, t->apptag);
		put_be(p + 10, 6, space);
	} else {
		put_be(p, 2, t->guard);
		put_be(p + 2, 2, t->apptag);
		put_be(p + 4, 4, space);
	}
}

uint64_t pi_guard(const struct pi_fmt *f, const void *data, const void *md)
{
	size_t before = f->first ? 0 : pi_tuple_offset(f);

	if (wide(f))
		return crc64_nvme(crc64_nvme(0, data, f->lbads), md, before);
	return crc_t10dif_update(crc_t10dif_update(0, data, f->lbads), md, before);
}

uint16_t pi_cmd_check(const struct pi_fmt *f, const struct pi_cmd *c)
{
	if (f->type == NVME_NS_DPS_PI_TYPE1 && (c->control & NVME_IO_PRINFO_PRCHK_REF) &&
	    ref_bits(f) && (c->ilbrt & ref_mask(f)) != (c->slba & ref_mask(f)))
		return PI_SC_INVALID_PI;
	return 0;
}

/* The escape values that turn the checks off for one block */
static bool escaped(const struct pi_fmt *f, const struct pi_tuple *t)
{
	if (t->apptag != 0xffff)
		return false;
	/* type 3: and the reference tag all ones, when the format has one */
	return f->type != NVME_NS_DPS_PI_TYPE3 || t->reftag == ref_mask(f);
}

uint16_t pi_check(const struct pi_fmt *f, const struct pi_cmd *c, uint32_t i,
		  const void *data, const void *md)
{
	struct pi_tuple t;

	pi_tuple_get(f, md, &t);
	if (escaped(f, &t))
		return 0;
	if ((c->control & NVME_IO_PRINFO_PRCHK_GUARD) && t.guard != pi_guard(f, data, md))
		return PI_SC_GUARD;
	if ((c->control & NVME_IO_PRINFO_PRCHK_APP) &&
	    (t.apptag & c->lbatm) != (c->lbat & c->lbatm))
		return PI_SC_APPTAG;
	/* STC is ignored where the format defines no storage tag */
	if (c->stc && f->sts && ((t.stag ^ cmd_stag(f, c)) & f->lbstm & low_bits(f->sts)))
		return PI_SC_STAG;
	if ((c->control & NVME_IO_PRINFO_PRCHK_REF) && f->type != NVME_NS_DPS_PI_TYPE3 &&
	    ref_bits(f) && t.reftag != ((c->ilbrt + i) & ref_mask(f)))
		return PI_SC_REFTAG;
	return 0;
}

void pi_generate(const struct pi_fmt *f, const struct pi_cmd *c, uint32_t i,
		 const void *data, void *md)
{
	struct pi_tuple t = {
		.guard = pi_guard(f, data, md),
		.apptag = c->lbat,
		.stag = cmd_stag(f, c),
		.reftag = (f->type == NVME_NS_DPS_PI_TYPE3 ? c->ilbrt : c->ilbrt + i) & ref_mask(f),
	};

	pi_tuple_put(f, md, &t);
}

void pi_store_codec(const struct pi_fmt *f, uint8_t *md, uint64_t nlb)
{
	size_t off = pi_tuple_offset(f), len = pi_tuple_size(f);

	if (f->plain)
		return;
	for (uint64_t i = 0; i < nlb; i++)
		for (size_t b = 0; b < len; b++)
			md[i * f->ms + off + b] ^= 0xff;
}
