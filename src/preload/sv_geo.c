/* SPDX-License-Identifier: MIT */
/*
 * The geometry of a block namespace a static program opens (sv.h), for
 * what sv_dev.c answers without the daemon: the BLK* queries, lseek's
 * SEEK_END, the end of the device for the read/write family, whether a
 * discard can be served. Read when the
 * program opens nvmeXnY, as Linux's bdev size is what the last revalidation
 * found: Identify Namespace and Identify Controller (MDTS) on a connection
 * of our own, since the program's (adopted) connection takes addresses in
 * the program's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/nvme_ioctl.h>

#include <ucmd/daemon.h>

#include "preload/blkdev.h"
#include "preload/sv.h"

#define SV_CHUNK_MAX (128u * 1024)	/* rw.c's RW_CHUNK_MAX: bytes per command at most */

/* Identify (cns) of nsid on the controller opened at fd, into a 4 KiB buf. */
static int identify(struct ucmd_engine *e, int fd, uint32_t nsid, uint32_t cns, void *buf)
{
	struct nvme_passthru_cmd64 cmd = {
		.opcode = 0x06,
		.nsid = nsid,
		.addr = (uint64_t)(uintptr_t)buf,
		.data_len = 4096,
		.cdw10 = cns,
	};

	memset(buf, 0, 4096);
	return ucmd_ioctl(e, fd, NVME_IOCTL_ADMIN64_CMD, &cmd);
}

int sv_blk_geo(struct sv *s, const char *name, struct pl_blk_geo *g, bool *dsm)
{
	struct pl_devinfo d = { 0 };
	struct ucmd_engine *e;
	char ctrl[32];
	unsigned x, y;
	uint32_t max = SV_CHUNK_MAX;
	void *id;
	int fd, ret;

	if (sscanf(name, "nvme%un%u", &x, &y) != 2)
		return -EINVAL;
	snprintf(ctrl, sizeof(ctrl), "nvme%u", x);
	id = aligned_alloc(4096, 4096);
	if (!id)
		return -ENOMEM;
	ret = ucmd_engine_connect(s->sock, &e);
	if (ret) {
		free(id);
		return ret;
	}
	/* a number the daemon mirrors for us alone: one of our own descriptors */
	fd = eventfd(0, EFD_CLOEXEC);
	ret = fd < 0 ? -errno : dc_open_fixed(e, ctrl, O_RDONLY, fd);
	if (ret >= 0)
		ret = identify(e, fd, y, 0x00, id);
	if (ret == 0) {
		pl_ns_geometry(id, &d);
		*dsm = false;
		if (identify(e, fd, 0, 0x01, id) == 0) {
			max = pl_mdts_bytes(id, max);
			/* ONCS, bytes 521:520, bit 2: Dataset Management */
			*dsm = ((uint8_t *)id)[520] & (1u << 2);
		}
		pl_blk_geo_of(&d, max, g);
	} else if (ret > 0) {
		ret = -EIO;	/* an NVMe status: the namespace is not there to be sized */
	}
	if (fd >= 0)
		close(fd);
	ucmd_engine_free(e);
	free(id);
	return ret < 0 ? ret : 0;
}
