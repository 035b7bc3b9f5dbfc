/* SPDX-License-Identifier: MIT */
/*
 * A sorted set of disjoint LBA ranges: the blocks marked by Write
 * Uncorrectable. Few ranges are expected, so a sorted array suffices.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"

bool ucmd_ranges_overlap(const struct ucmd_ranges *rs, uint64_t slba, uint64_t nlb)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].slba < slba + nlb && slba < rs->r[i].slba + rs->r[i].nlb)
			return true;
	return false;
}

static int ranges_insert(struct ucmd_ranges *rs, size_t at, uint64_t slba, uint64_t nlb)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 8;
		struct ucmd_range *n = realloc(rs->r, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rs->r = n;
		rs->cap = cap;
	}
	memmove(&rs->r[at + 1], &rs->r[at], (rs->n - at) * sizeof(*rs->r));
	rs->r[at].slba = slba;
	rs->r[at].nlb = nlb;
	rs->n++;
	return 0;
}

bool ucmd_ranges_remove(struct ucmd_ranges *rs, uint64_t slba, uint64_t nlb)
{
	uint64_t end = slba + nlb;
	bool changed = false;

	for (size_t i = 0; i < rs->n;) {
		struct ucmd_range *r = &rs->r[i];
		uint64_t rend = r->slba + r->nlb;

		if (rend <= slba || r->slba >= end) {
			i++;
			continue;
		}
		changed = true;
		if (r->slba < slba && rend > end) {
			/* Split: keep both sides of the hole. */
			r->nlb = slba - r->slba;
			if (ranges_insert(rs, i + 1, end, rend - end))
				return changed;
			i += 2;
		} else if (r->slba < slba) {
			r->nlb = slba - r->slba;
			i++;
		} else if (rend > end) {
			r->nlb = rend - end;
			r->slba = end;
			i++;
		} else {
			memmove(r, r + 1, (rs->n - i - 1) * sizeof(*r));
			rs->n--;
		}
	}
	return changed;
}

int ucmd_ranges_add(struct ucmd_ranges *rs, uint64_t slba, uint64_t nlb)
{
	size_t i = 0;

	ucmd_ranges_remove(rs, slba, nlb);
	while (i < rs->n && rs->r[i].slba < slba)
		i++;
	return ranges_insert(rs, i, slba, nlb);
}

void ucmd_ranges_clear(struct ucmd_ranges *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}
