/* SPDX-License-Identifier: MIT */
/*
 * Protection information tuples (NVM Command Set, End-to-end Data
 * Protection): check one logical block's tuple against a command, or
 * generate it (PRACT). Pure functions of the block's data and metadata, the
 * namespace's format and the command's fields; the caller moves the data.
 *
 * Tuple layouts, all big-endian:
 *   16b guard (PIF 0h), 8 bytes:  guard[2] application tag[2] space[4]
 *   64b guard (PIF 2h), 16 bytes: guard[8] application tag[2] space[6]
 * The Storage and Reference Space (32 or 48 bits) holds the storage tag in
 * its STS most significant bits and the logical block reference tag in the
 * rest (STS 0: no storage tag; STS the whole space: no reference tag).
 */
#ifndef UCMD_NVME_CTRL_PI_H
#define UCMD_NVME_CTRL_PI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvme/types.h>

/* Protection Information Format (the elbaf pif field) */
enum pi_pif {
	PI_PIF_16B = 0,		/* 16b guard, CRC-16 T10-DIF */
	PI_PIF_64B = 2,		/* 64b guard, NVMe CRC-64 */
};

/* A namespace's format as far as protection goes */
struct pi_fmt {
	uint8_t type;		/* NVME_NS_DPS_PI_TYPE1..3 */
	uint8_t pif;		/* enum pi_pif */
	bool first;		/* the tuple is the first bytes of the metadata (DPS bit 3) */
	uint16_t ms;		/* metadata bytes per logical block */
	uint32_t lbads;		/* data bytes per logical block */
	bool plain;		/* the store holds the tuples as they read (pi_store_codec) */
	uint8_t sts;		/* storage tag bits (the elbaf STS), at most the space's */
	uint64_t lbstm;		/* storage tag bits STC compares (Identify NS LBSTM) */
};

/* A command's protection fields */
struct pi_cmd {
	uint16_t control;	/* CDW12 bits 31:16: NVME_IO_PRINFO_* */
	/*
	 * The command's whole Storage and Reference Space: CDW14, with CDW3's
	 * bits 15:0 above it for PIF 2h; LBST (ELBST) in its STS most
	 * significant bits, ILBRT (EILBRT) below
	 */
	uint64_t ilbrt;
	bool stc;		/* Storage Tag Check (CDW12 bit 24; Copy: STCR, STCW) */
	uint16_t lbat;		/* CDW15 bits 15:0 */
	uint16_t lbatm;		/* CDW15 bits 31:16 */
	uint64_t slba;
};

/* Statuses, as the controller returns them (SCT << 8 | SC) */
#define PI_SC_GUARD	((uint16_t)(NVME_SCT_MEDIA << NVME_SCT_SHIFT | NVME_SC_GUARD_CHECK))
#define PI_SC_APPTAG	((uint16_t)(NVME_SCT_MEDIA << NVME_SCT_SHIFT | NVME_SC_APPTAG_CHECK))
#define PI_SC_REFTAG	((uint16_t)(NVME_SCT_MEDIA << NVME_SCT_SHIFT | NVME_SC_REFTAG_CHECK))
#define PI_SC_STAG	((uint16_t)(NVME_SCT_MEDIA << NVME_SCT_SHIFT | NVME_SC_STORAGE_TAG_CHECK))
#define PI_SC_INVALID_PI \
	((uint16_t)(NVME_SCT_CMD_SPECIFIC << NVME_SCT_SHIFT | NVME_SC_INVALID_PI | NVME_SC_DNR))

/* 8 or 16 */
size_t pi_tuple_size(const struct pi_fmt *f);
/* Where the tuple starts in a block's metadata */
size_t pi_tuple_offset(const struct pi_fmt *f);
/* The Storage and Reference Space's bits: 32, or 48 with the 64b guard */
unsigned pi_space_bits(const struct pi_fmt *f);
/*
 * Whether the format can carry protection: type 1 to 3, PIF 0h or 2h,
 * metadata at least the tuple, data not empty, a storage tag no wider than
 * the space. Format NVM's Invalid Format.
 */
bool pi_fmt_valid(const struct pi_fmt *f);
/* The metadata is the tuple alone: PRACT then moves no metadata */
bool pi_md_is_tuple(const struct pi_fmt *f);

/*
 * The tuples as the namespace store keeps them: complemented, so that a
 * block whose metadata reads back as zeros (never written, deallocated,
 * zeroed without PRACT, just formatted) returns all-FFh tuples, as the NVM
 * Command Set requires of a deallocated or unwritten block (application and
 * reference tags FFh: not checked; the guard FFh, DLFEAT bit 4 clear). The
 * rest of the metadata is stored as is. Its own inverse: applied to the nlb
 * blocks of md after every load and before every store. Nothing when
 * f->plain: a directory of ctrl.json version 3 or older, opened read-only
 * (docs/store.md).
 */
void pi_store_codec(const struct pi_fmt *f, uint8_t *md, uint64_t nlb);

/*
 * A command's fields before any block: with Type 1, PRCHK reference tag and
 * a reference tag in the format, ILBRT must be the starting LBA's low bits,
 * as many as the reference tag has (32 or 48 less STS).
 * Returns 0 or PI_SC_INVALID_PI.
 */
uint16_t pi_cmd_check(const struct pi_fmt *f, const struct pi_cmd *c);

/*
 * Check block i of the command (data: lbads bytes, md: ms bytes) as PRCHK
 * and STC ask. Returns 0, PI_SC_GUARD, PI_SC_APPTAG, PI_SC_STAG or
 * PI_SC_REFTAG (checked in that order). The storage tag's bits that LBSTM
 * sets are compared with LBST when STC is set and the format has a storage
 * tag. An application tag of FFFFh (types 1, 2), or with type 3 that and an
 * all-ones reference tag (when the format has one), turns every check off
 * for the block.
 */
uint16_t pi_check(const struct pi_fmt *f, const struct pi_cmd *c, uint32_t i,
		  const void *data, const void *md);

/*
 * Write block i's tuple into md (PRACT): the guard over data (and the
 * metadata before the tuple when the tuple is last), LBAT, LBST, and
 * ILBRT + i (types 1, 2; wrapping within the reference tag's bits) or ILBRT
 * (type 3). The other metadata bytes are left alone.
 */
void pi_generate(const struct pi_fmt *f, const struct pi_cmd *c, uint32_t i,
		 const void *data, void *md);

/* The tuple's fields, for the caller's error log and the tests */
struct pi_tuple {
	uint64_t guard;
	uint16_t apptag;
	uint64_t stag;		/* the storage tag (0 with STS 0) */
	uint64_t reftag;	/* the reference tag (0 when STS is the whole space) */
};
void pi_tuple_get(const struct pi_fmt *f, const void *md, struct pi_tuple *t);
void pi_tuple_put(const struct pi_fmt *f, void *md, const struct pi_tuple *t);
/* The guard the block's data and metadata should carry */
uint64_t pi_guard(const struct pi_fmt *f, const void *data, const void *md);

#endif
