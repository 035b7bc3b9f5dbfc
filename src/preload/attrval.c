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
#include <stdlib.h>
#include <string.h>

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

int pl_attr_judge(const char *path, char *cur, char *val)
{
	const char *base = strrchr(path, '/');

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

