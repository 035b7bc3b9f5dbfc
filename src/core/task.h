/* SPDX-License-Identifier: MIT */
/*
 * A task: whom a ring works for (Linux's task_struct, as far as io_uring
 * looks at it). Every ring belongs to one: its mm is the address space every
 * address in the ring's SQEs names, its cred (when set) the identity frozen
 * for the ring's life.
 *
 * In process the task is the caller (init_task: this process's memory
 * through the fault guard, the credentials of whoever submits). ucmdd makes
 * one per client: the client's memory as a remote mm, opened as the client
 * (src/server/peer_mm.c), and the credentials it had at connect. The engine
 * never needs to know which: iov_iter and the user-copy helpers go through
 * the request's mm, and a driver that hands memory to a device bounces what
 * a remote mm holds when the request is issued (nvme/host/bounce.c).
 *
 * Its files (core/fdtable.h) are the table its SQE fds, fixed-file
 * registrations, opens and closes name: NULL for the engine's own (in
 * process), a table of its own per ucmdd client, so that a client's fd in
 * an SQE resolves in the engine exactly as the client numbered it.
 */
#ifndef UCMD_CORE_TASK_H
#define UCMD_CORE_TASK_H

#include "core/cred.h"
#include "uaccess/uaccess.h"

struct files_struct;

struct ucmd_task {
	/* NULL: the engine's table (struct ucmd_engine's files) */
	struct files_struct *files;
	const struct user_mm *mm;
	/* NULL: the submitter's, re-read when the process changes them */
	const struct ucmd_cred *cred;
};

extern const struct ucmd_task init_task;

/*
 * The task the calling thread acts for: init_task unless overridden.
 * The synchronous paths (ioctl) reach user memory through its mm, as
 * Linux's reach current's.
 */
const struct ucmd_task *current_task(void);
/*
 * Act for t on the calling thread (NULL: back to this process), its cred
 * included (cred_override_set); t outlives the override. ucmdd's threads
 * act for their client this way.
 */
void task_override_set(const struct ucmd_task *t);

#endif
