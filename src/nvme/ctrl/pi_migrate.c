/* SPDX-License-Identifier: MIT */
/*
 * Version 4 of ctrl.json stores every protection tuple complemented (pi.h,
 * pi_store_codec); directories written before it (version 3: the code
 * before had protection information only then) hold the tuples as they
 * read. Loading an older directory converts each PI namespace's metadata
 * once, in place, a chunk at a time. Complementing is its own inverse, so a
 * chunk converted twice would be back in the old encoding: before a chunk
 * is touched, its old bytes go into the undo record nsN.pimig (written as
 * ctrl.json is: temp file, fdatasync, rename, fsync of the directory). A
 * crash anywhere leaves the record of the one chunk that may be half
 * converted, with every chunk before it converted and every one after it
 * not; the next load writes that chunk from the record (the same result
 * however often it is repeated) and goes on after it. ctrl.json says
 * version 4 only once every namespace is converted; the records are removed
 * after that save, and a version 4 directory never reads one.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrl_int.h"
#include "nvme/ctrl/pi.h"

#define REC_MAGIC	"UCMDPIM1"
/* a record's bytes: the chunk size of whoever wrote it, bounded */
#define REC_MAX_BYTES	(64ull << 20)

uint64_t ctrl_pi_migrate_chunk = 1ull << 20;
unsigned ctrl_pi_migrate_stop;

struct pi_rec {
	char magic[8];
	uint32_t nsid;		/* little endian, as every field */
	uint8_t lbaf, dps, pad[2];
	uint64_t nsze;
	uint64_t blk;		/* the chunk's first block: the ones before are converted */
	uint64_t nblk;
	uint32_t crc;		/* CRC-32C of the record with this field 0, then the bytes */
	uint32_t pad2;
};

static void rec_name(const struct ctrl_ns *ns, char *buf, size_t len)
{
	snprintf(buf, len, "ns%u.pimig", ns->nsid);
}

static uint32_t rec_crc(struct pi_rec *r, const uint8_t *bytes, uint64_t len)
{
	uint32_t save = r->crc, crc;

	r->crc = 0;
	crc = crc32c(crc32c(0, r, sizeof(*r)), bytes, len);
	r->crc = save;
	return crc;
}

static int rec_bad(struct ucmd_ctrl *c, const char *name, const char *why)
{
	return ctrl_ctrl_why(c, -EUCLEAN, "%s/%s: %s; the protection tuples of its namespace "
			     "are partly converted (restore the directory from a copy)",
			     c->dir, name, why);
}

/*
 * The record of an interrupted conversion: 0 with *buf holding it (header
 * then bytes), -ENOENT when there is none, else refused.
 */
static int rec_load(struct ucmd_ctrl *c, const struct ctrl_ns *ns, uint8_t **buf)
{
	uint64_t ms = ctrl_ns_ms(ns), len = 0, want;
	char name[32];
	struct pi_rec r;
	struct stat sb;
	int fd, ret;

	rec_name(ns, name, sizeof(name));
	ret = ctrl_dir_open_file(c, name, O_RDONLY, &fd);
	if (ret)
		return ret;
	ret = fstat(fd, &sb) ? -errno : 0;
	if (!ret && ((uint64_t)sb.st_size < sizeof(r) ||
		     (uint64_t)sb.st_size > sizeof(r) + REC_MAX_BYTES))
		ret = rec_bad(c, name, "not a conversion record (wrong size)");
	if (!ret && !(*buf = malloc((size_t)sb.st_size)))
		ret = -ENOMEM;
	while (!ret && len < (uint64_t)sb.st_size) {
		ssize_t n = pread(fd, *buf + len, (size_t)sb.st_size - len, (off_t)len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			ret = n ? -errno : rec_bad(c, name, "shorter than it was");
		else
			len += (uint64_t)n;
	}
	close(fd);
	if (ret)
		goto fail;
	memcpy(&r, *buf, sizeof(r));
	want = le64toh(r.nblk) * ms;
	if (memcmp(r.magic, REC_MAGIC, sizeof(r.magic)) || le32toh(r.nsid) != ns->nsid ||
	    r.lbaf != ns->lbaf || r.dps != ns->dps || le64toh(r.nsze) != ns->nsze) {
		ret = rec_bad(c, name, "not a conversion record of this namespace");
		goto fail;
	}
	if (!r.nblk || le64toh(r.blk) >= ns->nsze || le64toh(r.nblk) > ns->nsze - le64toh(r.blk) ||
	    want != len - sizeof(r) ||
	    le32toh(r.crc) != rec_crc(&r, *buf + sizeof(r), want)) {
		ret = rec_bad(c, name, "damaged (checksum or range)");
		goto fail;
	}
	return 0;
fail:
	free(*buf);
	*buf = NULL;
	return ret;
}

/* The test knob: a crash after so many durable steps */
static int step(unsigned *steps)
{
	return ctrl_pi_migrate_stop && ++*steps >= ctrl_pi_migrate_stop ? -EINTR : 0;
}

static int write_converted(struct ctrl_ns *ns, const struct pi_fmt *f, uint8_t *md,
			   uint64_t blk, uint64_t nblk)
{
	int ret;

	pi_store_codec(f, md, nblk);
	ret = store_write(ns->st, md, nblk * f->ms, ctrl_ns_meta_off(ns, blk), false);
	return ret ? ret : ns->st->ops->flush(ns->st);
}

static int convert(struct ucmd_ctrl *c, struct ctrl_ns *ns, unsigned *steps)
{
	uint64_t ms = ctrl_ns_ms(ns), per = ctrl_pi_migrate_chunk / ms, blk = 0, n;
	uint8_t *buf = NULL;
	struct pi_fmt f;
	struct pi_rec *r;
	char name[32];
	int ret;

	ctrl_pi_fmt(ns, &f);
	rec_name(ns, name, sizeof(name));
	if (!per)
		per = 1;
	if (per > REC_MAX_BYTES / ms)
		per = REC_MAX_BYTES / ms;
	ret = rec_load(c, ns, &buf);
	if (!ret) {
		/* interrupted: the recorded chunk again, from its old bytes */
		r = (struct pi_rec *)buf;
		blk = le64toh(r->blk);
		ret = write_converted(ns, &f, buf + sizeof(*r), blk, le64toh(r->nblk));
		blk += le64toh(r->nblk);
		free(buf);
		if (ret || (ret = step(steps)))
			return ret;
	} else if (ret != -ENOENT) {
		return ret;
	}
	buf = malloc(sizeof(*r) + per * ms);
	if (!buf)
		return -ENOMEM;
	r = (struct pi_rec *)buf;
	for (ret = 0; blk < ns->nsze; blk += n) {
		n = ns->nsze - blk < per ? ns->nsze - blk : per;
		*r = (struct pi_rec){ .nsid = htole32(ns->nsid), .lbaf = ns->lbaf, .dps = ns->dps,
				      .nsze = htole64(ns->nsze), .blk = htole64(blk),
				      .nblk = htole64(n) };
		memcpy(r->magic, REC_MAGIC, sizeof(r->magic));
		ret = store_read(ns->st, buf + sizeof(*r), n * ms, ctrl_ns_meta_off(ns, blk));
		if (ret)
			break;
		r->crc = htole32(rec_crc(r, buf + sizeof(*r), n * ms));
		if ((ret = ctrl_write_atomic(c, name, buf, sizeof(*r) + n * ms)) ||
		    (ret = step(steps)) ||
		    (ret = write_converted(ns, &f, buf + sizeof(*r), blk, n)) ||
		    (ret = step(steps)))
			break;
	}
	free(buf);
	return ret;
}

int ctrl_pi_migrate(struct ucmd_ctrl *c, uint64_t version)
{
	unsigned steps = 0;

	for (unsigned i = 1; i <= UCMD_MAX_NS; i++) {
		struct ctrl_ns *ns = c->ns[i];
		uint8_t *buf = NULL;
		char name[32];
		int ret;

		/* a RAM namespace comes back empty: nothing stored to convert */
		if (!ns || !ns->dps || ns->kind == UCMD_NS_STORE_RAM)
			continue;
		/*
		 * Protection came with version 3: a 1 or 2 with PI is a hand edit
		 * (docs/store.md) of a version 4 state, its tuples complemented.
		 */
		if (version != 3) {
			/* a crash after the version 4 save left it: nothing reads it */
			ns->pi_rec = !c->p.read_only;
			continue;
		}
		if (c->p.read_only) {
			/* it writes nothing: the old encoding is read as it is */
			ret = rec_load(c, ns, &buf);
			free(buf);
			if (ret != -ENOENT) {
				rec_name(ns, name, sizeof(name));
				/* a damaged record was named already */
				if (ret)
					return ret;
				return ctrl_ctrl_why(c, -EUCLEAN, "%s/%s: the "
					"conversion of namespace %u's protection tuples to "
					"version 4 was interrupted: open the controller "
					"read-write once to finish it", c->dir, name, ns->nsid);
			}
			ns->pi_plain = true;
			continue;
		}
		ret = convert(c, ns, &steps);
		if (ret) {
			if (c->p.errbuf && c->p.errbuf_len && !c->p.errbuf[0])
				ctrl_ctrl_why(c, 0, "%s: converting namespace %u's protection "
					      "tuples to version 4: %s (the next open goes on "
					      "from where it stopped)", c->dir, ns->nsid,
					      strerror(-ret));
			return ret;
		}
		ns->pi_rec = true;
	}
	return 0;
}

void ctrl_pi_migrate_done(struct ucmd_ctrl *c)
{
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++) {
		struct ctrl_ns *ns = c->ns[i];
		char name[32];

		if (!ns || !ns->pi_rec)
			continue;
		rec_name(ns, name, sizeof(name));
		unlinkat(c->dirfd, name, 0);
		ns->pi_rec = false;
	}
}
