// SPDX-License-Identifier: MIT
/*
 * Whose /dev and /sys a thread's path reaches (preload.h, "view.c"):
 * ucmd's, which stand in for the directories of the program's root and
 * mount namespace at its start, or the thread's own, once it has changed
 * either (chroot, unshare(CLONE_NEWNS), setns). On Linux a chrooted
 * program sees ucmd's /dev only if its new root holds that very /dev (a
 * bind mount of it), and "/dev/ng0n1" in a root without /dev is ENOENT.
 *
 * One verdict for both judges: ucmd-supervise (sv_tview.c), which looks
 * at another thread through /proc/TID, and the preload (paths.c), which
 * looks at its own thread from the inside. Each tells how it found the
 * thread's view; this file says what follows.
 *
 * The preload's reference is what "/", "/dev" and "/sys" were when the
 * first image of the exec started (UCMD_EXEC_VIEW, kept across exec as the
 * preload's other variables, execraw.c): an image exec'd after a chroot
 * still compares with the program's start, as the supervisor does. It
 * looks only once the process may have left that view: its filter traps
 * chroot, pivot_root, unshare and setns (seccomp.c), and an image that
 * starts elsewhere than the reference knows it at once; until then a path
 * costs no look more than before.
 */
#undef _FILE_OFFSET_BITS

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "preload.h"

/* The top a path falls under, "/dev" or "/sys", or NULL. */
static const char *top_of(const char *folded)
{
	return pl_path_under(folded, "/dev") ? "/dev" :
	       pl_path_under(folded, "/sys") ? "/sys" : NULL;
}

enum pl_view pl_view_of(const char *folded, bool same_view,
			bool (*top_ours)(const char *top, void *arg), void *arg)
{
	const char *top = top_of(folded);

	if (same_view)
		return PL_VIEW_OURS;
	if (!top)
		return PL_VIEW_OWN;
	/* its /dev or /sys is ours (a bind mount of it): ucmd's, through another root */
	return top_ours(top, arg) ? PL_VIEW_THROUGH : PL_VIEW_OWN;
}

/* "/", "/dev", "/sys" at the program's start: device and inode of each */
static unsigned long long ref[3][2];
static bool have_ref;
static const char *const ref_name[3] = { "/", "/dev", "/sys" };
/* set once the process may have left our view (chroot, unshare, setns, pivot_root) */
static bool moved;

/* newfstatat from the trampoline: a look of our own, no notification */
static bool look(const char *path, unsigned long long out[2])
{
	struct stat st;

	if (pl_raw_syscall(__NR_newfstatat, AT_FDCWD, (long)path, (long)&st, 0, 0, 0))
		return false;
	out[0] = st.st_dev;
	out[1] = st.st_ino;
	return true;
}

static bool same_as_ref(int i)
{
	unsigned long long now[2];

	return look(ref_name[i], now) && now[0] == ref[i][0] && now[1] == ref[i][1];
}

void pl_view_init(void)
{
	const char *v = getenv(PL_ENV_VIEW);
	char buf[256];
	int n = 0;

	if (v && sscanf(v, "%llx:%llx,%llx:%llx,%llx:%llx", &ref[0][0], &ref[0][1], &ref[1][0],
			&ref[1][1], &ref[2][0], &ref[2][1]) == 6) {
		have_ref = true;
		/* an image exec'd after its parent left our view (`unshare -m prog`, chroot) */
		for (int i = 0; i < 3; i++)
			if (!same_as_ref(i))
				pl_view_moved();
		return;
	}
	for (int i = 0; i < 3; i++)
		if (!look(ref_name[i], ref[i]))
			return;	/* no /dev or /sys to stand in for: every view is ours, as before */
	for (int i = 0; i < 3; i++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%llx:%llx", i ? "," : "",
			      ref[i][0], ref[i][1]);
	have_ref = true;
	setenv(PL_ENV_VIEW, buf, 1);
}

void pl_view_moved(void)
{
	__atomic_store_n(&moved, true, __ATOMIC_RELAXED);
}

static bool top_here(const char *top, void *arg)
{
	(void)arg;
	return same_as_ref(!strcmp(top, "/dev") ? 1 : 2);
}

bool pl_view_left(void)
{
	return have_ref && __atomic_load_n(&moved, __ATOMIC_RELAXED);
}

enum pl_view pl_view_here(const char *folded)
{
	const char *top;

	/* the common case: the program never left our view, no look at all */
	if (!pl_view_left())
		return PL_VIEW_OURS;
	top = top_of(folded);
	if (!top)
		return PL_VIEW_OURS;	/* nothing of ours by that name: where.c says so */
	/*
	 * Our root and the top as we left it: ours. A mount namespace of its
	 * own that leaves /dev and /sys as they were is ours too (the thread
	 * cannot name its namespace without /proc; what matters is the top).
	 */
	return pl_view_of(folded, same_as_ref(0) && top_here(top, NULL), top_here, NULL);
}
