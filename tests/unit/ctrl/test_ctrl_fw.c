/* SPDX-License-Identifier: MIT */
/*
 * Firmware Image Download and Commit through the admin queue: pieces,
 * granularity and overlap, each commit action and each status, the slot
 * log and Identify's FR following the active slot, activation at a
 * Controller Level Reset or only at a cold start, kept across restarts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc)	((sct) << 8 | (sc))
#define DNR		0x4000
#define ST_SLOT		(SC(1, NVME_SC_FIRMWARE_SLOT) | DNR)
#define ST_IMAGE	(SC(1, NVME_SC_FIRMWARE_IMAGE) | DNR)
#define ST_INVALID	(SC(0, NVME_SC_INVALID_FIELD) | DNR)
#define IMG_LEN		5020u	/* a 4 KiB piece and a shorter last one */

static uint8_t *image(struct host *h, const char *rev, uint32_t flags)
{
	uint8_t *img = host_alloc(h, 32768);
	char r[9];

	snprintf(r, sizeof(r), "%-8s", rev);
	memcpy(img, "UCMDFW01", 8);
	memcpy(img + 8, r, 8);
	memcpy(img + 16, &flags, 4);
	fill_pattern(img + 20, IMG_LEN - 20, 3);
	return img;
}

static uint16_t download(struct host *h, const uint8_t *buf, uint32_t off, uint32_t len)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_fw_download,
				     .cdw10 = len / 4 - 1, .cdw11 = off / 4 };

	host_set_prp(h, &sqe, (void *)(buf + off), len);
	return host_cmd(h, 0, &sqe, NULL);
}

static uint16_t download_all(struct host *h, const uint8_t *img)
{
	uint16_t st = download(h, img, 0, 4096);

	return st ? st : download(h, img, 4096, IMG_LEN - 4096);
}

static uint16_t commit(struct host *h, uint32_t slot, uint32_t ca)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_fw_commit, .cdw10 = ca << 3 | slot };

	return host_cmd(h, 0, &sqe, NULL);
}

static struct nvme_firmware_slot *fw_log(struct host *h)
{
	struct nvme_firmware_slot *l = host_alloc(h, sizeof(*l));

	assert_int_equal(host_get_log(h, NVME_LOG_LID_FW_SLOT, 0, l, sizeof(*l)), 0);
	return l;
}

static void assert_fr(struct host *h, const char *fr8)
{
	struct nvme_id_ctrl *id = host_alloc(h, 4096);

	assert_int_equal(host_identify(h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	assert_memory_equal(id->fr, fr8, 8);
}

static void reset(struct host *h)
{
	host_disable(h);
	assert_int_equal(host_enable(h, HOST_ADMIN_QD), 0);
}

static void open_dir(struct host *h, const char *dir, bool power_on)
{
	struct ucmd_ctrl_params p;

	host_default_params(&p);
	p.dir = dir;
	p.firmware = "1.0";
	p.power_on = power_on;
	assert_int_equal(host_open(h, &p), 0);
}

static void test_identify(void **state)
{
	struct host h;
	struct nvme_id_ctrl *id;
	struct ucmd_ctrl_params p;

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	assert_true(id->oacs & NVME_CTRL_OACS_FW);
	assert_int_equal(id->frmw, NVME_CTRL_FRMW_1ST_RO | 3 << 1 | NVME_CTRL_FRMW_FW_ACT_NO_RESET);
	assert_int_equal(id->fwug, 1);
	host_close(&h);
}

static void test_download_errors(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-fw-XXXXXX";
	struct host h;
	uint8_t *img;

	(void)state;
	assert_non_null(mkdtemp(dir));
	open_dir(&h, dir, false);
	img = image(&h, "2.0", 0);
	/* not on the 4 KiB granularity */
	assert_int_equal(download(&h, img, 4, 4096), ST_INVALID);
	assert_int_equal(download(&h, img, 0, 8192), 0);
	/* inside what was received */
	assert_int_equal(download(&h, img, 4096, 4096), SC(1, NVME_SC_OVERLAPPING_RANGE) | DNR);
	/* past it, leaving a gap */
	assert_int_equal(download(&h, img, 16384 - 4096 * 2, 4096), 0);	/* 8192: in order */
	assert_int_equal(download(&h, img, 16384 + 4096, 4096), ST_INVALID);
	/* past the largest image */
	assert_int_equal(download(&h, img, (1u << 20), 4096), ST_INVALID);
	/* a piece at 0 starts over */
	assert_int_equal(download_all(&h, img), 0);
	/* slots: 1 is read-only, 4 does not exist */
	assert_int_equal(commit(&h, 1, NVME_FW_COMMIT_CA_REPLACE), ST_SLOT);
	assert_int_equal(commit(&h, 4, NVME_FW_COMMIT_CA_REPLACE), ST_SLOT);
	assert_int_equal(commit(&h, 2, 6), ST_INVALID);	/* boot partitions */
	assert_int_equal(commit(&h, 2, 4), ST_INVALID);
	assert_int_equal(commit(&h, 2 | 1u << 31, NVME_FW_COMMIT_CA_REPLACE), ST_INVALID);
	/* activating an empty slot, or a slot not named */
	assert_int_equal(commit(&h, 3, NVME_FW_COMMIT_CA_SET_ACTIVE), ST_IMAGE);
	assert_int_equal(commit(&h, 0, NVME_FW_COMMIT_CA_SET_ACTIVE), ST_SLOT);
	/* no image received (consumed by nothing yet: a bad one) */
	memcpy(img, "NOTOURS!", 8);
	assert_int_equal(download_all(&h, img), 0);
	assert_int_equal(commit(&h, 2, NVME_FW_COMMIT_CA_REPLACE), ST_IMAGE);
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

static void test_actions(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-fw-XXXXXX", path[128];
	struct nvme_firmware_slot *l;
	struct stat sb;
	struct host h;

	(void)state;
	assert_non_null(mkdtemp(dir));
	open_dir(&h, dir, false);
	l = fw_log(&h);
	assert_int_equal(l->afi, 1);
	assert_memory_equal(l->frs[0], "1.0     ", 8);
	assert_fr(&h, "1.0     ");
	/* action 0: stored in slot 2 (chosen: FS 0), nothing activated */
	assert_int_equal(download_all(&h, image(&h, "2.0", 0)), 0);
	assert_int_equal(commit(&h, 0, NVME_FW_COMMIT_CA_REPLACE), 0);
	snprintf(path, sizeof(path), "%s/fw2.img", dir);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, IMG_LEN);
	l = fw_log(&h);
	assert_int_equal(l->afi, 1);
	assert_memory_equal(l->frs[1], "2.0     ", 8);
	/* the image was consumed: another commit needs another download */
	assert_int_equal(commit(&h, 3, NVME_FW_COMMIT_CA_REPLACE), ST_IMAGE);
	/* action 2: slot 2 at the next reset */
	assert_int_equal(commit(&h, 2, NVME_FW_COMMIT_CA_SET_ACTIVE), 0);
	assert_int_equal(fw_log(&h)->afi, 1 | 2 << 4);
	assert_fr(&h, "1.0     ");
	reset(&h);
	assert_int_equal(fw_log(&h)->afi, 2);
	assert_fr(&h, "2.0     ");
	/* action 1: slot 3 replaced and activated at the next reset */
	assert_int_equal(download_all(&h, image(&h, "3.0", 0)), 0);
	assert_int_equal(commit(&h, 3, NVME_FW_COMMIT_CA_REPLACE_AND_ACTIVATE), 0);
	assert_int_equal(fw_log(&h)->afi, 2 | 3 << 4);
	reset(&h);
	assert_int_equal(fw_log(&h)->afi, 3);
	assert_fr(&h, "3.0     ");
	/* action 3 without a download: slot 1 at once */
	assert_int_equal(commit(&h, 1, NVME_FW_COMMIT_CA_REPLACE_AND_ACTIVATE_IMMEDIATE), 0);
	assert_int_equal(fw_log(&h)->afi, 1);
	assert_fr(&h, "1.0     ");
	/* action 3 with one that needs a conventional reset: pending past a controller reset */
	assert_int_equal(download_all(&h, image(&h, "4.0", 1)), 0);
	assert_int_equal(commit(&h, 2, NVME_FW_COMMIT_CA_REPLACE_AND_ACTIVATE_IMMEDIATE),
			 SC(1, NVME_SC_FW_NEEDS_CONV_RESET));
	l = fw_log(&h);
	assert_int_equal(l->afi, 1 | 2 << 4);
	assert_memory_equal(l->frs[1], "4.0     ", 8);
	reset(&h);
	assert_int_equal(fw_log(&h)->afi, 1 | 2 << 4);
	assert_fr(&h, "1.0     ");
	host_close(&h);
	/* not a cold start (same boot, clean): still pending */
	open_dir(&h, dir, false);
	assert_int_equal(fw_log(&h)->afi, 1 | 2 << 4);
	host_close(&h);
	/* the cold start activates it */
	open_dir(&h, dir, true);
	l = fw_log(&h);
	assert_int_equal(l->afi, 2);
	assert_memory_equal(l->frs[0], "1.0     ", 8);
	assert_memory_equal(l->frs[1], "4.0     ", 8);
	assert_memory_equal(l->frs[2], "3.0     ", 8);
	assert_fr(&h, "4.0     ");
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

/* A host that shuts down (SHN) and disables is letting go, not resetting */
static void host_shutdown(struct host *h)
{
	ctrl_write32(h->ctrl, UCMD_NVME_REG_CC, ctrl_read32(h->ctrl, UCMD_NVME_REG_CC) |
			  1u << UCMD_NVME_CC_SHN_SHIFT);
	host_disable(h);
	assert_int_equal(host_enable(h, HOST_ADMIN_QD), 0);
}

/* The pieces are kept while the device stays powered, across users */
static void test_download_kept(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-fw-XXXXXX", path[128];
	struct host h;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fw.download", dir);
	open_dir(&h, dir, false);
	assert_int_equal(download_all(&h, image(&h, "5.0", 0)), 0);
	assert_int_equal(access(path, F_OK), 0);
	host_close(&h);
	/* the next CLI call commits what the last one downloaded */
	open_dir(&h, dir, false);
	assert_int_equal(commit(&h, 2, NVME_FW_COMMIT_CA_REPLACE), 0);
	assert_memory_equal(fw_log(&h)->frs[1], "5.0     ", 8);
	assert_int_not_equal(access(path, F_OK), 0);
	/* a reset discards a download */
	assert_int_equal(download_all(&h, image(&h, "6.0", 0)), 0);
	reset(&h);
	assert_int_equal(commit(&h, 3, NVME_FW_COMMIT_CA_REPLACE), ST_IMAGE);
	assert_int_not_equal(access(path, F_OK), 0);
	/* a host letting go does not, nor does it activate a pending image */
	assert_int_equal(download_all(&h, image(&h, "6.0", 0)), 0);
	assert_int_equal(commit(&h, 2, NVME_FW_COMMIT_CA_SET_ACTIVE), 0);
	host_shutdown(&h);
	assert_int_equal(fw_log(&h)->afi, 1 | 2 << 4);
	assert_int_equal(commit(&h, 3, NVME_FW_COMMIT_CA_REPLACE), 0);
	reset(&h);
	assert_int_equal(fw_log(&h)->afi, 2);
	/* a power cycle discards one too */
	assert_int_equal(download_all(&h, image(&h, "7.0", 0)), 0);
	host_close(&h);
	open_dir(&h, dir, true);
	assert_int_equal(commit(&h, 3, NVME_FW_COMMIT_CA_REPLACE), ST_IMAGE);
	assert_int_not_equal(access(path, F_OK), 0);
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

/*
 * A revision with a space inside is printable ASCII, as FR allows: the state
 * that records it must load again (it once saved and then refused to load).
 */
static void test_space_in_revision(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-fw-XXXXXX";
	struct host h;

	(void)state;
	assert_non_null(mkdtemp(dir));
	open_dir(&h, dir, false);
	assert_int_equal(download_all(&h, image(&h, " 2 b", 0)), 0);
	assert_int_equal(commit(&h, 2, NVME_FW_COMMIT_CA_REPLACE), 0);
	host_close(&h);
	open_dir(&h, dir, false);
	assert_memory_equal(fw_log(&h)->frs[1], " 2 b    ", 8);
	host_close(&h);
	assert_int_equal(host_rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identify),
		cmocka_unit_test(test_download_errors),
		cmocka_unit_test(test_actions),
		cmocka_unit_test(test_download_kept),
		cmocka_unit_test(test_space_in_revision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
