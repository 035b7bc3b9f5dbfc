/* SPDX-License-Identifier: MIT */
/*
 * Firmware Image Download (11h), Firmware Commit (10h) and the Firmware
 * Slot log (03h). Three slots; slot 1 holds the factory image and is
 * read-only (FRMW bit 0), slots 2 and 3 take downloaded images. FWUG is
 * 4 KiB: each piece starts at a multiple of it; pieces come in order (a
 * piece at offset 0 starts a new image, one inside what was received is
 * Overlapping Range). A committed image is stored as fw<slot>.img in the
 * controller directory (in memory without one) and its revision in
 * ctrl.json; Identify's FR and the log's AFI follow the active slot.
 *
 * An image is ours when it starts with a 20-byte header (docs/compat.md):
 * "UCMDFW01", the 8-character revision (printable ASCII, space padded, not
 * blank), and a little-endian 32-bit flags word whose bit 0 says that the
 * image can only be activated by a conventional reset (a cold start):
 * committing it with action 3 (activate immediately) answers Firmware Activation Requires
 * Conventional Reset. Activation "at the next reset" happens at a
 * Controller Level Reset (CC.EN 1 to 0) or the next cold start.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrl_int.h"

#define FWUG_BYTES	4096u
/*
 * The pieces received so far, in the controller directory: a device keeps
 * them while it stays powered, and so across CLI calls (nvme fw-download,
 * then nvme fw-commit, each its own process); a reset or power cycle
 * discards them, as the spec says.
 */
#define DOWNLOAD_NAME	"fw.download"

static int download_save(struct ucmd_ctrl *c)
{
	if (!c->dir || c->p.read_only)
		return 0;
	return ctrl_write_atomic(c, DOWNLOAD_NAME, c->fw.img, c->fw.img_len);
}

void ctrl_fw_discard(struct ucmd_ctrl *c)
{
	c->fw.img_len = 0;
	if (c->dir && !c->p.read_only)
		unlinkat(c->dirfd, DOWNLOAD_NAME, 0);
}

int ctrl_fw_load_download(struct ucmd_ctrl *c)
{
	struct stat st;
	ssize_t n;
	int fd, ret = ctrl_dir_open_file(c, DOWNLOAD_NAME, O_RDONLY, &fd);

	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	/* an unusable leftover is dropped, as a device drops a torn download */
	if (fstat(fd, &st) || st.st_size > UCMD_FW_MAX_IMAGE ||
	    (!c->fw.img && !(c->fw.img = malloc(UCMD_FW_MAX_IMAGE)))) {
		close(fd);
		return 0;
	}
	n = pread(fd, c->fw.img, (size_t)st.st_size, 0);
	close(fd);
	c->fw.img_len = n == st.st_size ? (uint32_t)n : 0;
	return 0;
}
#define FS(dw10)	((dw10) & 7u)
#define CA(dw10)	(((dw10) >> 3) & 7u)
#define ST_SLOT		(UCMD_CMD(NVME_SC_FIRMWARE_SLOT) | UCMD_DNR)
#define ST_IMAGE	(UCMD_CMD(NVME_SC_FIRMWARE_IMAGE) | UCMD_DNR)

uint16_t ctrl_admin_fw_download(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint64_t len = ((uint64_t)req->cmd.cdw10 + 1) * 4, off = (uint64_t)req->cmd.cdw11 * 4;
	uint16_t st;

	if (off % FWUG_BYTES || off + len > UCMD_FW_MAX_IMAGE)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (off && off < c->fw.img_len)
		return UCMD_CMD(NVME_SC_OVERLAPPING_RANGE) | UCMD_DNR;
	if (off > c->fw.img_len)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (!c->fw.img && !(c->fw.img = malloc(UCMD_FW_MAX_IMAGE)))
		return UCMD_GEN(NVME_SC_INTERNAL);
	st = ctrl_data_from_host(c, req, c->fw.img + off, len);
	if (st)
		return st;
	c->fw.img_len = (uint32_t)(off + len);
	if (download_save(c)) {
		ctrl_fw_discard(c);
		return UCMD_GEN(NVME_SC_INTERNAL);
	}
	return 0;
}

/* The header's revision into rev (trailing spaces dropped); false if not ours */
static bool image_parse(const uint8_t *img, uint32_t len, char rev[9], uint32_t *flags)
{
	int n = 8;

	if (len < UCMD_FW_HDR_LEN || memcmp(img, UCMD_FW_MAGIC, 8))
		return false;
	memcpy(rev, img + 8, 8);
	rev[8] = 0;
	while (n > 0 && rev[n - 1] == ' ')
		rev[--n] = 0;
	if (!n)
		return false;
	for (int i = 0; i < n; i++)
		if (rev[i] < 0x20 || rev[i] > 0x7e)
			return false;
	memcpy(flags, img + 16, 4);
	*flags = le32toh(*flags);
	return !(*flags & ~UCMD_FW_NEEDS_CONV);
}

static int store_image(struct ucmd_ctrl *c, uint8_t slot)
{
	char name[16];
	uint8_t *copy;

	if (c->dir) {
		snprintf(name, sizeof(name), "fw%u.img", slot);
		return ctrl_write_atomic(c, name, c->fw.img, c->fw.img_len);
	}
	copy = malloc(c->fw.img_len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, c->fw.img, c->fw.img_len);
	free(c->fw.mem[slot]);
	c->fw.mem[slot] = copy;
	c->fw.mem_len[slot] = c->fw.img_len;
	return 0;
}

static void activate(struct ucmd_ctrl *c, uint8_t slot)
{
	char *rev = strdup(c->fw.rev[slot]);

	if (!rev)
		return;		/* stays on the old image; retried at the next reset */
	free(c->firmware);
	c->firmware = rev;
	c->fw.active = slot;
	c->fw.next = 0;
	c->fw.next_conv = false;
}

/* FS 0 lets the controller choose: an empty writable slot, else the oldest */
static uint8_t choose_slot(struct ucmd_ctrl *c)
{
	for (uint8_t s = 2; s <= UCMD_FW_SLOTS; s++)
		if (!c->fw.rev[s][0])
			return s;
	return c->fw.active == 2 ? 3 : 2;
}

uint16_t ctrl_admin_fw_commit(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint32_t dw10 = req->cmd.cdw10, flags = 0;
	uint8_t slot = (uint8_t)FS(dw10), ca = (uint8_t)CA(dw10);
	char rev[9];

	if (dw10 & ~0x3fu)	/* BPID: no boot partitions */
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	/* 4, 5 reserved; 6, 7 are boot partition actions */
	if (ca > NVME_FW_COMMIT_CA_REPLACE_AND_ACTIVATE_IMMEDIATE)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (slot > UCMD_FW_SLOTS)
		return ST_SLOT;
	/* action 3 replaces first when an image was downloaded, else activates the slot's */
	if (ca == NVME_FW_COMMIT_CA_REPLACE || ca == NVME_FW_COMMIT_CA_REPLACE_AND_ACTIVATE ||
	    (ca == NVME_FW_COMMIT_CA_REPLACE_AND_ACTIVATE_IMMEDIATE && c->fw.img_len)) {
		if (!slot)
			slot = choose_slot(c);
		if (slot == 1)
			return ST_SLOT;		/* FRMW bit 0: read-only */
		if (!c->fw.img_len || !image_parse(c->fw.img, c->fw.img_len, rev, &flags))
			return ST_IMAGE;
		if (store_image(c, slot))
			return UCMD_GEN(NVME_SC_INTERNAL);
		memcpy(c->fw.rev[slot], rev, sizeof(rev));
		c->fw.flags[slot] = flags;
		/* the download buffer is consumed: the next image starts afresh */
		ctrl_fw_discard(c);
		if (c->fw.next == slot)
			c->fw.next = 0;	/* the image it named is gone */
		if (ca == NVME_FW_COMMIT_CA_REPLACE) {
			ctrl_persist(c);
			return 0;
		}
	} else {
		/* activate what a slot holds: the slot must be named and hold one */
		if (!slot)
			return ST_SLOT;
		if (!c->fw.rev[slot][0])
			return ST_IMAGE;
	}
	if (ca == NVME_FW_COMMIT_CA_REPLACE_AND_ACTIVATE_IMMEDIATE) {
		if (c->fw.flags[slot] & UCMD_FW_NEEDS_CONV) {
			c->fw.next = slot;
			c->fw.next_conv = true;
			ctrl_persist(c);
			return UCMD_CMD(NVME_SC_FW_NEEDS_CONV_RESET);
		}
		activate(c, slot);
		ctrl_persist(c);
		return 0;
	}
	c->fw.next = slot;
	c->fw.next_conv = (c->fw.flags[slot] & UCMD_FW_NEEDS_CONV) != 0;
	ctrl_persist(c);
	return 0;
}

void ctrl_fw_reset(struct ucmd_ctrl *c, bool conventional)
{
	/* a reset discards a download that was not committed */
	if (c->fw.img_len)
		ctrl_fw_discard(c);
	if (!c->fw.next || (c->fw.next_conv && !conventional))
		return;
	activate(c, c->fw.next);
	if (!c->p.read_only)
		ctrl_persist(c);
}

void ctrl_log_fw(struct ucmd_ctrl *c, struct nvme_firmware_slot *f)
{
	f->afi = (uint8_t)(c->fw.active | (c->fw.next << 4));
	for (unsigned s = 1; s <= UCMD_FW_SLOTS; s++) {
		size_t n = strlen(c->fw.rev[s]);

		if (!n)
			continue;	/* an empty slot reads as zeros */
		memset(f->frs[s - 1], ' ', sizeof(f->frs[0]));
		memcpy(f->frs[s - 1], c->fw.rev[s], n);
	}
}

void ctrl_fw_free(struct ucmd_ctrl *c)
{
	free(c->fw.img);
	for (unsigned s = 0; s <= UCMD_FW_SLOTS; s++)
		free(c->fw.mem[s]);
}
