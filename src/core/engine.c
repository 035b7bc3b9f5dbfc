/* SPDX-License-Identifier: MIT */
/*
 * The engine: the devices and open files of one "kernel", shared by every
 * ring created on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/null.h"
#include "lib/error.h"
#include "security/hooks.h"

static pthread_once_t optable_once = PTHREAD_ONCE_INIT;
static int optable_err;	/* io_issue_defs failed its check */

static void optable_init(void)
{
	optable_err = io_uring_optable_init();
}

struct ucmd_engine *backend_engine_alloc(const struct ucmd_backend *ops, void *priv)
{
	struct ucmd_engine *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->ops = ops;
	e->priv = priv;
	if (files_init(&e->files, UCMD_MAX_FILES, UCMD_MAX_FILES)) {
		free(e);
		return NULL;
	}
	pthread_mutex_init(&e->lock, NULL);
	return e;
}

void backend_engine_release(struct ucmd_engine *e)
{
	files_exit(&e->files);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

void *backend_engine_priv(const struct ucmd_engine *e)
{
	return e->priv;
}

const struct ucmd_backend *backend_engine_ops(const struct ucmd_engine *e)
{
	return e->ops;
}

void *backend_buf_alloc_pages(struct ucmd_engine *e, size_t len)
{
	size_t plen = (len + 4095) & ~(size_t)4095;
	void *p;

	(void)e;
	if (!len || plen < len) {
		errno = EINVAL;
		return NULL;
	}
	p = aligned_alloc(4096, plen);
	if (p)
		memset(p, 0, plen);
	return p;
}

void backend_buf_free_pages(struct ucmd_engine *e, void *p)
{
	(void)e;
	free(p);
}

/* The engine's own devices; the security modules are installed after. */
int native_engine_init(struct ucmd_engine *e)
{
	pthread_once(&optable_once, optable_init);
	if (optable_err)
		return optable_err;
	/* Every engine has a null device, as every Linux system has /dev/null. */
	return null_register(e);
}

/* Close the engine's files, drop its devices and its chain (not the modules). */
void native_engine_fini(struct ucmd_engine *e)
{
	/* the engine's own table; a task with its own closes it itself */
	for (int fd = 0; fd < UCMD_MAX_FILES; fd++)
		close_fd(&e->files, fd);
	while (e->devices) {
		struct ucmd_device *d = e->devices;
		e->devices = d->next;
		free(d);
	}
	security_engine_free(e);
}

static struct ucmd_engine *default_engine;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_engine_init(void)
{
	default_engine = ucmd_engine_new();
}

struct ucmd_engine *ucmd_engine_default(void)
{
	pthread_once(&default_once, default_engine_init);
	return default_engine;
}

int engine_add_device(struct ucmd_engine *e, const char *name,
			   const struct ucmd_file_ops *ops, void *priv)
{
	struct ucmd_device *d;

	if (!name || !*name || strlen(name) >= sizeof(d->name) || !ops)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->ops = ops;
	d->priv = priv;
	pthread_mutex_lock(&e->lock);
	for (struct ucmd_device *x = e->devices; x; x = x->next) {
		if (!strcmp(x->name, name)) {
			pthread_mutex_unlock(&e->lock);
			free(d);
			return -EEXIST;
		}
	}
	/* Append, so that listings come out in registration order. */
	struct ucmd_device **pp = &e->devices;
	while (*pp)
		pp = &(*pp)->next;
	*pp = d;
	pthread_mutex_unlock(&e->lock);
	return 0;
}

int engine_remove_device(struct ucmd_engine *e, const char *name)
{
	pthread_mutex_lock(&e->lock);
	for (struct ucmd_device **pp = &e->devices; *pp; pp = &(*pp)->next) {
		struct ucmd_device *d = *pp;
		if (strcmp(d->name, name))
			continue;
		/* open in any task's table */
		if (atomic_load(&d->opens)) {
			pthread_mutex_unlock(&e->lock);
			return -EBUSY;
		}
		*pp = d->next;
		pthread_mutex_unlock(&e->lock);
		free(d);
		return 0;
	}
	pthread_mutex_unlock(&e->lock);
	return -ENOENT;
}

/*
 * Free an unlinked device once no file has it open: whichever of the
 * unlink and the last file's release sees both conditions frees it, once.
 */
static void device_maybe_free(struct ucmd_device *d)
{
	if (atomic_load(&d->unlinked) && atomic_load(&d->opens) == 0 &&
	    !atomic_exchange(&d->freed, true))
		free(d);
}

int engine_unlink_device(struct ucmd_engine *e, const char *name)
{
	pthread_mutex_lock(&e->lock);
	for (struct ucmd_device **pp = &e->devices; *pp; pp = &(*pp)->next) {
		struct ucmd_device *d = *pp;

		if (strcmp(d->name, name))
			continue;
		*pp = d->next;
		pthread_mutex_unlock(&e->lock);
		/* an open file still points at it: it stays, as an unlinked inode does */
		atomic_store(&d->unlinked, true);
		device_maybe_free(d);
		return 0;
	}
	pthread_mutex_unlock(&e->lock);
	return -ENOENT;
}

/* Caller holds e->lock. */
static struct ucmd_device *find_device_locked(struct ucmd_engine *e, const char *name)
{
	for (struct ucmd_device *d = e->devices; d; d = d->next)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

struct ucmd_device *engine_find_device(struct ucmd_engine *e, const char *name)
{
	struct ucmd_device *found;

	pthread_mutex_lock(&e->lock);
	found = find_device_locked(e, name);
	pthread_mutex_unlock(&e->lock);
	return found;
}

int native_device_names(struct ucmd_engine *e, const char **names, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&e->lock);
	for (struct ucmd_device *d = e->devices; d; d = d->next) {
		if (n < max)
			names[n] = d->name;
		n++;
	}
	pthread_mutex_unlock(&e->lock);
	return (int)n;
}

int native_regs_read(struct ucmd_engine *e, int fd, uint32_t off, void *buf, size_t len)
{
	struct ucmd_file *f = fget(e, fd);
	int ret;

	if (!f)
		return -EBADF;
	ret = f->ops->regs_read ? f->ops->regs_read(f, off, buf, len) : -ENOTTY;
	fput(f);
	return ret;
}

int native_disk_stat(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out)
{
	struct ucmd_device *d;

	/* Under the lock: the device (and its namespace) cannot go away meanwhile. */
	int ret = -ENOENT;

	pthread_mutex_lock(&e->lock);
	d = find_device_locked(e, name);
	if (d && !d->ops->disk_stat) {
		ret = -ENOTBLK;
	} else if (d) {
		memset(out, 0, sizeof(*out));
		ret = d->ops->disk_stat(d->priv, out);
	}
	pthread_mutex_unlock(&e->lock);
	return ret;
}

int filp_open(struct ucmd_engine *e, const char *name, int flags, struct ucmd_file **out)
{
	struct ucmd_device *d;
	struct ucmd_file *f;
	int acc = flags & O_ACCMODE, ret;

	if (acc != O_RDONLY && acc != O_WRONLY && acc != O_RDWR)
		return -EINVAL;
	d = engine_find_device(e, name);
	if (!d)
		return -ENOENT;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	/* the engine's bound, whichever table the file goes to */
	if (atomic_fetch_add(&e->nr_files, 1) >= UCMD_MAX_FILES) {
		atomic_fetch_sub(&e->nr_files, 1);
		free(f);
		return -ENFILE;
	}
	f->counted = true;
	f->ops = d->ops;
	f->dev = d;
	atomic_fetch_add(&d->opens, 1);
	f->engine = e;
	f->private_data = d->priv;
	f->f_flags = flags;
	f->f_mode = (acc == O_RDONLY ? FMODE_READ : acc == O_WRONLY ? FMODE_WRITE
							     : FMODE_READ | FMODE_WRITE);
	current_cred(&f->cred);
	atomic_init(&f->refs, 1);
	if (f->ops->open && (ret = f->ops->open(f)) < 0) {
		atomic_fetch_sub(&d->opens, 1);
		atomic_fetch_sub(&e->nr_files, 1);
		free(f);
		return ret;
	}
	*out = f;
	return 0;
}

int native_open(struct ucmd_engine *e, const char *name, int flags)
{
	struct ucmd_file *f;
	int fd = filp_open(e, name, flags, &f);

	if (fd < 0)
		return fd;
	/* the number is the current task's */
	fd = fd_install_lowest(task_files(e, current_task()), f);
	if (fd < 0)
		fput(f);
	return fd;
}

int native_close(struct ucmd_engine *e, int fd)
{
	return close_fd(task_files(e, current_task()), fd);
}

int native_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg)
{
	struct ucmd_file *f = fget(e, fd);
	long ret;

	if (!f)
		return -EBADF;
	ret = vfs_ioctl(f, cmd, arg);
	fput(f);
	return (int)ret;
}

struct ucmd_file *fget(struct ucmd_engine *e, int fd)
{
	return files_fget(task_files(e, current_task()), fd);
}

void get_file(struct ucmd_file *f)
{
	atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
}

void fput(struct ucmd_file *f)
{
	if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (f->ops->release)
		f->ops->release(f);
	if (f->dev) {
		atomic_fetch_sub(&f->dev->opens, 1);
		device_maybe_free(f->dev);
	}
	if (f->counted)
		atomic_fetch_sub(&f->engine->nr_files, 1);
	free(f);
}
