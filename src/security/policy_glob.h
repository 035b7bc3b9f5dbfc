/* SPDX-License-Identifier: MIT */
/*
 * A rule's device glob, classified once when the policy is loaded, so that
 * judging a command (which runs for every command) compares strings and
 * calls fnmatch() only for the globs that need it.
 */
#ifndef UCMD_SECURITY_POLICY_GLOB_H
#define UCMD_SECURITY_POLICY_GLOB_H

#include <stdbool.h>
#include <stddef.h>

enum pol_glob_kind {
	POL_GLOB_EXACT,		/* no special character: the name itself */
	POL_GLOB_PREFIX,	/* a literal then one final '*' ("nvme*", "*") */
	POL_GLOB_FNMATCH,	/* anything else: fnmatch(glob, name, 0) */
};

struct pol_glob {
	const char *text;	/* the glob as written (the rule owns it) */
	size_t len;		/* EXACT: its length; PREFIX: the literal's */
	enum pol_glob_kind kind;
};

/* Classify text (kept by reference, NUL-terminated) into g. */
void pol_glob_init(struct pol_glob *g, const char *text);
/* fnmatch(g->text, name, 0) == 0, the same answer for every glob and name. */
bool pol_glob_match(const struct pol_glob *g, const char *name);

#endif
