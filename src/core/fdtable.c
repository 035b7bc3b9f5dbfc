/* SPDX-License-Identifier: MIT */
/* File tables (core/fdtable.h). */
#include <errno.h>
#include <stdlib.h>

#include "core/fdtable.h"
#include "core/file.h"

int files_init(struct files_struct *files, unsigned max_fds, unsigned max_open)
{
	files->fd = calloc(max_fds, sizeof(*files->fd));
	if (!files->fd)
		return -ENOMEM;
	files->max_fds = max_fds;
	files->max_open = max_open;
	files->nr_open = 0;
	files->gen = 0;
	pthread_mutex_init(&files->lock, NULL);
	return 0;
}

void files_exit(struct files_struct *files)
{
	if (!files->fd)
		return;
	for (unsigned i = 0; i < files->max_fds; i++)
		close_fd(files, (int)i);
	free(files->fd);
	files->fd = NULL;
	pthread_mutex_destroy(&files->lock);
}

struct ucmd_file *files_fget_gen(struct files_struct *files, int fd, unsigned *gen)
{
	struct ucmd_file *f;

	if (fd < 0 || (unsigned)fd >= files->max_fds)
		return NULL;
	pthread_mutex_lock(&files->lock);
	f = files->fd[fd];
	if (f)
		get_file(f);
	*gen = files->gen;
	pthread_mutex_unlock(&files->lock);
	return f;
}

struct ucmd_file *files_fget(struct files_struct *files, int fd)
{
	unsigned gen;

	return files_fget_gen(files, fd, &gen);
}

/* A number stopped naming its file: under lock, before the caller returns. */
static void files_gen_bump(struct files_struct *files)
{
	__atomic_store_n(&files->gen, files->gen + 1, __ATOMIC_RELEASE);
}

int fd_install_lowest(struct files_struct *files, struct ucmd_file *f)
{
	int ret = -EMFILE;

	pthread_mutex_lock(&files->lock);
	/* the lowest free number, as open(2) gives */
	for (unsigned i = 0; i < files->max_fds && files->nr_open < files->max_open; i++) {
		if (!files->fd[i]) {
			files->fd[i] = f;
			files->nr_open++;
			ret = (int)i;
			break;
		}
	}
	pthread_mutex_unlock(&files->lock);
	return ret;
}

int replace_fd(struct files_struct *files, int fd, struct ucmd_file *f, struct ucmd_file **old)
{
	int ret = fd;

	*old = NULL;
	if (fd < 0 || (unsigned)fd >= files->max_fds)
		return -EBADF;
	pthread_mutex_lock(&files->lock);
	if (files->fd[fd]) {
		*old = files->fd[fd];
		files->fd[fd] = f;
		files_gen_bump(files);
	} else if (files->nr_open < files->max_open) {
		files->fd[fd] = f;
		files->nr_open++;
	} else {
		ret = -EMFILE;
	}
	pthread_mutex_unlock(&files->lock);
	return ret;
}

int close_fd(struct files_struct *files, int fd)
{
	struct ucmd_file *f;

	if (fd < 0 || (unsigned)fd >= files->max_fds)
		return -EBADF;
	pthread_mutex_lock(&files->lock);
	f = files->fd[fd];
	if (f) {
		files->fd[fd] = NULL;
		files->nr_open--;
		files_gen_bump(files);
	}
	pthread_mutex_unlock(&files->lock);
	if (!f)
		return -EBADF;
	/* a request that took its own reference keeps the file until it completes */
	fput(f);
	return 0;
}
