/* SPDX-License-Identifier: MIT */
/*
 * A file table (Linux's files_struct): the numbers a task names its open
 * files by. Each task's SQE fds and fixed-file registrations resolve in its
 * own table (core/task.h), so one task can only name what it opened itself.
 *
 * The engine has one for every task that brings none (in process: the
 * application's threads and rings); ucmdd gives each client its own.
 * Whatever the tables, the engine bounds the files open in all of them
 * (UCMD_MAX_FILES, -ENFILE beyond: Linux's file-max).
 *
 * A lookup takes a reference under the table's lock, so a number closed or
 * replaced meanwhile yields the file it named then or none, never another
 * task's.
 *
 * gen changes whenever a number stops naming the file it named (close,
 * replace), before the call returns: a submission's file cache
 * (core/submit.c) hands out its file again only while gen is what it was
 * at the lookup, so a file closed before an SQE is taken is never served
 * to it, as Linux's fget per SQE.
 */
#ifndef UCMD_CORE_FDTABLE_H
#define UCMD_CORE_FDTABLE_H

#include <pthread.h>

struct ucmd_file;

struct files_struct {
	pthread_mutex_t lock;
	unsigned max_fds;		/* numbers 0 .. max_fds - 1 */
	unsigned max_open;		/* files held at once (RLIMIT_NOFILE) */
	unsigned nr_open;
	struct ucmd_file **fd;		/* max_fds entries, NULL: free */
	unsigned gen;			/* changed under lock, read without (atomic) */
};

/* 0 or -ENOMEM. */
int files_init(struct files_struct *files, unsigned max_fds, unsigned max_open);
/* Close every number (dropping the table's references) and free the table. */
void files_exit(struct files_struct *files);
/* The file at fd with a reference (fput), or NULL. */
struct ucmd_file *files_fget(struct files_struct *files, int fd);
/* files_fget, and *gen: files_gen() as it was when the file was taken. */
struct ucmd_file *files_fget_gen(struct files_struct *files, int fd, unsigned *gen);
/* The table's generation: another value than a lookup's gen, a number it saw may name another file. */
static inline unsigned files_gen(const struct files_struct *files)
{
	return __atomic_load_n(&files->gen, __ATOMIC_ACQUIRE);
}
/* Install f (the table takes the caller's reference) at the lowest free number: it, or -EMFILE. */
int fd_install_lowest(struct files_struct *files, struct ucmd_file *f);
/*
 * dup2(2) for a file: f at number fd, whatever was there. fd, or -EBADF
 * (out of range), -EMFILE (a new number past max_open). *old: the file it
 * replaced (the caller's reference now: fput it), or NULL.
 */
int replace_fd(struct files_struct *files, int fd, struct ucmd_file *f, struct ucmd_file **old);
/* Forget fd and drop the table's reference: 0 or -EBADF. */
int close_fd(struct files_struct *files, int fd);

#endif
