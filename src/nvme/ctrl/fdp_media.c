/* SPDX-License-Identifier: MIT */
/*
 * The media model behind FDP: a page-mapped flash translation layer at the
 * granularity of a logical block. Each stream (a reclaim unit handle, or a
 * garbage collection destination) appends to its open reclaim unit; a full
 * unit is replaced from the free pool; an overwrite or a trim leaves the
 * old copy invalid. When fewer than GC_LOW units are free, garbage
 * collection picks a victim by cost and benefit (victim()), moves its valid
 * blocks (media writes, not host writes) and erases it. The model does not
 * touch the data, which stays where the store keeps it: it only counts.
 *
 * It runs beside every write, so its layout is for the caches: a write
 * reads and writes one forward map entry, clears one bit of the valid
 * bitmap and appends to its unit's stretch of the reverse map; the old
 * copy's reverse map entry is left as it was (the bitmap says it is dead).
 * Garbage collection walks the victim's bitmap a word at a time and
 * prefetches the forward map entries it is about to rewrite.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdp.h"

/* Map entries hold the index plus one: 0 (FDP_NONE + 1) is unmapped */
#define L2P(m, lba)	((m)->l2p[lba] - 1u)

static inline bool live(const struct fdp_media *m, uint32_t p)
{
	return m->vmap[p / 64] >> (p % 64) & 1;
}

static inline void set_live(struct fdp_media *m, uint32_t p)
{
	m->vmap[p / 64] |= 1ull << (p % 64);
}

static inline void clear_live(struct fdp_media *m, uint32_t p)
{
	m->vmap[p / 64] &= ~(1ull << (p % 64));
}

static size_t vmap_words(const struct fdp_media *m)
{
	return ((uint64_t)m->nru * m->bpr + 63) / 64;
}

/* free units kept back: one for a GC destination, one for a handle */
#define GC_LOW	2u

static void push_free(struct fdp_media *m, uint32_t r)
{
	m->ru[r] = (struct fdp_ru){ .state = FDP_RU_FREE, .owner = FDP_SHARED };
	m->free_next[r] = m->free_head;
	m->free_head = r;
	m->nfree++;
}

static uint32_t take_free(struct fdp_media *m, uint16_t owner)
{
	uint32_t r = m->free_head;

	if (r == FDP_NONE)
		return FDP_NONE;
	m->free_head = m->free_next[r];
	m->nfree--;
	m->ru[r] = (struct fdp_ru){ .state = FDP_RU_OPEN, .owner = owner };
	return r;
}

void fdp_media_reset(struct fdp_media *m)
{
	memset(m->l2p, 0, m->nlba * sizeof(*m->l2p));
	memset(m->p2l, 0, (uint64_t)m->nru * m->bpr * sizeof(*m->p2l));
	memset(m->vmap, 0, vmap_words(m) * sizeof(*m->vmap));
	for (uint32_t s = 0; s < m->nstreams; s++)
		m->stream[s] = FDP_NONE;
	memset(m->opened_ms, 0, m->nstreams / 2 * sizeof(*m->opened_ms));
	m->free_head = FDP_NONE;
	m->nfree = 0;
	m->clock = 0;
	/* lowest unit first, as the order carries no meaning */
	for (uint32_t r = m->nru; r-- > 0;)
		push_free(m, r);
}

int fdp_media_geometry(uint64_t nlba, uint32_t bpr, uint16_t nruh, uint16_t nrg,
		       uint8_t op_pct, bool persistent, uint32_t *nru_out)
{
	uint64_t h = (uint64_t)nrg * nruh, nru;

	if (!nlba || !bpr || !nruh || !nrg || nlba > UCMD_FDP_MAX_BLOCKS || op_pct > 100)
		return -EINVAL;
	/*
	 * Room for every block plus op_pct, one open unit per stream and the
	 * units garbage collection keeps back.
	 */
	nru = (nlba + nlba * op_pct / 100 + bpr - 1) / bpr;
	nru += h * (persistent ? 2 : 1) + 1 + GC_LOW;
	if (nru * bpr > UCMD_FDP_MAX_BLOCKS * 2)
		return -EINVAL;
	*nru_out = (uint32_t)nru;
	return 0;
}

int fdp_media_init(struct fdp_media *m, uint64_t nlba, uint32_t bpr, uint16_t nruh,
		   uint16_t nrg, uint8_t op_pct, bool persistent)
{
	uint64_t h = (uint64_t)nrg * nruh;
	uint32_t nru;
	int ret;

	memset(m, 0, sizeof(*m));
	if ((ret = fdp_media_geometry(nlba, bpr, nruh, nrg, op_pct, persistent, &nru)))
		return ret;
	m->nlba = nlba;
	m->bpr = bpr;
	m->bpr_shift = bpr & (bpr - 1) ? UINT8_MAX : (uint8_t)__builtin_ctz(bpr);
	m->nru = nru;
	m->nruh = nruh;
	m->nrg = nrg;
	m->persistent = persistent;
	m->nstreams = (uint32_t)(2 * h + 1);
	/* zero is "unmapped": untouched pages of a large map cost no memory */
	m->l2p = calloc(nlba, sizeof(*m->l2p));
	m->p2l = calloc((uint64_t)nru * bpr, sizeof(*m->p2l));
	m->vmap = calloc(vmap_words(m), sizeof(*m->vmap));
	m->ru = calloc(nru, sizeof(*m->ru));
	m->stream = calloc(m->nstreams, sizeof(*m->stream));
	m->free_next = calloc(nru, sizeof(*m->free_next));
	m->opened_ms = calloc(m->nstreams / 2, sizeof(*m->opened_ms));
	if (!m->l2p || !m->p2l || !m->vmap || !m->ru || !m->stream || !m->free_next || !m->opened_ms) {
		fdp_media_free(m);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < m->nstreams; s++)
		m->stream[s] = FDP_NONE;
	m->free_head = FDP_NONE;
	for (uint32_t r = m->nru; r-- > 0;)
		push_free(m, r);
	return 0;
}

void fdp_media_free(struct fdp_media *m)
{
	free(m->l2p);
	free(m->p2l);
	free(m->vmap);
	free(m->ru);
	free(m->stream);
	free(m->free_next);
	free(m->opened_ms);
	m->opened_ms = NULL;
	m->vmap = NULL;
	m->l2p = m->p2l = m->stream = m->free_next = NULL;
	m->ru = NULL;
}

/* The unit media block p is in: a shift for the usual power-of-two units */
static inline uint32_t unit_of(const struct fdp_media *m, uint32_t p)
{
	return m->bpr_shift < 32 ? p >> m->bpr_shift : p / m->bpr;
}

static void invalidate(struct fdp_media *m, uint64_t lba)
{
	uint32_t p = L2P(m, lba);

	if (p == FDP_NONE)
		return;
	clear_live(m, p);
	m->ru[unit_of(m, p)].valid--;
	m->l2p[lba] = 0;
}

/* Where garbage collection puts what it moves out of unit r */
static uint32_t gc_stream(const struct fdp_media *m, uint32_t r)
{
	uint32_t h = m->nstreams / 2;

	if (m->persistent && m->ru[r].owner < h)
		return h + m->ru[r].owner;
	return 2 * h;
}

/*
 * Cost-benefit selection (Rosenblum and Ousterhout's LFS cleaner): the
 * unit whose free space times age per cost of moving its data is the
 * highest. Greedy (fewest valid blocks) would take a unit of hot data that
 * is about to be overwritten anyway, and gains nothing from data of
 * different lifetimes being in different units; this policy does, as a
 * drive's does, which is what FDP is for.
 */
static double score(const struct fdp_media *m, const struct fdp_ru *u)
{
	double used = (double)u->valid / m->bpr;

	return (1 - used) * (double)(m->clock - u->sealed + 1) / (1 + used);
}

/*
 * The victim is the unit of the highest score() (the first of equals),
 * rounding and all: every figure after it depends on which unit it is.
 * Most units are plainly worse than the best one so far, which exact
 * integers show without score()'s two divisions: a unit's score is within
 * 2^-29 (relative) of (bpr - valid) * age / (bpr + valid) for units of up
 * to 2^23 blocks (the model's bound), so a unit whose ratio is below the
 * best score by more than 2^-24 is passed over, and only the rest are
 * scored.
 */
static __attribute__((noinline)) uint32_t victim(const struct fdp_media *m)
{
	uint32_t best = FDP_NONE;
	double top = -1, bar = -1;

	for (uint32_t r = 0; r < m->nru; r++) {
		const struct fdp_ru *u = &m->ru[r];
		uint32_t age = m->clock - u->sealed + 1;
		double s;

		if (u->state != FDP_RU_FULL || u->valid >= m->bpr)
			continue;
		if ((double)(m->bpr - u->valid) * age < bar * (m->bpr + u->valid))
			continue;
		s = score(m, u);
		if (s > top) {
			top = s;
			bar = s * (1 - 0x1p-24);
			best = r;
		}
	}
	return best;
}

/* A unit closes: it is the newest, and the clock moves on */
static void seal(struct fdp_media *m, uint32_t r)
{
	m->ru[r].state = FDP_RU_FULL;
	m->ru[r].sealed = m->clock++;
}

static uint32_t open_unit(struct fdp_media *m, uint32_t s, bool gc);

/* stream_unit()'s slow path: the stream's unit is full, or it has none */
static __attribute__((noinline)) uint32_t stream_next(struct fdp_media *m, uint32_t s, bool gc)
{
	uint32_t r = m->stream[s];

	if (r != FDP_NONE)
		seal(m, r);
	m->stream[s] = FDP_NONE;
	r = open_unit(m, s, gc);
	if (r != FDP_NONE)
		m->stream[s] = r;
	return r;
}

/*
 * The unit stream s appends to: its open one, or (none, or full) a new
 * one from the free pool, FDP_NONE when none is left. A full unit is
 * closed here, at the stream's next write, not when its last block goes in.
 */
static inline uint32_t stream_unit(struct fdp_media *m, uint32_t s, bool gc)
{
	uint32_t r = m->stream[s];

	if (__builtin_expect(r != FDP_NONE && m->ru[r].wp < m->bpr, 1))
		return r;
	return stream_next(m, s, gc);
}

/* Block lba's data goes to the next block of unit r */
static inline void append(struct fdp_media *m, uint32_t r, uint32_t lba)
{
	uint32_t p = r * m->bpr + m->ru[r].wp++;

	m->p2l[p] = lba + 1;
	set_live(m, p);
	m->l2p[lba] = p + 1;
	m->ru[r].valid++;
}

/*
 * Moves the blocks whose LBAs are lba[0..n) to stream s's units, in order,
 * unit by unit: how many moved, fewer than n when no unit was left (which
 * cannot happen: the victim had room for less than a unit).
 */
static uint32_t move_blocks(struct fdp_media *m, uint32_t s, const uint32_t *lba, uint32_t n)
{
	uint32_t *l2p = m->l2p, *p2l = m->p2l;
	uint64_t *vmap = m->vmap;

	for (uint32_t i = 0; i < n;) {
		uint32_t r = stream_unit(m, s, true), k, p;

		if (r == FDP_NONE)
			return i;
		k = m->bpr - m->ru[r].wp < n - i ? m->bpr - m->ru[r].wp : n - i;
		p = r * m->bpr + m->ru[r].wp;
		m->ru[r].wp += k;
		m->ru[r].valid += k;
		for (uint32_t end = i + k; i < end; i++, p++) {
			p2l[p] = lba[i] + 1;
			l2p[lba[i]] = p + 1;
			vmap[p / 64] |= 1ull << (p % 64);
		}
	}
	return n;
}

/*
 * One unit collected: false when none would give any room back. Its live
 * blocks move in order, a bitmap word at a time: the forward map entries
 * of a word's blocks are prefetched before the first of them is rewritten.
 */
static bool gc_one(struct fdp_media *m)
{
	uint32_t v = victim(m), s, moved = 0, first = 0;
	uint64_t lo, hi;
	uint16_t owner;

	if (v == FDP_NONE)
		return false;
	s = gc_stream(m, v);
	/* nothing moves unless all of it fits: a unit is never half collected */
	if ((uint64_t)m->nfree * m->bpr + (m->stream[s] == FDP_NONE ? 0 :
	    m->bpr - m->ru[m->stream[s]].wp) < m->ru[v].valid)
		return false;
	lo = (uint64_t)v * m->bpr;
	hi = lo + m->ru[v].wp;
	for (uint64_t w = lo / 64; w * 64 < hi; w++) {
		uint64_t mask = ~0ull, bits, b;
		uint32_t lba[64], n = 0, done;

		if (w * 64 < lo)
			mask &= ~0ull << (lo - w * 64);
		if (hi < w * 64 + 64)
			mask &= (1ull << (hi - w * 64)) - 1;
		for (b = bits = m->vmap[w] & mask; b; b &= b - 1) {
			lba[n] = m->p2l[w * 64 + (unsigned)__builtin_ctzll(b)] - 1;
			__builtin_prefetch(&m->l2p[lba[n]], 1);
			n++;
		}
		if (!n)
			continue;
		if (!moved)
			first = lba[0];
		done = move_blocks(m, s, lba, n);
		if (done < n) {
			for (b = bits; done--; b &= b - 1)
				;
			m->vmap[w] &= ~(bits ^ b);
			m->ru[v].valid -= (uint32_t)__builtin_popcountll(bits ^ b);
			return false;
		}
		m->vmap[w] &= ~bits;
		m->ru[v].valid -= n;
		moved += n;
	}
	m->moved += moved;
	m->erased += m->bpr;
	owner = m->ru[v].owner;
	push_free(m, v);
	if (moved && m->realloc)
		m->realloc(m->arg, owner, first, moved);
	return true;
}

static uint32_t open_unit(struct fdp_media *m, uint32_t s, bool gc)
{
	uint16_t owner = s < m->nstreams / 2 ? (uint16_t)s
			 : s < m->nstreams - 1 ? (uint16_t)(s - m->nstreams / 2) : FDP_SHARED;

	if (!gc)
		while (m->nfree < GC_LOW && gc_one(m))
			;
	return take_free(m, owner);
}

/* A host write of block lba through stream s */
static int place(struct fdp_media *m, uint32_t s, uint64_t lba)
{
	uint32_t r = stream_unit(m, s, false);

	if (r == FDP_NONE)
		return -ENOSPC;
	/* a host stream's unit is active from its first write */
	if (!m->ru[r].wp)
		m->opened_ms[s] = m->now_ms;
	append(m, r, (uint32_t)lba);
	return 0;
}

int fdp_media_write(struct fdp_media *m, uint32_t s, uint64_t lba, uint64_t n)
{
	if (s >= m->nstreams / 2 || lba + n < lba || lba + n > m->nlba)
		return -EINVAL;
	for (uint64_t i = 0; i < n; i++) {
		int ret;

		invalidate(m, lba + i);
		if ((ret = place(m, s, lba + i)))
			return ret;
	}
	return 0;
}

void fdp_media_trim(struct fdp_media *m, uint64_t lba, uint64_t n)
{
	for (uint64_t i = 0; i < n && lba + i < m->nlba; i++)
		invalidate(m, lba + i);
}

bool fdp_media_ruh_update(struct fdp_media *m, uint32_t s)
{
	uint32_t r = m->stream[s];
	bool partial;

	if (r == FDP_NONE)
		return false;
	partial = m->ru[r].wp < m->bpr;
	/* what was not written stays unwritten until the unit is erased */
	if (m->ru[r].wp) {
		seal(m, r);
	} else {
		m->ru[r].state = FDP_RU_FREE;
		m->ru[r].sealed = m->clock++;
		m->nfree++;
		m->free_next[r] = m->free_head;
		m->free_head = r;
		m->ru[r].owner = FDP_SHARED;
	}
	m->stream[s] = FDP_NONE;
	return partial && m->ru[r].wp;
}

bool fdp_media_expire(struct fdp_media *m, uint32_t s, uint64_t limit_ms, uint64_t now_ms)
{
	uint32_t r = m->stream[s];

	/* a unit not written yet is not active; a full one is replaced at the next write */
	if (r == FDP_NONE || !m->ru[r].wp || m->ru[r].wp == m->bpr ||
	    now_ms < m->opened_ms[s] || now_ms - m->opened_ms[s] <= limit_ms)
		return false;
	fdp_media_ruh_update(m, s);
	m->opened_ms[s] = 0;
	return true;
}

uint64_t fdp_media_active_ms(const struct fdp_media *m, uint32_t s, uint64_t now_ms)
{
	uint32_t r = m->stream[s];

	if (r == FDP_NONE || !m->ru[r].wp || m->ru[r].wp == m->bpr || now_ms < m->opened_ms[s])
		return 0;
	return now_ms - m->opened_ms[s];
}

uint64_t fdp_media_ruamw(const struct fdp_media *m, uint32_t s)
{
	uint32_t r = m->stream[s];

	/* a full unit is replaced at the handle's next write: a fresh one's worth */
	return r == FDP_NONE || m->ru[r].wp == m->bpr ? m->bpr : m->bpr - m->ru[r].wp;
}

int fdp_media_rebuild(struct fdp_media *m)
{
	uint32_t nfree = 0;

	memset(m->p2l, 0, (uint64_t)m->nru * m->bpr * sizeof(*m->p2l));
	memset(m->vmap, 0, vmap_words(m) * sizeof(*m->vmap));
	m->free_head = FDP_NONE;
	for (uint32_t r = 0; r < m->nru; r++) {
		m->ru[r].valid = 0;
		if (m->ru[r].state > FDP_RU_FULL || m->ru[r].wp > m->bpr ||
		    (m->ru[r].state == FDP_RU_FREE && m->ru[r].wp))
			return -EINVAL;
	}
	for (uint32_t s = 0; s < m->nstreams; s++) {
		uint32_t r = m->stream[s];

		if (r != FDP_NONE && (r >= m->nru || m->ru[r].state != FDP_RU_OPEN))
			return -EINVAL;
	}
	for (uint64_t lba = 0; lba < m->nlba; lba++) {
		uint32_t p = L2P(m, lba);

		if (p == FDP_NONE)
			continue;
		if ((uint64_t)p >= (uint64_t)m->nru * m->bpr ||
		    p % m->bpr >= m->ru[p / m->bpr].wp || live(m, p))
			return -EINVAL;
		m->p2l[p] = (uint32_t)lba + 1;
		set_live(m, p);
		m->ru[p / m->bpr].valid++;
	}
	/* every open unit is some stream's, and one stream's only */
	for (uint32_t r = 0; r < m->nru; r++) {
		uint32_t refs = 0;

		if (m->ru[r].state != FDP_RU_OPEN)
			continue;
		for (uint32_t s = 0; s < m->nstreams; s++)
			refs += m->stream[s] == r;
		if (refs != 1)
			return -EINVAL;
	}
	for (uint32_t r = m->nru; r-- > 0;)
		if (m->ru[r].state == FDP_RU_FREE) {
			m->free_next[r] = m->free_head;
			m->free_head = r;
			nfree++;
		}
	m->nfree = nfree;
	return 0;
}
