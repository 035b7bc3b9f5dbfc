/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "security/desc.h"

static const char *const verb_names[UCMD_VERB_NR] = {
	[UCMD_VERB_READ] = "read",
	[UCMD_VERB_WRITE] = "write",
	[UCMD_VERB_FLUSH] = "flush",
	[UCMD_VERB_TRIM] = "trim",
	[UCMD_VERB_WRITE_ZEROES] = "write-zeroes",
	[UCMD_VERB_WRITE_UNCOR] = "write-uncor",
	[UCMD_VERB_COMPARE] = "compare",
	[UCMD_VERB_VERIFY] = "verify",
	[UCMD_VERB_COPY] = "copy",
	[UCMD_VERB_IDENTIFY] = "identify",
	[UCMD_VERB_GET_LOG] = "get-log",
	[UCMD_VERB_GET_FEATURE] = "get-feature",
	[UCMD_VERB_SET_FEATURE] = "set-feature",
	[UCMD_VERB_FORMAT] = "format",
	[UCMD_VERB_SANITIZE] = "sanitize",
	[UCMD_VERB_FIRMWARE] = "firmware",
	[UCMD_VERB_NS_MANAGE] = "ns-manage",
	[UCMD_VERB_NS_ATTACH] = "ns-attach",
	[UCMD_VERB_QUEUE_MANAGE] = "queue-manage",
	[UCMD_VERB_ABORT] = "abort",
	[UCMD_VERB_ASYNC_EVENT] = "async-event",
	[UCMD_VERB_VENDOR] = "vendor",
	[UCMD_VERB_UNKNOWN] = "unknown",
};

const char *desc_verb_name(enum ucmd_verb v)
{
	return (unsigned)v < UCMD_VERB_NR ? verb_names[v] : "unknown";
}

int desc_verb_from_name(const char *name)
{
	for (int v = 0; v < UCMD_VERB_NR; v++)
		if (!strcmp(verb_names[v], name))
			return v;
	return -1;
}

const char *desc_dir_name(enum ucmd_dir d)
{
	static const char *const names[] = { "none", "to-device", "from-device",
					     "bidirectional" };
	return (unsigned)d < sizeof(names) / sizeof(names[0]) ? names[d] : "none";
}
