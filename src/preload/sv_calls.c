/* SPDX-License-Identifier: MIT */
/*
 * The calls ucmd-supervise serves for a static program (sv.h), one
 * notification at a time, as the process that made it (the program, or a
 * descendant served as its own: sv_fork.c), sent to their family:
 * sv_open.c, sv_uring.c, sv_dev.c, sv_stat.c (the looks by path),
 * sv_dirs.c (sv_common.c has what they share).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/io_uring.h>

#include <ucmd/daemon.h>

#include "preload/preload.h"
#include "preload/sv.h"
#include "preload/svtab.h"

void sv_serve(struct sv *s, const struct seccomp_notif *req, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	pid_t tg = sv_tgid_of(s, (pid_t)req->pid);
	struct sv *root = s, *v = tg > 0 ? sv_view(s, tg, req->data.instruction_pointer) : NULL;

	/* a process we cannot serve as its own is judged by the program's rules: refused */
	if (v)
		s = v;
	memset(a, 0, sizeof(*a));
	switch (req->data.nr) {
	case __NR_open:
		sv_open(s, req, AT_FDCWD, g[0], (int)g[1], (mode_t)g[2], a);
		break;
	case __NR_creat:
		sv_open(s, req, AT_FDCWD, g[0], O_CREAT | O_WRONLY | O_TRUNC, (mode_t)g[1], a);
		break;
	case __NR_openat:
		sv_open(s, req, (int)g[0], g[1], (int)g[2], (mode_t)g[3], a);
		break;
	case __NR_io_uring_setup:
		sv_uring_setup(s, req, tg, a);
		break;
	case __NR_io_uring_enter:
		sv_uring_enter(s, req, tg, a);
		break;
	case __NR_io_uring_register:
		sv_uring_register(s, req, tg, a);
		break;
	case __NR_mmap:
		sv_mmap(s, req, a);
		break;
	case __NR_getdents64:
	case __NR_getdents:
		sv_getdents(root, req, tg, a);
		break;
	case __NR_newfstatat:
	case __NR_statx: {
		/* a device fd of ours (fstat's AT_EMPTY_PATH), else a path */
		struct sv_fd *f = sv_slot_of(s, g[0]);

		if (!(f && f->kind != SV_FREE && !f->closed))
			sv_path_call(s, req, a);
		else
			sv_fd_call(s, req, tg, a);
		break;
	}
	case __NR_stat:
	case __NR_lstat:
	case __NR_access:
	case __NR_faccessat:
	case __NR_faccessat2:
	case __NR_readlink:
	case __NR_readlinkat:
		sv_path_call(s, req, a);
		break;
	case __NR_rt_sigaction:	/* of SIGSYS, from a dynamic program (--dirs) */
		sv_sigaction(root, req, tg, a);
		break;
	case __NR_execve:
	case __NR_execveat:
		/* made by the kernel; whether it took is seen at the next call (sv_fork.c) */
		if (v)
			v->exec_pending = true;
		a->cont = true;
		break;
	case __NR_dup2:
	case __NR_dup3: {
		/* onto a number of ours (the filter sends only those) */
		struct sv_fd *f = sv_slot_of(s, g[1]);

		/* a dynamic program may hold it while we do not: its own (sv_slot_free skips it) */
		if (s->dirs && f && f->kind == SV_FREE)
			a->cont = true;
		else
			a->error = -EBADF;
		break;
	}
	default:
		if (req->data.nr == __NR_ioctl && (uint32_t)g[0] == PL_SV_TABLE_FD &&
		    ((uint32_t)g[1] == PL_SV_IOC_TABLE || (uint32_t)g[1] == PL_SV_IOC_ACK)) {
			sv_svtab_give(s, req, tg, a);
			break;
		}
		if (req->data.nr == __NR_ioctl && (uint32_t)g[0] == PL_SV_TABLE_FD &&
		    (uint32_t)g[1] == PL_SV_IOC_FDINFO) {
			sv_svtab_fdinfo(s, req, tg, a);
			break;
		}
		sv_fd_call(s, req, tg, a);
		break;
	}
	if (a->cont)
		root->passed++;
	else
		root->served++;
}
