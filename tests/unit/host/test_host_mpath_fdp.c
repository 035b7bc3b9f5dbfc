/* SPDX-License-Identifier: MIT */
/*
 * Flexible Data Placement on a controller directory of several
 * controllers: the endurance group and its FDP configuration are the
 * subsystem's, so every controller reports the same (Identify's CTRATT,
 * Feature 1Dh, the configuration, reclaim unit handle usage and statistics
 * logs, the Endurance Group log, I/O Management Receive), writes with a
 * placement identifier through either controller land in the one group,
 * and the state comes back after a restart.
 */
#include <linux/nvme_ioctl.h>

#include "mpath_fixture.h"

#define BS	4096
#define RU	(64u * 1024)

static void up_fdp(struct mp *m, bool fresh)
{
	struct ucmd_ctrl_params cp = { .dir = m->dir, .controllers = fresh ? 2 : 0,
				       .fdp = { .enable = true, .ru_size = RU } };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_nvme_host_opts ho = { 0 };

	m->e = ucmd_engine_new();
	assert_non_null(m->e);
	assert_int_equal(ucmd_ctrl_create(&cp, &m->ctrl), 0);
	assert_int_equal(ucmd_ctrl_controllers(m->ctrl), 2);
	if (fresh) {
		struct ucmd_ns_params np = { .nsze = 4096, .lbaf = 4, .store = UCMD_NS_STORE_FILE,
					     .attach = true };

		assert_int_equal(ucmd_ctrl_ns_create(m->ctrl, &np), 1);
	}
	assert_int_equal(ucmd_nvme_attach_multipath(m->e, m->ctrl, &ho, &m->s), 0);
	assert_int_equal(ucmd_queue_init_engine(m->e, 16, &m->ring, &p), 0);
}

/* Get Log Page lid with Log Specific Identifier lsi (the endurance group) */
static void log_of(struct mp *m, const char *dev, uint8_t lid, uint16_t lsi, void *buf,
		   uint32_t len)
{
	uint32_t numd = len / 4 - 1;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_log_page,
				    .cdw10 = lid | (numd & 0xffff) << 16,
				    .cdw11 = numd >> 16 | (uint32_t)lsi << 16,
				    .addr = (uint64_t)(uintptr_t)buf, .data_len = len };

	memset(buf, 0, len);
	assert_int_equal(admin(m, dev, &c, NULL), 0);
}

/* An I/O command on controller dev's own path (NVME_IOCTL_IO_CMD, Linux's nvme_dev_user_cmd) */
static int io_on(struct mp *m, const char *dev, struct nvme_passthru_cmd *c)
{
	int fd = ucmd_open(m->e, dev, O_RDWR), ret;

	assert_true(fd >= 0);
	ret = ucmd_ioctl(m->e, fd, NVME_IOCTL_IO_CMD, c);
	ucmd_close(m->e, fd);
	return ret;
}

/* A write of nlb blocks at lba with placement identifier pid (DTYPE 2) through dev */
static int write_pid(struct mp *m, const char *dev, uint64_t lba, uint32_t nlb, uint16_t pid,
		     void *buf)
{
	struct nvme_passthru_cmd c = { .opcode = nvme_cmd_write, .nsid = 1,
				       .addr = (uint64_t)(uintptr_t)buf, .data_len = nlb * BS,
				       .cdw10 = (uint32_t)lba, .cdw11 = (uint32_t)(lba >> 32),
				       .cdw12 = (nlb - 1) | 2u << 20, .cdw13 = (uint32_t)pid << 16 };

	return io_on(m, dev, &c);
}

static uint64_t le64at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* What both controllers must report alike: each read through dev into out (4 pages) */
static void views(struct mp *m, const char *dev, uint8_t *out)
{
	struct nvme_id_ctrl *id = fx_alloc(4096);
	uint64_t res = 0;

	assert_int_equal(identify(m, dev, NVME_IDENTIFY_CNS_CTRL, 0, id), 0);
	/* CTRATT: FDPS (19) and Endurance Groups (4) */
	assert_true(le32toh(id->ctratt) & (1u << 19));
	assert_true(le32toh(id->ctratt) & (1u << 4));
	free(id);
	/* Feature 1Dh of endurance group 1: FDP enabled, configuration 0 */
	assert_int_equal(feature(m, dev, nvme_admin_get_features, NVME_FEAT_FID_FDP, 1, &res), 0);
	assert_int_equal(res & 1, 1);
	log_of(m, dev, NVME_LOG_LID_FDP_CONFIGS, 1, out, 4096);
	log_of(m, dev, NVME_LOG_LID_FDP_RUH_USAGE, 1, out + 4096, 4096);
	log_of(m, dev, NVME_LOG_LID_FDP_STATS, 1, out + 8192, 64);
	log_of(m, dev, NVME_LOG_LID_ENDURANCE_GROUP, 1, out + 12288, 512);
}

static void test_fdp_shared(void **state)
{
	struct mp m = { 0 };
	uint8_t *v0 = fx_alloc(4 * 4096), *v1 = fx_alloc(4 * 4096), *buf = fx_alloc(8 * BS);
	struct nvme_fdp_ruh_status *rs = fx_alloc(4096);

	(void)state;
	snprintf(m.dir, sizeof(m.dir), "/tmp/ucmd-mpfdp-XXXXXX");
	assert_non_null(mkdtemp(m.dir));
	up_fdp(&m, true);
	views(&m, "nvme0", v0);
	views(&m, "nvme1", v1);
	assert_memory_equal(v0, v1, 4 * 4096);

	/* placement identifier 1 through controller 2, 2 through controller 1 */
	fx_fill(buf, 8 * BS, 7);
	assert_int_equal(write_pid(&m, "nvme1", 0, 2, 1, buf), 0);
	assert_int_equal(write_pid(&m, "nvme0", 8, 3, 2, buf), 0);
	/* a handle the configuration does not have: refused through either */
	assert_int_equal(write_pid(&m, "nvme1", 16, 1, 99, buf),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	views(&m, "nvme0", v0);
	views(&m, "nvme1", v1);
	assert_memory_equal(v0, v1, 4 * 4096);
	/* the group's statistics and endurance log count both controllers' writes */
	assert_int_equal(le64at(v0 + 8192), 5 * BS);		/* HBMW */
	struct nvme_endurance_group_log *eg = (void *)(v0 + 12288);
	assert_int_equal(le64at(eg->host_write_cmds), 2);

	/* each handle's unit as either controller's I/O Management Receive says */
	for (unsigned d = 0; d < 2; d++) {
		struct nvme_passthru_cmd c = { .opcode = nvme_cmd_io_mgmt_recv, .nsid = 1,
					       .addr = (uint64_t)(uintptr_t)rs, .data_len = 4096,
					       .cdw10 = 1, .cdw11 = 4096 / 4 - 1 };

		memset(rs, 0, 4096);
		assert_int_equal(io_on(&m, d ? "nvme1" : "nvme0", &c), 0);
		assert_int_equal(le64toh(rs->ruhss[1].ruamw), RU / BS - 2);
		assert_int_equal(le64toh(rs->ruhss[2].ruamw), RU / BS - 3);
		assert_int_equal(le64toh(rs->ruhss[0].ruamw), RU / BS);
	}
	down(&m);

	/* kept: the directory of two with FDP loads, the group as it was */
	up_fdp(&m, false);
	views(&m, "nvme1", v1);
	assert_int_equal(le64at(v1 + 8192), 5 * BS);
	views(&m, "nvme0", v0);
	assert_memory_equal(v0, v1, 4 * 4096);
	down(&m);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", m.dir);
	assert_int_equal(system(rm), 0);
	free(v0);
	free(v1);
	free(buf);
	free(rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdp_shared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
