/* SPDX-License-Identifier: MIT */
/*
 * A sorted set of disjoint LBA ranges: the blocks marked by Write
 * Uncorrectable. A sorted array searched by bisection: a lookup (every read
 * asks one) is O(log n); an update is a bisection plus one memmove of at most
 * UCMD_MAX_UNCOR_RANGES entries (64 KiB), a few microseconds, far below the
 * fdatasync that makes it durable.
 *
 * The table is bounded (UCMD_MAX_UNCOR_RANGES per namespace): marking more
 * fails with -ENOSPC and so does a clear that would split a range of a full
 * table, before anything changes. Marking merges with overlapping and
 * adjacent ranges, so a table is full only of ranges with gaps between them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"

static uint64_t end_of(const struct ctrl_range *r)
{
	return r->slba + r->nlb;
}

/* Index of the first range that ends after lba (n when none does). */
static size_t first_ending_after(const struct ctrl_ranges *rs, uint64_t lba)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (end_of(&rs->r[mid]) > lba)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

bool ctrl_ranges_overlap(const struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb)
{
	size_t i = first_ending_after(rs, slba);

	return nlb && i < rs->n && rs->r[i].slba < slba + nlb;
}

static int ranges_reserve(struct ctrl_ranges *rs, size_t n)
{
	size_t cap = rs->cap ? rs->cap : 8;
	struct ctrl_range *r;

	if (n <= rs->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	r = realloc(rs->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	rs->r = r;
	rs->cap = cap;
	return 0;
}

/* Replace the k entries at i with m entries (the caller fills them). */
static void ranges_splice(struct ctrl_ranges *rs, size_t i, size_t k, size_t m)
{
	memmove(&rs->r[i + m], &rs->r[i + k], (rs->n - i - k) * sizeof(*rs->r));
	rs->n = rs->n - k + m;
}

bool ctrl_ranges_remove_fits(const struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb)
{
	size_t i = first_ending_after(rs, slba);

	/* Only a range sticking out on both sides of the hole splits. */
	if (rs->n < UCMD_MAX_UNCOR_RANGES || !nlb || i == rs->n)
		return true;
	return !(rs->r[i].slba < slba && end_of(&rs->r[i]) > slba + nlb);
}

int ctrl_ranges_remove(struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb)
{
	uint64_t end = slba + nlb;
	size_t i = first_ending_after(rs, slba), j;
	struct ctrl_range head = { 0 }, tail = { 0 };
	size_t keep = 0;

	if (!nlb || i == rs->n || rs->r[i].slba >= end)
		return 0;
	if (!ctrl_ranges_remove_fits(rs, slba, nlb))
		return -ENOSPC;
	/* [i, j) are the ranges the hole touches; keep what sticks out. */
	for (j = i; j < rs->n && rs->r[j].slba < end; j++)
		;
	if (rs->r[i].slba < slba)
		head = (struct ctrl_range){ rs->r[i].slba, slba - rs->r[i].slba };
	if (end_of(&rs->r[j - 1]) > end)
		tail = (struct ctrl_range){ end, end_of(&rs->r[j - 1]) - end };
	keep = (head.nlb != 0) + (tail.nlb != 0);
	if (keep > j - i && ranges_reserve(rs, rs->n + 1))
		return -ENOMEM;
	ranges_splice(rs, i, j - i, keep);
	if (head.nlb)
		rs->r[i++] = head;
	if (tail.nlb)
		rs->r[i] = tail;
	return 1;
}

int ctrl_ranges_add(struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb)
{
	uint64_t end = slba + nlb;
	/* Merge with every range that overlaps or touches [slba, end). */
	size_t i = first_ending_after(rs, slba ? slba - 1 : 0), j;

	if (!nlb || end < slba)
		return -EINVAL;
	for (j = i; j < rs->n && rs->r[j].slba <= end; j++)
		;
	if (j > i) {
		if (rs->r[i].slba < slba)
			slba = rs->r[i].slba;
		if (end_of(&rs->r[j - 1]) > end)
			end = end_of(&rs->r[j - 1]);
	} else if (rs->n >= UCMD_MAX_UNCOR_RANGES) {
		return -ENOSPC;
	} else if (ranges_reserve(rs, rs->n + 1)) {
		return -ENOMEM;
	}
	ranges_splice(rs, i, j - i, 1);
	rs->r[i] = (struct ctrl_range){ slba, end - slba };
	return 0;
}

int ctrl_ranges_append(struct ctrl_ranges *rs, uint64_t slba, uint64_t nlb)
{
	if (!nlb || slba + nlb < slba || rs->n >= UCMD_MAX_UNCOR_RANGES ||
	    (rs->n && slba < end_of(&rs->r[rs->n - 1])))
		return -EINVAL;
	if (ranges_reserve(rs, rs->n + 1))
		return -ENOMEM;
	rs->r[rs->n++] = (struct ctrl_range){ slba, nlb };
	return 0;
}

void ctrl_ranges_clear(struct ctrl_ranges *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}
