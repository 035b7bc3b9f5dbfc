/* SPDX-License-Identifier: MIT */
/*
 * A command described in generic terms, so that security modules can write
 * policy against what a command does rather than against a driver's opcode
 * numbers. Every provider's describe() fills one.
 */
#ifndef UCMD_SECURITY_DESC_H
#define UCMD_SECURITY_DESC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum ucmd_verb {
	UCMD_VERB_READ,
	UCMD_VERB_WRITE,
	UCMD_VERB_FLUSH,
	UCMD_VERB_TRIM,
	UCMD_VERB_WRITE_ZEROES,
	UCMD_VERB_WRITE_UNCOR,
	UCMD_VERB_COMPARE,
	UCMD_VERB_VERIFY,
	UCMD_VERB_COPY,
	UCMD_VERB_IDENTIFY,
	UCMD_VERB_GET_LOG,
	UCMD_VERB_GET_FEATURE,
	UCMD_VERB_SET_FEATURE,
	UCMD_VERB_FORMAT,
	UCMD_VERB_SANITIZE,
	UCMD_VERB_FIRMWARE,
	UCMD_VERB_NS_MANAGE,
	UCMD_VERB_NS_ATTACH,
	UCMD_VERB_QUEUE_MANAGE,
	UCMD_VERB_ABORT,
	UCMD_VERB_ASYNC_EVENT,
	UCMD_VERB_VENDOR,
	UCMD_VERB_UNKNOWN,
	UCMD_VERB_NR,
};

enum ucmd_dir {
	UCMD_DIR_NONE,
	UCMD_DIR_TO_DEVICE,	/* the host sends data (write) */
	UCMD_DIR_FROM_DEVICE,	/* the host receives data (read) */
	UCMD_DIR_BIDIRECTIONAL,
};

/* One range of logical blocks a command touches, and the same in bytes. */
struct ucmd_desc_range {
	uint64_t slba, nlb;
	uint64_t offset, length;	/* bytes; 0 when the block size is unknown */
};

struct ucmd_cmd_desc {
	char device[32];
	uint32_t cmd_op;
	uint8_t opcode;		/* the raw opcode, for modules that want it */
	bool admin;
	enum ucmd_verb verb;
	enum ucmd_dir dir;
	uint32_t nsid;
	bool has_range;
	uint64_t offset;	/* bytes */
	uint64_t length;	/* bytes */
	uint64_t slba, nlb;	/* the same range in logical blocks, if any */
	/*
	 * Ranges beyond [slba, slba + nlb) that the command also touches: NVMe
	 * Copy's source ranges (its destination is slba/nlb), Dataset
	 * Management's list after its first range (which is slba/nlb). The
	 * array belongs to the request being judged: valid while the hook
	 * chain runs, never after.
	 */
	unsigned nr_ranges;
	const struct ucmd_desc_range *ranges;
	/*
	 * The command touches logical blocks it does not list: its range list
	 * could not be read or decoded, or it covers the whole namespace
	 * (Format, Sanitize). Range rules treat it conservatively: a deny rule
	 * with a range matches it, an allow rule with a range does not.
	 */
	bool range_unknown;
	bool destructive;	/* changes or destroys data on the media */
	/*
	 * Linux's finer points (nvme_cmd_allowed()), zero when unknown:
	 * has_select/select: the command's sub-selector (Identify CNS, Get Log
	 * Page LID, Get/Set Features FID); intrusive: effects beyond changing
	 * logical block content (the Commands Supported and Effects log marks
	 * it NCC/NIC/CCC/CSE..., or does not mark it supported).
	 */
	bool has_select;
	uint32_t select;
	bool intrusive;
};

const char *desc_verb_name(enum ucmd_verb v);
/* Returns the verb, or -1 for an unknown name. */
int desc_verb_from_name(const char *name);
const char *desc_dir_name(enum ucmd_dir d);

static inline void ucmd_desc_init(struct ucmd_cmd_desc *d, const char *device, uint32_t cmd_op,
				  uint8_t opcode)
{
	size_t n = strnlen(device, sizeof(d->device) - 1);

	memset(d, 0, sizeof(*d));
	/* a copy, not snprintf(): every judged command describes itself */
	memcpy(d->device, device, n);
	d->cmd_op = cmd_op;
	d->opcode = opcode;
	d->verb = UCMD_VERB_UNKNOWN;
}

#endif
