/* SPDX-License-Identifier: MIT */
/*
 * stdio on a device fd. glibc's FILE reads and writes with its internal
 * read/write, which no interposer sees: a FILE on the placeholder (an
 * empty directory) would fail every read and write. So a FILE that fdopen (or
 * fopen of a device, paths.c) makes on a device fd is a fopencookie
 * stream whose read, write, seek and close are the interposers' (rw.c,
 * fdmap.c), and fileno() gives its descriptor back as for any FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload/preload.h"

#define MAX_STREAMS 256

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	FILE *f;
	int fd;
} streams[MAX_STREAMS];

static ssize_t s_read(void *c, char *buf, size_t n)
{
	return read((int)(intptr_t)c, buf, n);
}

static ssize_t s_write(void *c, const char *buf, size_t n)
{
	ssize_t w = write((int)(intptr_t)c, buf, n);

	/* a cookie writer reports failure with 0 (glibc then sets the error flag) */
	return w < 0 ? 0 : w;
}

static int s_seek(void *c, off64_t *pos, int whence)
{
	off_t r = lseek((int)(intptr_t)c, *pos, whence);

	if (r < 0)
		return -1;
	*pos = r;
	return 0;
}

static int s_close(void *c)
{
	int fd = (int)(intptr_t)c;

	pthread_mutex_lock(&streams_lock);
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i].f && streams[i].fd == fd)
			streams[i].f = NULL;
	pthread_mutex_unlock(&streams_lock);
	return close(fd);
}

/* The mode's access against the fd's, as glibc's fdopen checks it. */
static bool mode_fits(int fd, const char *mode)
{
	int fl = fcntl(fd, F_GETFL), acc;
	bool plus = strchr(mode, '+') != NULL;

	if (fl < 0)
		return false;
	/* an attribute opened for writing is read-only underneath (attrw.c): its open said both */
	acc = pl_attrw_fd(fd) ? O_RDWR : fl & O_ACCMODE;
	if (plus)
		return acc == O_RDWR;
	if (mode[0] == 'r')
		return acc != O_WRONLY;
	return acc != O_RDONLY;
}

PL_EXPORT FILE *fdopen(int fd, const char *mode)
{
	static const cookie_io_functions_t io = {
		.read = s_read, .write = s_write, .seek = s_seek, .close = s_close,
	};
	FILE *f;
	int i;

	/* an attribute opened for writing (attrw.c): its stream writes through write() too */
	if (!pl_fd(fd) && !pl_attrw_fd(fd)) {
		FILE *(*real)(int, const char *) = pl_next("fdopen");

		return real(fd, mode);
	}
	if (!mode || !strchr("rwa", mode[0]) || !mode_fits(fd, mode)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&streams_lock);
	for (i = 0; i < MAX_STREAMS && streams[i].f; i++)
		;
	if (i == MAX_STREAMS) {
		pthread_mutex_unlock(&streams_lock);
		errno = EMFILE;
		return NULL;
	}
	f = fopencookie((void *)(intptr_t)fd, mode, io);
	if (f) {
		streams[i].f = f;
		streams[i].fd = fd;
	}
	pthread_mutex_unlock(&streams_lock);
	return f;
}

static int stream_fd(FILE *f)
{
	int fd = -1;

	pthread_mutex_lock(&streams_lock);
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i].f == f) {
			fd = streams[i].fd;
			break;
		}
	pthread_mutex_unlock(&streams_lock);
	return fd;
}

PL_EXPORT int fileno(FILE *f)
{
	int fd = f ? stream_fd(f) : -1;

	if (fd >= 0)
		return fd;
	int (*real)(FILE *) = pl_next("fileno");

	return real(f);
}

PL_EXPORT int fileno_unlocked(FILE *f)
{
	int fd = f ? stream_fd(f) : -1;

	if (fd >= 0)
		return fd;
	int (*real)(FILE *) = pl_next("fileno_unlocked");

	return real(f);
}
