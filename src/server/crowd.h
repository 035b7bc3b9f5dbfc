/* SPDX-License-Identifier: MIT */
/*
 * Is the machine crowded: more threads runnable than online CPUs? The
 * ring workers (ring_pool.c) poll a client's ring beside it only while it
 * is not: on a crowded machine a worker polling an empty ring holds a CPU
 * that a client (or anyone) wants.
 */
#ifndef UCMD_SERVER_CROWD_H
#define UCMD_SERVER_CROWD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* How old a reading of the runnable count may be (us). */
#define SRV_CROWD_REFRESH_US	500u

struct srv_crowd {
	int fd;				/* /proc/loadavg, -1: never crowded */
	unsigned ncpu;
	_Atomic uint64_t stamp;		/* when last read (us), 0: never */
	atomic_bool crowded;
};

/* Open; a machine whose count cannot be read counts as never crowded. */
void srv_crowd_init(struct srv_crowd *c, unsigned ncpu);
void srv_crowd_fini(struct srv_crowd *c);
/*
 * More runnable threads than CPUs, as read at most SRV_CROWD_REFRESH_US
 * ago (one reader at a time re-reads; the others take the last answer).
 */
bool srv_crowded(struct srv_crowd *c, uint64_t now_us);
/* Parse the runnable count of a /proc/loadavg line; -EINVAL if it has none. */
int srv_crowd_parse(const char *s);

/*
 * For tests only: a runnable count to use instead of the machine's (0:
 * the machine's).
 */
extern atomic_uint srv_crowd_test_running;

#endif /* UCMD_SERVER_CROWD_H */
