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
};

/* 0 or -ENOMEM. */
int files_init(struct files_struct *files, unsigned max_fds, unsigned max_open);
/* Close every number (dropping the table's references) and free the table. */
void files_exit(struct files_struct *files);
/* The file at fd with a reference (fput), or NULL. */
struct ucmd_file *files_fget(struct files_struct *files, int fd);
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
