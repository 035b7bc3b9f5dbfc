/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the paths libucmd-preload takes for an open
 * descriptor's (pl_fd_path_dev, src/preload/fdpath.c): /dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N, /proc/<pid>/fd/N,
 * /proc/.../task/<tid>/fd/N, /dev/stdin, stdout, stderr, on any bytes a
 * program may pass to open().
 *
 * Input: two bytes, the descriptors 0..7 that are devices (bit N: fd N)
 * and those a raw dup made (found by pl_fd_adopt), then the path, cut at
 * its first NUL; each '%' in it becomes this process's pid, so that
 * /proc/<pid> is reachable. The fd table and the adoption are modelled
 * here; numbers from 8 up are no device.
 *
 * Invariants: the answer is 0 or -ENOTDIR, and what an independent model
 * of the kernel's walk says: the path, split at '/' with empty and "."
 * components dropped (the kernel's "//" and "/./"), names descriptor N
 * when its components start dev/stdin (0), dev/stdout (1), dev/stderr
 * (2), dev/fd/N, or proc/X/fd/N with X self, thread-self, or a thread id
 * of ours optionally followed by task/<our thread id> (self also), N and
 * ids written as /proc writes them (no leading zero, at most INT_MAX).
 * A path that names none gets 0 and no device and asks nothing of the fd
 * table's adoption; one that names fd N asks pl_fd_adopt (err 0) only when
 * N is none of ours, at most once; then a device's path is the device,
 * or -ENOTDIR when anything follows its number's component; any other
 * descriptor's is 0 and no device.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"

static const struct pl_devinfo dev = { 0 };
static struct pl_file file = { .dev = &dev };
static unsigned devs, dups, adopt_calls;
static int adopt_fd;

struct pl_file *pl_fd(int fd)
{
	return fd >= 0 && fd < 8 && (devs >> fd & 1) ? &file : NULL;
}

struct pl_file *pl_fd_adopt(int fd, int err)
{
	if (err || pl_fd(fd))
		abort();	/* asked with an errno, or about a number already ours */
	adopt_calls++;
	adopt_fd = fd;
	return fd >= 0 && fd < 8 && (dups >> fd & 1) ? &file : NULL;
}

#define MAX_COMPS 8

struct comp {
	const char *s;
	size_t len, end;	/* end: offset just past it in the path */
};

static bool is(const struct comp *c, const char *w)
{
	return c->len == strlen(w) && !memcmp(c->s, w, c->len);
}

/* a number as /proc writes it, at most INT_MAX; -1 if not */
static long num(const struct comp *c)
{
	unsigned long long v = 0;

	if (!c->len || (c->s[0] == '0' && c->len > 1))
		return -1;
	for (size_t i = 0; i < c->len; i++) {
		if (c->s[i] < '0' || c->s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(c->s[i] - '0');
		if (v > INT_MAX)
			return -1;
	}
	return (long)v;
}

static bool ours(const struct comp *c)
{
	long n = num(c);

	return n == getpid() || (n > 0 && !syscall(SYS_tgkill, getpid(), (pid_t)n, 0));
}

/* the fd the path names, or -1; *end: where its number's component ends */
static int model(const char *path, size_t *end)
{
	struct comp c[MAX_COMPS];
	size_t n = 0, i = 0, len = strlen(path);
	unsigned k;

	if (path[0] != '/')
		return -1;
	while (i < len && n < MAX_COMPS) {
		size_t s;

		while (i < len && path[i] == '/')
			i++;
		s = i;
		while (i < len && path[i] != '/')
			i++;
		if (i > s && !(i - s == 1 && path[s] == '.'))
			c[n++] = (struct comp){ path + s, i - s, i };
	}
	if (n >= 2 && is(&c[0], "dev")) {
		static const char *const std[] = { "stdin", "stdout", "stderr" };

		for (int f = 0; f < 3; f++) {
			if (is(&c[1], std[f])) {
				*end = c[1].end;
				return f;
			}
		}
		if (n >= 3 && is(&c[1], "fd") && num(&c[2]) >= 0) {
			*end = c[2].end;
			return (int)num(&c[2]);
		}
		return -1;
	}
	if (n < 4 || !is(&c[0], "proc"))
		return -1;
	if (is(&c[1], "thread-self")) {
		k = 2;
	} else if (is(&c[1], "self") || ours(&c[1])) {
		k = 2;
		if (n >= 4 && is(&c[2], "task")) {
			if (!ours(&c[3]))
				return -1;
			k = 4;
		}
	} else {
		return -1;
	}
	if (n < k + 2 || !is(&c[k], "fd") || num(&c[k + 1]) < 0)
		return -1;
	*end = c[k + 1].end;
	return (int)num(&c[k + 1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char pid[16], *path, *o;
	const struct pl_devinfo *d = (const void *)1;
	size_t len = 0, end = 0;
	int ret, fd;

	if (size < 2)
		return 0;
	devs = data[0];
	dups = data[1] & ~data[0];
	data += 2;
	size -= 2;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (size_t i = 0; i < size && data[i]; i++)
		len += data[i] == '%' ? strlen(pid) : 1;
	/* exactly the string's bytes: ASan sees a read past its NUL */
	path = o = malloc(len + 1);
	if (!path)
		return 0;
	for (size_t i = 0; i < size && data[i]; i++) {
		if (data[i] == '%') {
			memcpy(o, pid, strlen(pid));
			o += strlen(pid);
		} else {
			*o++ = (char)data[i];
		}
	}
	*o = '\0';
	adopt_calls = 0;
	adopt_fd = -1;
	ret = pl_fd_path_dev(path, &d);
	fd = model(path, &end);
	if (ret && ret != -ENOTDIR)
		abort();
	if (fd < 0) {
		if (ret || d || adopt_calls)
			abort();
	} else {
		bool known = pl_fd(fd) != NULL, adoptable = !known && fd < 8 && (dups >> fd & 1);

		if (adopt_calls != (known ? 0u : 1u) || (!known && adopt_fd != fd))
			abort();
		if (!known && !adoptable) {
			if (ret || d)
				abort();
		} else if (end < strlen(path)) {
			if (ret != -ENOTDIR || d)
				abort();
		} else if (ret || d != &dev) {
			abort();
		}
	}
	free(path);
	return 0;
}
