/* SPDX-License-Identifier: MIT */
/*
 * An open for a thread whose credentials, root or mount namespace are no
 * longer the ones the program started with (a root service that dropped to
 * a user, then exec'd: its dynamic loader's opens reach us): made as that
 * thread would make it, never with our rights, on a thread of ours that
 * answers the notification itself (a FIFO's open may wait for its other
 * end), after the host-NVMe check on what was opened. Where only its ids
 * changed (uids, gids, groups, effective capabilities: setpriv, a service
 * dropping to a user), that thread takes them on for itself alone and
 * opens (Linux's credentials are per thread), then ends. Where its root or
 * mount namespace changed too, a child process of ours takes on the
 * thread's mount namespace (setns, CAP_SYS_ADMIN), root (chroot to
 * /proc/TID/root) and ids, and opens into the descriptor table it shares
 * with us (CLONE_FILES). Both open from the thread's cwd or dirfd with its
 * umask. What cannot be taken on (no CAP_SYS_ADMIN for another mount
 * namespace, another user namespace, capabilities we lack) is EACCES: the
 * open is refused rather than made with other rights.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "preload/preload.h"
#include "preload/sv.h"
#include "preload/sv_ids.h"

struct open_as {
	struct sv *s;
	struct seccomp_notif req;	/* our copy: the loop's is reused */
	struct sv_ids id;
	int dfd;			/* the thread's cwd or dirfd (O_PATH), or AT_FDCWD */
	int rootfd;			/* the thread's root (O_PATH) */
	int nsfd;			/* the thread's mount namespace, or -1: ours */
	bool chroot;			/* its root is not ours (or its namespace is not) */
	int flags;
	mode_t mode;
	int fd, err;			/* the child's answer */
	char path[];
};

/*
 * In the child, or in our thread that opens (its file system context its
 * own): become the thread, as far as opening a file goes, with calls that
 * change the caller's credentials alone. 0 or -errno.
 */
static int become(const struct open_as *j)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	gid_t groups[SV_IDS_GROUPS_MAX], ours[SV_IDS_GROUPS_MAX];
	const struct sv_ids *id = &j->id;
	uid_t r, e, su;
	gid_t gr, ge, gs;
	int n;

	if (j->nsfd >= 0 && setns(j->nsfd, CLONE_NEWNS))
		return -EACCES;
	if (j->chroot && (fchdir(j->rootfd) || chroot(".")))
		return -EACCES;
	umask((mode_t)id->umask);
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -EACCES;
	/* each set only where it differs: without CAP_SETUID, setting one's own ids again is refused */
	for (int i = 0; i < id->ngroups; i++)
		groups[i] = id->groups[i];
	n = (int)syscall(SYS_getgroups, SV_IDS_GROUPS_MAX, ours);
	if ((n != id->ngroups || memcmp(ours, groups, sizeof(gid_t) * (size_t)n)) &&
	    syscall(SYS_setgroups, id->ngroups, groups))
		return -EACCES;
	if (syscall(SYS_getresgid, &gr, &ge, &gs) ||
	    ((gr != id->gid[0] || ge != id->gid[1] || gs != id->gid[2]) &&
	     syscall(SYS_setresgid, id->gid[0], id->gid[1], id->gid[2])))
		return -EACCES;
	if (syscall(SYS_getresuid, &r, &e, &su) ||
	    ((r != id->uid[0] || e != id->uid[1] || su != id->uid[2]) &&
	     syscall(SYS_setresuid, id->uid[0], id->uid[1], id->uid[2])))
		return -EACCES;
	/* setresuid took the effective set away; fsgid and fsuid need it */
	if (syscall(SYS_capget, &h, d))
		return -EACCES;
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	if (syscall(SYS_capset, &h, d))
		return -EACCES;
	setfsgid(id->gid[3]);
	setfsuid(id->uid[3]);
	if ((unsigned)setfsgid((gid_t)-1) != id->gid[3] || (unsigned)setfsuid((uid_t)-1) != id->uid[3])
		return -EACCES;
	/* the thread's effective capabilities, as far as we hold them (never more) */
	d[0].effective &= (uint32_t)id->cap_eff;
	d[1].effective &= (uint32_t)(id->cap_eff >> 32);
	d[0].permitted = d[0].effective;
	d[1].permitted = d[1].effective;
	d[0].inheritable = d[1].inheritable = 0;
	if (syscall(SYS_capset, &h, d))
		return -EACCES;
	return 0;
}

/*
 * The child: shares our memory and descriptor table (so what it opens is
 * ours at once), not our credentials, root or namespace, which it changes
 * for itself alone. Raw system calls only: it runs on a stack of its own
 * while the thread that made it waits (CLONE_VFORK).
 */
static int child(void *arg)
{
	struct open_as *j = arg;
	int err = become(j), fd = -1;

	if (!err) {
		fd = openat(j->dfd >= 0 ? j->dfd : AT_FDCWD, j->path, j->flags | O_CLOEXEC, j->mode);
		err = fd < 0 ? -errno : 0;
	}
	j->fd = fd;
	j->err = err;
	return 0;
}

/*
 * The thread's root and mount namespace are ours, only its ids differ:
 * this thread of ours takes them on for itself alone and opens. Linux's
 * credentials are a thread's own: the raw calls of become() change no
 * other thread's (libc's setuid family would change every thread's), and
 * the umask is this thread's once it has a file system context of its own
 * (unshare CLONE_FS). The thread ends after this open, its credentials
 * with it; it answers the program meanwhile (sv_host_nvme reads our own
 * /proc/self/fd, which every thread of ours may, whatever its ids).
 */
static void open_here(struct open_as *j)
{
	int err = unshare(CLONE_FS) ? -EACCES : become(j);
	struct stat st;
	int probe;

	if (!err) {
		j->fd = openat(j->dfd >= 0 ? j->dfd : AT_FDCWD, j->path, j->flags | O_CLOEXEC, j->mode);
		err = j->fd < 0 ? -errno : 0;
	}
	/*
	 * A device is judged by /proc/devices (hostnvme.c), which judges none
	 * it cannot read: with these ids it must be readable (it is, 0444,
	 * where no security module says otherwise), or the device is refused.
	 */
	if (!err && !fstat(j->fd, &st) && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
		probe = open("/proc/devices", O_RDONLY | O_CLOEXEC);
		if (probe < 0) {
			sv_trace(j->s, "%s: /proc/devices cannot be read as thread %d: EACCES",
				 j->path, (int)j->req.pid);
			close(j->fd);
			j->fd = -1;
			err = -EACCES;
		} else {
			close(probe);
		}
	}
	j->err = err;
}

/* Another root or mount namespace: a child process, which changes them for itself alone. */
static int open_in_child(struct open_as *j)
{
	size_t stack_len = 64 * 1024;
	char *stack = malloc(stack_len);
	pid_t pid;
	int st;

	if (!stack)
		return -ENOMEM;
	/* a fork would copy our page tables (the program's mappings among them): milliseconds */
	pid = clone(child, stack + stack_len, CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, j);
	if (pid < 0) {
		free(stack);
		return -errno;
	}
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
	free(stack);
	return 0;
}

static void *open_as_run(void *arg)
{
	struct open_as *j = arg;
	struct seccomp_notif_resp resp = { .id = j->req.id };
	struct sv_ans a = { 0 };

	j->fd = -1;
	j->err = -EIO;
	if (j->chroot || j->nsfd >= 0)
		a.error = open_in_child(j);
	else
		open_here(j);
	if (a.error)
		goto answer;
	if (j->fd < 0) {
		a.error = j->err ? j->err : -EIO;
		sv_trace(j->s, "%s, opened as thread %d would: %s", j->path, (int)j->req.pid,
			 strerror(-a.error));
		goto answer;
	}
	a.error = sv_host_nvme(j->fd);
	if (!a.error)
		sv_addfd_send(j->s, &j->req, j->fd, -1, j->flags & O_CLOEXEC, &a);
	close(j->fd);
answer:
	if (!a.sent) {
		resp.error = a.error ? a.error : -EIO;
		ioctl(j->s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	if (j->dfd >= 0)
		close(j->dfd);
	close(j->rootfd);
	if (j->nsfd >= 0)
		close(j->nsfd);
	free(j);
	return NULL;
}

void sv_open_as(struct sv *s, const struct seccomp_notif *req, const struct sv_ids *ids, int dfd,
		const char *path, int flags, mode_t mode, struct sv_ans *a)
{
	size_t len = strlen(path) + 1;
	struct open_as *j = calloc(1, sizeof(*j) + len);
	char proc[64], link[96];
	pthread_attr_t at;
	pthread_t t;
	int ret;

	if (!j) {
		a->error = -ENOMEM;
		return;
	}
	*j = (struct open_as){ .s = s, .req = *req, .id = *ids, .dfd = -1, .rootfd = -1,
			       .nsfd = -1, .flags = flags, .mode = mode };
	memcpy(j->path, path, len);
	snprintf(proc, sizeof(proc), "/proc/%d", (int)req->pid);
	/* more groups than we hold: not ours to take on */
	ret = ids->ngroups > SV_IDS_GROUPS_MAX ? -EACCES : 0;
	snprintf(link, sizeof(link), "%s/ns/user", proc);
	/* its capabilities are another user namespace's: we cannot take them on */
	if (!ret && !sv_same_file(link, "/proc/self/ns/user"))
		ret = -EACCES;
	if (ret)
		goto fail;
	snprintf(link, sizeof(link), "%s/root", proc);
	j->rootfd = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (j->rootfd < 0) {
		ret = errno == ENOENT ? -ESRCH : -errno;
		goto fail;
	}
	j->chroot = !sv_same_file(link, "/proc/self/root");
	snprintf(link, sizeof(link), "%s/ns/mnt", proc);
	if (!sv_same_file(link, "/proc/self/ns/mnt")) {
		j->chroot = true;
		j->nsfd = open(link, O_RDONLY | O_CLOEXEC);
		if (j->nsfd < 0) {
			ret = -EACCES;
			goto fail;
		}
	}
	if (dfd >= 0) {
		j->dfd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
		if (j->dfd < 0) {
			ret = -errno;
			goto fail;
		}
	}
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&t, &at, open_as_run, j);
	pthread_attr_destroy(&at);
	if (ret)
		goto fail;
	a->sent = true;	/* the thread answers */
	return;
fail:
	if (j->dfd >= 0)
		close(j->dfd);
	if (j->rootfd >= 0)
		close(j->rootfd);
	if (j->nsfd >= 0)
		close(j->nsfd);
	free(j);
	a->error = ret;
}
