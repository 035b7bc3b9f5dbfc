/* SPDX-License-Identifier: MIT */
/*
 * Path selection of a multipath namespace head, Linux's nvme_find_path()
 * reduced to what it decides on: per path whether its controller is live,
 * the namespace's ANA state through that controller and the requests the
 * head has in flight on it. Pure: the unit tests give it states and depths.
 */
#ifndef UCMD_NVME_HOST_MPATH_SELECT_H
#define UCMD_NVME_HOST_MPATH_SELECT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

/* enum nvme_ana_state: libnvme's, the ANA log's numbers */
#include <nvme/types.h>

/* Linux's nvme_core iopolicy values, in the order of its names */
enum nvme_iopolicy {
	NVME_IOPOLICY_NUMA,
	NVME_IOPOLICY_RR,
	NVME_IOPOLICY_QD,
};

struct nvme_path_view {
	bool live;		/* the controller can carry commands (Linux: NVME_CTRL_LIVE) */
	uint8_t ana_state;	/* enum nvme_ana_state */
	unsigned nr_active;	/* the head's requests in flight on this path */
};

/*
 * The path a new request takes, or -1 when none is usable (no live path
 * whose state is optimized or non-optimized). last is the path round-robin
 * took before (-1: none yet). numa: the first usable optimized path, else
 * the first non-optimized (every path is at the same NUMA distance here);
 * round-robin: the next usable optimized path after last, else a
 * non-optimized one, else last itself while it is usable (Linux's
 * nvme_round_robin_path); queue-depth: the optimized path with the fewest
 * requests in flight (one with none at once), else the least busy
 * non-optimized one (nvme_queue_depth_path).
 */
int nvme_mpath_select(const struct nvme_path_view *p, unsigned n, enum nvme_iopolicy pol,
		      int last);

/* "numa", "round-robin", "queue-depth" (Linux's sysfs iopolicy names); -EINVAL otherwise. */
int nvme_iopolicy_parse(const char *s);
const char *nvme_iopolicy_name(enum nvme_iopolicy pol);

/*
 * Linux's nvme_is_path_error() plus the host's own ends of a path: an NVMe
 * status of the Path Related type (ANA inaccessible, persistent loss,
 * change, host path errors), or a connection lost under the request.
 */
static inline bool nvme_mpath_is_path_error(int st)
{
	if (st > 0)
		return (st & 0x700) == 0x300;
	return st == -ENOTCONN || st == -ECONNRESET || st == -EIO || st == -EINTR;
}

#endif
