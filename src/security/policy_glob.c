/* SPDX-License-Identifier: MIT */
/* Device globs: classified at load, matched per command (policy_glob.h). */
#include <fnmatch.h>
#include <string.h>

#include "security/policy_glob.h"

/*
 * Without FNM_PATHNAME, FNM_PERIOD or FNM_NOESCAPE, fnmatch() gives a
 * special meaning only to '*', '?', '[' and '\\': a glob without them
 * matches exactly itself, and one whose only special character is a final
 * '*' matches exactly the names that start with what precedes it ('*'
 * matches any string, '/' and a leading '.' included).
 */
void pol_glob_init(struct pol_glob *g, const char *text)
{
	size_t n = strcspn(text, "*?[\\");

	g->text = text;
	g->len = n;
	if (!text[n])
		g->kind = POL_GLOB_EXACT;
	else if (text[n] == '*' && !text[n + 1])
		g->kind = POL_GLOB_PREFIX;
	else
		g->kind = POL_GLOB_FNMATCH;
}

bool pol_glob_match(const struct pol_glob *g, const char *name)
{
	switch (g->kind) {
	case POL_GLOB_EXACT:
		/* name[len] is read only when name's first len bytes are the glob's */
		return !strncmp(g->text, name, g->len) && !name[g->len];
	case POL_GLOB_PREFIX:
		return !strncmp(g->text, name, g->len);
	default:
		return !fnmatch(g->text, name, 0);
	}
}
