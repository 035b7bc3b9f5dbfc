/* SPDX-License-Identifier: MIT */
/*
 * The program's descendants (fork, clone without CLONE_VM, what they exec)
 * served as Linux serves them (sv.h). The filter is inherited, so their
 * calls come here too; each such process is a view of its own: its table
 * of our numbers, its own connection to the daemon acting in its own
 * memory (UCMDD_ADOPT takes any descendant of ours), its own rings.
 *
 * What a child inherits is found, not guessed: we keep a reference to the
 * file behind every descriptor we gave (an open file description, struct
 * sv_desc), and kcmp(KCMP_FILE) tells which of them each of the child's
 * numbers SV_FD_BASE.. is, at its first call. A device so inherited shares
 * its description with the parent -- the file position of nvmeXnY moves
 * for both, as on Linux -- and is opened on the child's connection under
 * the same number. A ring inherited is the parent's ring, whose requests
 * the daemon runs in the parent's memory: the child's io_uring_enter and
 * io_uring_register on it are EEXIST (Linux's answer for a ring whose
 * submitter is another task, IORING_SETUP_SINGLE_ISSUER), but for an
 * SQPOLL ring's enter, served on its maker's ring (sv_uring.c); its
 * mappings and close are the kernel's. A description lives while a process holds it:
 * when the last served holder lets go, the descendants not yet seen are
 * looked for it (the supervisor is their subreaper, so orphans stay ours)
 * and become views if they hold it; a device's stays known, with none of
 * our numbers, while a copy below them holds it (the program's own dup),
 * for the preload to be told which device that copy is.
 *
 * An exec is seen at the process's next call after its execve (which the
 * filter sends us, to be let through; every call of a dynamic program's
 * under --dirs, which has no such note): the memory it had when we first
 * saw it (its /proc/PID/mem, opened then) reads nothing once its image is
 * gone. Its view is then made anew from what it still holds (what
 * was not close-on-exec) on a new connection, as the daemon cuts the old
 * one off. A process that shares its parent's memory (vfork, clone with
 * CLONE_VM, until it execs) gets no view: it is refused as before
 * (EOPNOTSUPP, EBADF), since nothing could tell its exec from its parent's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kcmp.h>

#ifndef P_PIDFD
#define P_PIDFD 3	/* Linux 5.4 */
#endif

#include <ucmd/daemon.h>

#include "preload/sv.h"

#define SV_VIEWS_MAX 128

static struct sv_desc *descs;		/* every live description */
static struct sv *views[SV_VIEWS_MAX];	/* the descendants served (not the program) */
static int nviews;

static long kcmp(pid_t a, pid_t b, int type, unsigned long x, unsigned long y)
{
	return syscall(SYS_kcmp, a, b, type, x, y);
}

int sv_desc_new(struct sv *s, struct sv_fd *f, int file)
{
	struct sv_desc *d = calloc(1, sizeof(*d));

	(void)s;
	if (!d)
		return -ENOMEM;
	d->file = fcntl(file, F_DUPFD_CLOEXEC, 0);
	if (d->file < 0) {
		free(d);
		return -errno;
	}
	d->refs = 1;
	d->tmpl = *f;
	d->tmpl.desc = d;
	d->tmpl.own_fd = -1;
	d->tmpl.regs = 0;
	d->tmpl.closed = false;
	if (f->kind == SV_RING) {
		/* another process's copy: only the memfd's identity (its mappings) is used */
		d->tmpl.foreign = true;
		d->tmpl.ring.ring_fd = d->file;
		d->owner = f;
	} else {
		d->tmpl.attach = f->kind == SV_DEV;	/* an attribute's is the kernel's file alone */
	}
	d->next = descs;
	descs = d;
	f->desc = d;
	return 0;
}

struct sv_desc *sv_desc_of(pid_t pid, int fd)
{
	pid_t self = getpid();

	for (struct sv_desc *d = descs; d; d = d->next)
		if (!kcmp(self, pid, KCMP_FILE, (unsigned long)d->file, (unsigned long)fd))
			return d;
	return NULL;
}

/* ---- the descendants ---- */

static pid_t ppid_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the command name may hold anything */
	return p && sscanf(p + 1, " %*c %d", &pp) == 1 ? pp : -1;
}

static bool is_descendant(pid_t pid)
{
	pid_t self = getpid();

	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		pid = ppid_of(pid);
		if (pid == self)
			return true;
	}
	return false;
}

static struct sv **view_slot(pid_t pid)
{
	for (int i = 0; i < nviews; i++)
		if (views[i]->pid == pid)
			return &views[i];
	return NULL;
}

static bool holds_number(pid_t pid, unsigned fd)
{
	char path[64], t[8];

	snprintf(path, sizeof(path), "/proc/%d/fd/%u", (int)pid, fd);
	return readlink(path, t, sizeof(t)) >= 0;
}

/* The descriptions process v->pid holds at our numbers, into v's empty table. */
static void find_table(struct sv *v)
{
	pid_t self = getpid();

	for (unsigned i = 0; i < SV_FD_NR; i++) {
		if (!holds_number(v->pid, SV_FD_BASE + i))
			continue;
		for (struct sv_desc *d = descs; d; d = d->next) {
			if (kcmp(self, v->pid, KCMP_FILE, (unsigned long)d->file, SV_FD_BASE + i))
				continue;
			v->fds[i] = d->tmpl;
			d->refs++;
			break;
		}
	}
}

static int mem_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* A view of descendant pid, its table found: NULL when it shares its parent's memory. */
static struct sv *view_make(struct sv *root, pid_t pid)
{
	pid_t pp = ppid_of(pid);
	struct sv *v;

	if (pp > 0 && pp != getpid() && !kcmp(pid, pp, KCMP_VM, 0, 0)) {
		sv_trace(root, "pid %d shares its parent's memory (vfork): not served", (int)pid);
		return NULL;
	}
	if (nviews == SV_VIEWS_MAX) {
		sv_trace(root, "pid %d: %d processes served already: not served", (int)pid, nviews);
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->sock = root->sock;
	v->pid = pid;
	v->root = root;
	v->listener = root->listener;
	v->phdir = root->phdir;
	v->names = root->names;
	v->nr_names = root->nr_names;
	v->trace = root->trace;
	v->dirs = root->dirs;
	v->dev_dev = root->dev_dev;
	v->dev_ino = root->dev_ino;
	v->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	v->memfd = mem_open(pid);
	if (v->pidfd < 0 || v->memfd < 0) {
		if (v->pidfd >= 0)
			close(v->pidfd);
		if (v->memfd >= 0)
			close(v->memfd);
		free(v);
		return NULL;
	}
	find_table(v);
	views[nviews++] = v;
	sv_trace(root, "pid %d served as a process of its own", (int)pid);
	return v;
}

/* Everything v holds of ours and of the daemon's goes (not its pid, pidfd). */
static void view_clear(struct sv *v)
{
	for (unsigned i = 0; i < SV_FD_NR; i++) {
		struct sv_fd *f = &v->fds[i];

		if (f->kind == SV_DEV)
			sv_own_close(v, f);
		if (f->kind == SV_RING && !f->foreign)
			ucmd_queue_exit(&f->ring);	/* registrations or not: it is gone */
		if (f->kind != SV_FREE)
			sv_desc_put(v, f);
		memset(f, 0, sizeof(*f));
	}
	memset(v->regs, 0, sizeof(v->regs));
	if (v->io_live)
		ucmd_queue_exit(&v->io);
	v->io_live = false;
	if (v->own) {
		ucmd_queue_exit(&v->own_ring);
		ucmd_buf_free(v->own, v->own_buf);
		ucmd_engine_free(v->own);
	}
	v->own = NULL;
	v->own_buf = NULL;
	if (v->adopted || v != v->root) {
		ucmd_engine_free(v->e);
		v->e = NULL;
	}
	v->adopted = false;
	if (v->memfd >= 0)
		close(v->memfd);
	v->memfd = -1;
}

static void view_free(struct sv **slot)
{
	struct sv *v = *slot;

	view_clear(v);
	sv_svtab_release(v);
	/* an orphan given to us (PR_SET_CHILD_SUBREAPER): ours to reap; by pidfd, never a reused pid */
	waitid((idtype_t)P_PIDFD, (id_t)v->pidfd, &(siginfo_t){ 0 }, WEXITED | WNOHANG);
	close(v->pidfd);
	*slot = views[--nviews];
	free(v);
}

/*
 * v exec'd: what it still holds (not close-on-exec) is found anew, before
 * the old table lets go of it, on a connection made on need.
 */
static void view_exec(struct sv *v)
{
	struct sv_fd *old = malloc(sizeof(v->fds));
	struct sv tmp;

	sv_trace(v, "exec'd: its descriptors found anew, a new connection");
	if (!old) {
		view_clear(v);
		v->memfd = mem_open(v->pid);
		sv_svtab_rewrite(v);
		return;
	}
	tmp = *v;
	memset(tmp.fds, 0, sizeof(tmp.fds));
	find_table(&tmp);
	memcpy(old, tmp.fds, sizeof(v->fds));
	view_clear(v);
	memcpy(v->fds, old, sizeof(v->fds));
	free(old);
	v->memfd = mem_open(v->pid);
	sv_svtab_rewrite(v);	/* the new image's preload mirrors what it kept */
}

struct sv *sv_view(struct sv *root, pid_t tg, uint64_t ip)
{
	struct sv **slot;
	struct sv *v;
	char b;

	if (!root->root) {
		root->root = root;
		root->memfd = mem_open(root->pid);
	}
	if (tg == root->pid) {
		v = root;
	} else {
		slot = view_slot(tg);
		if (!slot)
			return is_descendant(tg) ? view_make(root, tg) : NULL;
		v = *slot;
	}
	/*
	 * A static program's exec is a call we are sent; a dynamic one's (--dirs)
	 * is not, so each of its calls looks. The look stays on after an exec
	 * that failed (or one another thread's call raced): it is only cost.
	 */
	if ((v->exec_pending || v->dirs) && v->memfd >= 0 && pread(v->memfd, &b, 1, (off_t)ip) != 1) {
		view_exec(v);
		v->exec_pending = false;
	}
	return v;
}

/* ---- a description let go ---- */

/*
 * Call fn(root, pid, arg) for every descendant of the program's (the
 * program itself and this process left out) until fn returns true: the
 * one walk of /proc the looks below share. Returns whether fn did.
 */
static bool for_each_descendant(struct sv *root, bool (*fn)(struct sv *, pid_t, void *),
				void *arg)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	bool stop = false;

	if (!dir)
		return false;
	while (!stop && (de = readdir(dir))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid > 0 && pid != self && pid != root->pid && is_descendant(pid))
			stop = fn(root, pid, arg);
	}
	closedir(dir);
	return stop;
}

/* A descendant not yet served that holds d becomes a view (and so holds it). */
static bool adopt_holder(struct sv *root, pid_t pid, void *arg)
{
	const struct sv_desc *d = arg;

	if (view_slot(pid))
		return false;
	for (unsigned i = 0; i < SV_FD_NR; i++)
		if (!kcmp(getpid(), pid, KCMP_FILE, (unsigned long)d->file, SV_FD_BASE + i)) {
			view_make(root, pid);
			break;
		}
	return false;	/* every holder, not the first */
}

static void find_holders(struct sv *root, struct sv_desc *d)
{
	for_each_descendant(root, adopt_holder, d);
}

/*
 * Does process pid hold d's file at a number below ours: a copy it made
 * with its own dup, dup2, dup3 or fcntl(F_DUPFD), which no filter sees?
 * Only a link into our placeholders' directory (phdir) is compared.
 */
static bool holds_copy(pid_t pid, const char *phdir, const struct sv_desc *d)
{
	char path[64], target[PATH_MAX];
	size_t plen = strlen(phdir);
	pid_t self = getpid();
	struct dirent *de;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		int fd = atoi(de->d_name);
		ssize_t n;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || (unsigned)fd >= SV_FD_BASE)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= (ssize_t)plen || strncmp(target, phdir, plen) || target[plen] != '/')
			continue;
		found = !kcmp(self, pid, KCMP_FILE, (unsigned long)d->file, (unsigned long)fd);
	}
	closedir(dir);
	return found;
}

static bool copy_held_by(struct sv *root, pid_t pid, void *arg)
{
	return holds_copy(pid, root->phdir, arg);
}

/* Does the program or a descendant of it hold a copy of device d below our numbers? */
static bool copy_held(struct sv *root, const struct sv_desc *d)
{
	if (d->tmpl.kind != SV_DEV || !root->phdir)
		return false;
	if (holds_copy(root->pid, root->phdir, d))
		return true;
	return for_each_descendant(root, copy_held_by, (void *)d);
}

static void desc_free(struct sv_desc *d)
{
	struct sv_desc **p;

	for (p = &descs; *p != d; p = &(*p)->next)
		;
	*p = d->next;
	close(d->file);
	free(d);
}

/*
 * A device description none of our numbers names any more but that a
 * copy below them still holds stays known (refs 0), so that an image
 * exec'd with the copy, or the preload at the copy's first call, is told
 * which device it is (sv_svtab_fdinfo); it goes once no copy is left,
 * looked at whenever a description is let go.
 */
static void lingering_sweep(struct sv *root, const struct sv_desc *skip)
{
	struct sv_desc *d = descs, *next;

	for (; d; d = next) {
		next = d->next;
		if (!d->refs && d != skip && !copy_held(root, d))
			desc_free(d);
	}
}

void sv_desc_put(struct sv *s, struct sv_fd *f)
{
	struct sv *root = s->root ? s->root : s;
	struct sv_desc *d = f->desc;

	f->desc = NULL;
	if (d && d->owner == f)
		d->owner = NULL;	/* the maker closed its ring or is gone: its ring goes */
	if (!d || --d->refs)
		return;
	find_holders(root, d);
	if (d->refs)
		return;
	lingering_sweep(root, d);
	if (!copy_held(root, d))
		desc_free(d);
}

int sv_attach(struct sv *s, struct sv_fd *f)
{
	int fd = (int)SV_FD_BASE + (int)(f - s->fds);
	int ret = dc_open_fixed(s->e, f->name, f->oflags & O_ACCMODE, fd);

	f->attach = false;
	f->attach_err = ret < 0 ? ret : 0;
	if (ret < 0)
		sv_trace(s, "the inherited %s at %d, on this process's connection: %s", f->name, fd,
			 strerror(-ret));
	return ret < 0 ? ret : 0;
}

/* ---- the loop's side ---- */

int sv_views_pollfds(struct pollfd *pf, int max)
{
	int n = nviews < max ? nviews : max;

	for (int i = 0; i < n; i++)
		pf[i] = (struct pollfd){ views[i]->pidfd, POLLIN, 0 };
	return n;
}

void sv_views_exited(struct sv *root, const struct pollfd *pf, int n)
{
	(void)root;
	for (int i = 0; i < n; i++) {
		struct sv **slot;

		if (!pf[i].revents)
			continue;
		/* the table moves as views go: find it by its pidfd */
		for (int k = 0; k < nviews; k++)
			if (views[k]->pidfd == pf[i].fd) {
				slot = &views[k];
				sv_trace(*slot, "exited: its connection and descriptors released");
				view_free(slot);
				break;
			}
	}
}

void sv_views_end(struct sv *root)
{
	(void)root;
	while (nviews)
		view_free(&views[nviews - 1]);
}
