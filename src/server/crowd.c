/* SPDX-License-Identifier: MIT */
/*
 * The runnable count comes from /proc/loadavg's fourth field ("running/
 * total"): Linux's nr_running() over every CPU at the moment of the read,
 * the reader included. One pread of a file kept open, at most every
 * SRV_CROWD_REFRESH_US, whichever worker finds the answer stale: a
 * system call per half millisecond, against a poll loop of about 0.3 us
 * a turn.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "server/crowd.h"

atomic_uint srv_crowd_test_running;

void srv_crowd_init(struct srv_crowd *c, unsigned ncpu)
{
	c->fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	c->ncpu = ncpu ? ncpu : 1;
	atomic_init(&c->stamp, 0);
	atomic_init(&c->crowded, false);
}

void srv_crowd_fini(struct srv_crowd *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int srv_crowd_parse(const char *s)
{
	char *end;
	long v;

	/* "0.50 0.40 0.30 3/412 12345": the fourth field's first number */
	for (int field = 0; field < 3; field++) {
		while (*s == ' ')
			s++;
		while (*s && *s != ' ')
			s++;
	}
	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (*end != '/' || v < 0 || v > 1 << 30)
		return -EINVAL;
	return (int)v;
}

static int running(struct srv_crowd *c)
{
	unsigned forced = atomic_load_explicit(&srv_crowd_test_running, memory_order_relaxed);
	char buf[128];
	ssize_t n;

	if (forced)
		return (int)forced;
	if (c->fd < 0)
		return -EBADF;
	n = pread(c->fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return srv_crowd_parse(buf);
}

bool srv_crowded(struct srv_crowd *c, uint64_t now_us)
{
	uint64_t stamp = atomic_load_explicit(&c->stamp, memory_order_relaxed);
	int n;

	if (stamp && now_us - stamp < SRV_CROWD_REFRESH_US &&
	    !atomic_load_explicit(&srv_crowd_test_running, memory_order_relaxed))
		return atomic_load_explicit(&c->crowded, memory_order_relaxed);
	/* one re-reader; the others go on with the last answer */
	if (!atomic_compare_exchange_strong(&c->stamp, &stamp, now_us ? now_us : 1))
		return atomic_load_explicit(&c->crowded, memory_order_relaxed);
	n = running(c);
	atomic_store_explicit(&c->crowded, n > (int)c->ncpu, memory_order_relaxed);
	return n > (int)c->ncpu;
}
