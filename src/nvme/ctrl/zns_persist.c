/* SPDX-License-Identifier: MIT */
/*
 * The zone state of a persistent zoned namespace: <dir>/nsN.zones, mapped
 * shared, so that every change of a write pointer or state is in the page
 * cache the moment it is made, before the command completes. A killed
 * process therefore loses no acknowledged write or append, just as the data
 * it wrote to nsN.img (also in the page cache) survives. Against power loss
 * the file is synced when the data is: at Flush and at a FUA write.
 *
 * Layout: a 64-byte header (magic, zone count, extension size), then one
 * struct ctrl_zone_rec per zone, then each zone's descriptor extension.
 * The order of the stores (zns.c) keeps every torn state one that
 * zones_settle() turns back into a consistent one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zns.h"

#define ZNS_MAGIC	"UCMDZNS1"
#define ZNS_HDR		64

struct zns_hdr {
	char magic[8];
	uint32_t nr_zones;
	uint32_t zdes;
};

static void zones_name(uint32_t nsid, char *buf, size_t len)
{
	snprintf(buf, len, "ns%u.zones", nsid);
}

static size_t zns_file_len(const struct ctrl_zoned *zn)
{
	return ZNS_HDR + (size_t)zn->nr_zones * sizeof(struct ctrl_zone_rec) +
	       (size_t)zn->nr_zones * zn->zdes * 64;
}

static void point_into(struct ctrl_zoned *zn, uint8_t *base)
{
	zn->z = (void *)(base + ZNS_HDR);
	zn->ext = base + ZNS_HDR + (size_t)zn->nr_zones * sizeof(struct ctrl_zone_rec);
}

static int map_file(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool create)
{
	struct ctrl_zoned *zn = ns->zoned;
	size_t len = zns_file_len(zn);
	struct zns_hdr *h;
	struct stat sb;
	char name[32];
	void *m;
	int fd, ret;

	zones_name(ns->nsid, name, sizeof(name));
	if (create && c->p.read_only)
		return ctrl_ctrl_why(c, -EROFS, "%s is open read-only: cannot create %s", c->dir,
				      name);
	ret = ctrl_dir_open_file(c, name, create ? O_RDWR | O_CREAT | O_EXCL :
					   c->p.read_only ? O_RDONLY : O_RDWR, &fd);
	if (ret == -ENOENT)
		return ctrl_ctrl_why(c, -ENOENT, "%s/%s: missing; zoned namespace %u keeps its "
				      "write pointers there", c->dir, name, ns->nsid);
	if (ret == -EEXIST)
		return ctrl_ctrl_why(c, -EEXIST, "%s/%s already exists: a new namespace never "
				      "takes over an existing zone file", c->dir, name);
	if (ret)
		return ret;
	if (create && ftruncate(fd, (off_t)len)) {
		ret = -errno;
		goto fail;
	}
	if (fstat(fd, &sb)) {
		ret = -errno;
		goto fail;
	}
	if ((uint64_t)sb.st_size != len) {
		ret = ctrl_ctrl_why(c, -EINVAL, "%s/%s: %lld bytes, %zu expected for %u zones",
				     c->dir, name, (long long)sb.st_size, len, zn->nr_zones);
		goto fail;
	}
	/* a reader's settled state stays in its own private copy */
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, c->p.read_only ? MAP_PRIVATE : MAP_SHARED,
		 fd, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	close(fd);
	h = m;
	if (create) {
		memcpy(h->magic, ZNS_MAGIC, sizeof(h->magic));
		h->nr_zones = htole32(zn->nr_zones);
		h->zdes = htole32(zn->zdes);
	} else if (memcmp(h->magic, ZNS_MAGIC, sizeof(h->magic)) ||
		   le32toh(h->nr_zones) != zn->nr_zones || le32toh(h->zdes) != zn->zdes) {
		munmap(m, len);
		return ctrl_ctrl_why(c, -EINVAL, "%s/%s: not the zone file of %u zones with %u "
				      "extension units that ctrl.json describes", c->dir, name,
				      zn->nr_zones, zn->zdes);
	}
	zn->map = m;
	zn->map_len = len;
	point_into(zn, m);
	return 0;
fail:
	close(fd);
	if (create)
		unlinkat(c->dirfd, name, 0);
	return ret;
}

int ctrl_zns_map(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool create)
{
	struct ctrl_zoned *zn = ns->zoned;
	uint8_t *m;

	/* the zones live as long as the data: a RAM namespace's in memory */
	if (c->dir && ns->kind != UCMD_NS_STORE_RAM)
		return map_file(c, ns, create);
	m = calloc(1, zns_file_len(zn));
	if (!m)
		return -ENOMEM;
	point_into(zn, m);
	return 0;
}

void ctrl_zns_unmap(struct ucmd_ctrl *c, struct ctrl_ns *ns, bool remove_file)
{
	struct ctrl_zoned *zn = ns->zoned;
	char name[32];

	if (zn->map) {
		munmap(zn->map, zn->map_len);
		zones_name(ns->nsid, name, sizeof(name));
		if (remove_file && c->dirfd >= 0 && !c->p.read_only)
			unlinkat(c->dirfd, name, 0);
	} else if (zn->z) {
		free((uint8_t *)zn->z - ZNS_HDR);
	}
	zn->map = NULL;
	zn->z = NULL;
	zn->ext = NULL;
}

int ctrl_zns_sync(struct ctrl_ns *ns)
{
	struct ctrl_zoned *zn = ns->zoned;

	return zn->map && msync(zn->map, zn->map_len, MS_SYNC) ? -errno : 0;
}
