/* SPDX-License-Identifier: MIT */
/*
 * The write-uncorrectable journal, <dir>/ctrl.journal: Write Uncorrectable
 * and every write that clears a mark append one 32-byte record and
 * fdatasync it, instead of rewriting all of ctrl.json, so a command costs the
 * same whatever the size of the state. ctrl.json is rewritten (compacted)
 * when the controller opens, shuts down or closes, on admin commands that
 * change it anyway, and when the journal reaches UCMD_JOURNAL_MAX records.
 *
 * Record, little endian:
 *   0  u8   op: 1 mark uncorrectable, 2 clear
 *   1  u8   reserved[3], zero
 *   4  u32  nsid
 *   8  u64  slba
 *  16  u64  nlb
 *  24  u32  generation of ctrl.json the record applies to (low 32 bits)
 *  28  u32  CRC-32C of bytes 0..27
 *
 * Compaction writes ctrl.json with generation g + 1 and then empties the
 * journal; a crash between the two leaves records of generation g, which
 * ctrl.json already holds: they are recognised and dropped. A record cut
 * short or failing its checksum at the very end is a write the crash
 * interrupted, never acknowledged: it is dropped too. Anything else that does
 * not fit (a bad record followed by good ones, a record for a namespace that
 * does not exist or outside it) is damage, and the controller refuses to
 * open, naming the record.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrl_int.h"

#define REC_SIZE	32
#define OP_MARK		1
#define OP_CLEAR	2
/* A journal never holds more than this (compaction empties it first). */
#define MAX_BYTES	((uint64_t)(UCMD_JOURNAL_MAX + 1) * REC_SIZE)

struct rec {
	uint8_t op;
	uint32_t nsid, gen, crc;
	uint64_t slba, nlb;
};

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static void encode(uint8_t *b, const struct rec *r)
{
	memset(b, 0, REC_SIZE);
	b[0] = r->op;
	put32(b + 4, r->nsid);
	put64(b + 8, r->slba);
	put64(b + 16, r->nlb);
	put32(b + 24, r->gen);
	put32(b + 28, crc32c(0, b, 28));
}

/* false: the checksum does not match */
static bool decode(const uint8_t *b, struct rec *r)
{
	r->op = b[0];
	r->nsid = get32(b + 4);
	r->slba = get64(b + 8);
	r->nlb = get64(b + 16);
	r->gen = get32(b + 24);
	r->crc = get32(b + 28);
	return r->crc == crc32c(0, b, 28) && !b[1] && !b[2] && !b[3];
}

int ctrl_journal_open(struct ucmd_ctrl *c, bool must_exist)
{
	/* a read-only controller replays the journal and never writes it */
	int flags = c->p.read_only ? O_RDONLY : O_RDWR, fd, ret;
	struct stat sb;

	if (c->journal_fd >= 0)
		return 0;
	ret = ctrl_dir_open_file(c, UCMD_JOURNAL_NAME, flags, &fd);
	if (ret == -ENOENT && must_exist)
		return ctrl_ctrl_why(c, -ENOENT, "%s/" UCMD_JOURNAL_NAME ": missing, but ctrl.json "
				      "(generation %" PRIu64 ") was written with one; marks of Write "
				     "Uncorrectable since then are lost (an empty " UCMD_JOURNAL_NAME
				     " accepts that)", c->dir, c->journal_gen);
	if (ret == -ENOENT && !c->p.read_only)
		ret = ctrl_dir_open_file(c, UCMD_JOURNAL_NAME, O_RDWR | O_CREAT | O_EXCL, &fd);
	if (ret == -ENOENT)
		return 0;	/* read-only, version 1: nothing to replay */
	if (ret)
		return ret;
	if (fstat(fd, &sb)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	c->journal_fd = fd;
	c->journal_off = (uint64_t)sb.st_size;
	return 0;
}

void ctrl_journal_close(struct ucmd_ctrl *c)
{
	if (c->journal_fd >= 0)
		close(c->journal_fd);
	c->journal_fd = -1;
}

static int journal_truncate(struct ucmd_ctrl *c, uint64_t len)
{
	while (ftruncate(c->journal_fd, (off_t)len)) {
		if (errno != EINTR)
			return -errno;
	}
	c->journal_off = len;
	return 0;
}

int ctrl_journal_reset(struct ucmd_ctrl *c)
{
	if (c->journal_fd < 0)
		return 0;
	/* Not synced: records left by a lost truncate are of the old generation. */
	return journal_truncate(c, 0);
}

static int bad_rec(struct ucmd_ctrl *c, size_t i, const char *what)
{
	ctrl_ctrl_why(c, 0, "%s/" UCMD_JOURNAL_NAME ": record %zu: %s", c->dir, i, what);
	return -EINVAL;
}

static int apply(struct ucmd_ctrl *c, size_t i, const struct rec *r)
{
	struct ctrl_ns *ns = r->nsid && r->nsid <= UCMD_MAX_NS ? c->ns[r->nsid] : NULL;
	int ret;

	if (r->op != OP_MARK && r->op != OP_CLEAR)
		return bad_rec(c, i, "unknown operation");
	if (!ns)
		return bad_rec(c, i, "names a namespace ctrl.json does not have");
	if (!r->nlb || r->slba >= ns->nsze || r->nlb > ns->nsze - r->slba)
		return bad_rec(c, i, "range outside the namespace");
	if (r->op == OP_MARK)
		ret = ctrl_ranges_add(&ns->uncor, r->slba, r->nlb);
	else
		ret = ctrl_ranges_remove(&ns->uncor, r->slba, r->nlb);
	if (ret == -ENOSPC)
		return bad_rec(c, i, "more ranges than a namespace can have");
	return ret < 0 ? ret : 0;
}

int ctrl_journal_replay(struct ucmd_ctrl *c)
{
	uint64_t size = c->journal_off, good = 0;
	uint32_t gen = (uint32_t)c->journal_gen;
	uint8_t *buf;
	size_t n;
	int ret = 0;

	if (c->journal_fd < 0)
		return 0;	/* read-only, no journal yet */
	if (size > MAX_BYTES) {
		ctrl_ctrl_why(c, 0, "%s/" UCMD_JOURNAL_NAME ": %" PRIu64 " bytes, more than the %"
				 PRIu64 " it can hold", c->dir, size, MAX_BYTES);
		return -EINVAL;
	}
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	errno = 0;
	if (pread(c->journal_fd, buf, size, 0) != (ssize_t)size) {
		ret = errno ? -errno : -EIO;
		ctrl_ctrl_why(c, 0, "%s/" UCMD_JOURNAL_NAME ": short read", c->dir);
		goto out;
	}
	n = size / REC_SIZE;
	for (size_t i = 0; i < n && !ret; i++) {
		struct rec r;

		if (!decode(buf + i * REC_SIZE, &r)) {
			/* only the last record can be one a crash cut short */
			if (i + 1 < n)
				ret = bad_rec(c, i, "checksum mismatch");
			break;
		}
		if (r.gen != gen) {
			/* compacted into ctrl.json, then the truncate was lost */
			if (i == 0 && r.gen == gen - 1)
				break;
			ret = bad_rec(c, i, "generation does not match ctrl.json");
			break;
		}
		ret = apply(c, i, &r);
		if (!ret)
			good = (i + 1) * REC_SIZE;
	}
	/* Drop what is not part of the state, so appends follow the last good record. */
	if (!ret && good != size && !c->p.read_only)
		ret = journal_truncate(c, good);
out:
	free(buf);
	return ret;
}

static int journal_append(struct ucmd_ctrl *c, const struct rec *r)
{
	uint8_t b[REC_SIZE];
	size_t done = 0;
	int ret;

	if (c->journal_fd < 0 && (ret = ctrl_journal_open(c, false)))
		return ret;
	encode(b, r);
	while (done < REC_SIZE) {
		ssize_t w = pwrite(c->journal_fd, b + done, REC_SIZE - done,
				   (off_t)(c->journal_off + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	/* The record, and the file size that covers it, before the completion */
	while (fdatasync(c->journal_fd)) {
		if (errno != EINTR)
			return -errno;
	}
	c->journal_off += REC_SIZE;
	return 0;
}

void ctrl_persist_range(struct ucmd_ctrl *c, const struct ctrl_ns *ns, bool mark,
			 uint64_t slba, uint64_t nlb)
{
	struct rec r = {
		.op = mark ? OP_MARK : OP_CLEAR,
		.nsid = ns->nsid,
		.slba = slba,
		.nlb = nlb,
		.gen = (uint32_t)c->journal_gen,
	};
	int ret;

	/* the namespaces' ranges are the subsystem's: controller 1 journals them */
	c = ctrl_primary(c);
	r.gen = (uint32_t)c->journal_gen;
	if (!c->dir)
		return;
	ret = journal_append(c, &r);
	if (!ret && c->journal_off >= (uint64_t)UCMD_JOURNAL_MAX * REC_SIZE)
		ret = ctrl_persist_save(c, false);
	if (ret)
		ctrl_persist_failed(c, ret);
}
