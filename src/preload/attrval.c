// SPDX-License-Identifier: MIT
/*
 * What a write to one of the tree's 0644 attributes is answered, as
 * Linux's store answers it where ucmd can answer truly (attrw.c says why):
 * the value it holds (echo's newline off, "[x]" as x, numbers as numbers)
 * is taken; a uevent takes kobject_synth_uevent's actions; anything else
 * is EINVAL; a control file's write is ctlfiles.c's to take. The
 * preload's writes (attrw.c) and ucmd-supervise's
 * (sv_attrw.c) are judged here alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "preload/preload.h"

int pl_attrw_flags(int flags)
{
	return (flags & ~(O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_TMPFILE)) | O_RDONLY |
	       O_APPEND;
}

/* The value with its trailing white space (echo's newline) off; shown, one "[x]" as x. */
static void trim(char *s, bool shown)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	if (shown && n >= 2 && s[0] == '[' && s[n - 1] == ']' && !strchr(s + 1, '[')) {
		memmove(s, s + 1, n - 2);
		s[n - 2] = '\0';
	}
}

static bool number(const char *s, long long *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && !*end;
}

/* The current value, the same value written: 0; else -EINVAL. */
static int same_value(const char *cur, const char *val)
{
	long long a, b;

	if (!strcmp(cur, val))
		return 0;
	return number(cur, &a) && number(val, &b) && a == b ? 0 : -EINVAL;
}

/* uevent: the actions kobject_synth_uevent takes, with what may follow them. */
static int uevent_action(const char *cur, const char *val)
{
	static const char *const act[] = { "add", "remove", "change", "move", "online",
					   "offline", "bind", "unbind" };

	(void)cur;
	for (size_t i = 0; i < sizeof(act) / sizeof(act[0]); i++) {
		size_t n = strlen(act[i]);

		if (!strncmp(val, act[i], n) && (!val[n] || val[n] == ' '))
			return 0;
	}
	return -EINVAL;
}

static const struct {
	const char *name;
	int (*judge)(const char *cur, const char *val);
} judges[] = {
	{ "uevent", uevent_action },
};

/*
 * The tree's path of an open attribute, as /proc/self/fd names it: a file
 * the tree's sync replaced (every file appears by rename, sysfs.c) or took
 * out reads "<path> (deleted)". Replaced, the attribute is still Linux's
 * (its kernfs node lives): its path without the suffix; gone, its node was
 * removed (a function's `remove` took its device): -ENODEV, what
 * kernfs_fop_write_iter answers when kernfs_get_active fails on an open
 * file's removed node, before any store is called, an empty write too.
 */
static int live_path(const char *path, char *out, size_t len)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path), d = sizeof(deleted) - 1;
	struct stat st;

	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(out, path, n + 1);
	if (n <= d || strcmp(out + n - d, deleted))
		return 0;
	out[n - d] = '\0';
	return lstat(out, &st) && errno == ENOENT ? -ENODEV : 0;
}

int pl_attr_judge(const char *fdpath, char *cur, char *val)
{
	char path[PATH_MAX];
	const char *base;
	int ret = live_path(fdpath, path, sizeof(path));

	if (ret)
		return ret;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* a control file's write is its action, the value read as its store reads it */
	if (pl_ctl_file(path))
		return pl_ctl_write(path, val);
	trim(val, false);
	for (size_t i = 0; i < sizeof(judges) / sizeof(judges[0]); i++)
		if (!strcmp(base, judges[i].name))
			return judges[i].judge(cur, val);
	trim(cur, true);
	return same_value(cur, val);
}

