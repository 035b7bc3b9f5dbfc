/* SPDX-License-Identifier: MIT */
/* Path selection for a namespace head (mpath_select.h), Linux's iopolicies. */
#include <errno.h>
#include <string.h>

#include "mpath_select.h"

static bool usable(const struct nvme_path_view *p)
{
	return p->live && (p->ana_state == NVME_ANA_STATE_OPTIMIZED ||
			   p->ana_state == NVME_ANA_STATE_NONOPTIMIZED);
}

static int select_numa(const struct nvme_path_view *p, unsigned n)
{
	int fallback = -1;

	for (unsigned i = 0; i < n; i++) {
		if (!usable(&p[i]))
			continue;
		if (p[i].ana_state == NVME_ANA_STATE_OPTIMIZED)
			return (int)i;
		if (fallback < 0)
			fallback = (int)i;
	}
	return fallback;
}

static int select_rr(const struct nvme_path_view *p, unsigned n, int last)
{
	int found = -1;

	if (last < 0 || (unsigned)last >= n)
		return select_numa(p, n);
	/* every other path, starting after the last one: round-robin skips it */
	for (unsigned k = 1; k < n; k++) {
		unsigned i = ((unsigned)last + k) % n;

		if (!usable(&p[i]))
			continue;
		if (p[i].ana_state == NVME_ANA_STATE_OPTIMIZED)
			return (int)i;
		if (found < 0)
			found = (int)i;
	}
	/*
	 * Linux falls back to the current path when no other optimized one
	 * exists and it is optimized, or when nothing else is usable.
	 */
	if (usable(&p[last]) &&
	    (p[last].ana_state == NVME_ANA_STATE_OPTIMIZED || found < 0))
		return last;
	return found;
}

static int select_qd(const struct nvme_path_view *p, unsigned n)
{
	int best_opt = -1, best_nonopt = -1;
	unsigned min_opt = ~0u, min_nonopt = ~0u;

	for (unsigned i = 0; i < n; i++) {
		if (!usable(&p[i]))
			continue;
		if (p[i].ana_state == NVME_ANA_STATE_OPTIMIZED) {
			if (p[i].nr_active < min_opt) {
				min_opt = p[i].nr_active;
				best_opt = (int)i;
			}
		} else if (p[i].nr_active < min_nonopt) {
			min_nonopt = p[i].nr_active;
			best_nonopt = (int)i;
		}
		if (min_opt == 0)
			return best_opt;
	}
	return best_opt >= 0 ? best_opt : best_nonopt;
}

int nvme_mpath_select(const struct nvme_path_view *p, unsigned n, enum nvme_iopolicy pol,
		      int last)
{
	switch (pol) {
	case NVME_IOPOLICY_RR:
		return select_rr(p, n, last);
	case NVME_IOPOLICY_QD:
		return select_qd(p, n);
	case NVME_IOPOLICY_NUMA:
	default:
		return select_numa(p, n);
	}
}

static const char *const names[] = {
	[NVME_IOPOLICY_NUMA] = "numa",
	[NVME_IOPOLICY_RR] = "round-robin",
	[NVME_IOPOLICY_QD] = "queue-depth",
};

int nvme_iopolicy_parse(const char *s)
{
	for (unsigned i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -EINVAL;
}

const char *nvme_iopolicy_name(enum nvme_iopolicy pol)
{
	return (unsigned)pol < sizeof(names) / sizeof(names[0]) ? names[pol] : "numa";
}
