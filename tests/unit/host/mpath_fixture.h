/* SPDX-License-Identifier: MIT */
/*
 * The tests of a controller directory's subsystem of several controllers
 * (test_host_mpath_*.c): an engine, the controllers attached as paths of
 * one head, a ring, and the commands they send.
 */
#ifndef UCMD_TEST_MPATH_FIXTURE_H
#define UCMD_TEST_MPATH_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvme/types.h>

#include "host_fixture.h"

#define UNUSED __attribute__((unused))

struct mp {
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_subsys *s;
	struct ucmd_ring ring;
	char dir[64];
};

UNUSED static int cmd(struct mp *m, int fd, uint32_t op, struct nvme_uring_cmd *c, uint64_t *res)
{
	struct io_uring_cqe *cqe;
	int ret;

	ucmd_prep_nvme_cmd(ucmd_get_sqe(&m->ring), fd, op, c);
	assert_int_equal(ucmd_submit_and_wait(&m->ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&m->ring, &cqe), 0);
	ret = cqe->res;
	if (res)
		*res = cqe->big_cqe[0];
	ucmd_cqe_seen(&m->ring, cqe);
	return ret;
}

UNUSED static void up(struct mp *m, unsigned controllers, bool fresh)
{
	struct ucmd_ctrl_params cp = { .dir = m->dir, .controllers = (uint8_t)controllers };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_nvme_host_opts ho = { 0 };

	m->e = ucmd_engine_new();
	assert_non_null(m->e);
	assert_int_equal(ucmd_ctrl_create(&cp, &m->ctrl), 0);
	if (fresh) {
		struct ucmd_ns_params np = { .nsze = 4096, .store = UCMD_NS_STORE_FILE,
					     .attach = true };

		assert_int_equal(ucmd_ctrl_ns_create(m->ctrl, &np), 1);
	}
	assert_int_equal(ucmd_nvme_attach_multipath(m->e, m->ctrl, &ho, &m->s), 0);
	assert_int_equal(ucmd_queue_init_engine(m->e, 16, &m->ring, &p), 0);
}

UNUSED static void down(struct mp *m)
{
	ucmd_queue_exit(&m->ring);
	ucmd_nvme_subsys_detach(m->s);
	assert_int_equal(ucmd_ctrl_destroy(m->ctrl), 0);
	ucmd_engine_free(m->e);
}

UNUSED static int identify(struct mp *m, const char *dev, uint8_t cns, uint32_t nsid, void *buf)
{
	struct nvme_uring_cmd c = { .opcode = nvme_admin_identify, .nsid = nsid, .cdw10 = cns,
				    .addr = (uint64_t)(uintptr_t)buf, .data_len = 4096 };
	int fd = ucmd_open(m->e, dev, O_RDWR), ret;

	assert_true(fd >= 0);
	ret = cmd(m, fd, NVME_URING_CMD_ADMIN, &c, NULL);
	ucmd_close(m->e, fd);
	return ret;
}

/* Until path i of namespace 1 has ANA state want as the host knows it (the notice, the log) */
UNUSED static void wait_path_state(struct mp *m, unsigned i, uint8_t want)
{
	struct ucmd_nvme_path_info pi;

	for (unsigned t = 0; t < 500; t++) {
		assert_int_equal(ucmd_nvme_subsys_path_info(m->s, 1, i, &pi), 0);
		if (pi.ana_state == want)
			return;
		usleep(10000);
	}
	fail_msg("path %u stays in ANA state %u, not %u", i, pi.ana_state, want);
}

UNUSED static void ana_log(struct mp *m, const char *dev, uint8_t *buf)
{
	struct nvme_uring_cmd g = { .opcode = nvme_admin_get_log_page, .nsid = 0xffffffff,
				    .cdw10 = NVME_LOG_LID_ANA | ((4096 / 4 - 1) << 16),
				    .addr = (uint64_t)(uintptr_t)buf, .data_len = 4096 };
	int fd = ucmd_open(m->e, dev, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(cmd(m, fd, NVME_URING_CMD_ADMIN, &g, NULL), 0);
	ucmd_close(m->e, fd);
}

UNUSED static unsigned long dispatched(struct mp *m, unsigned i)
{
	struct ucmd_nvme_path_info pi;

	assert_int_equal(ucmd_nvme_subsys_path_info(m->s, 1, i, &pi), 0);
	return pi.dispatched;
}

UNUSED static int feature(struct mp *m, const char *dev, uint8_t op, uint32_t cdw10, uint32_t cdw11,
		   uint64_t *res)
{
	struct nvme_uring_cmd c = { .opcode = op, .cdw10 = cdw10, .cdw11 = cdw11 };
	int fd = ucmd_open(m->e, dev, O_RDWR), ret;

	assert_true(fd >= 0);
	ret = cmd(m, fd, NVME_URING_CMD_ADMIN, &c, res);
	ucmd_close(m->e, fd);
	return ret;
}

UNUSED static int admin(struct mp *m, const char *dev, struct nvme_uring_cmd *c, uint64_t *res)
{
	int fd = ucmd_open(m->e, dev, O_RDWR), ret;

	assert_true(fd >= 0);
	ret = cmd(m, fd, NVME_URING_CMD_ADMIN, c, res);
	ucmd_close(m->e, fd);
	return ret;
}

/* Namespace Attachment of nsid to the controller IDs given (sel 0 attach, 1 detach) */
UNUSED static int attach(struct mp *m, const char *dev, uint32_t nsid, unsigned sel, unsigned n,
		  const uint16_t *ids)
{
	struct nvme_ctrl_list *l = fx_alloc(4096);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_ns_attach, .nsid = nsid, .cdw10 = sel,
				    .addr = (uint64_t)(uintptr_t)l, .data_len = 4096 };
	int ret;

	l->num = htole16((uint16_t)n);
	for (unsigned i = 0; i < n; i++)
		l->identifier[i] = htole16(ids[i]);
	ret = admin(m, dev, &c, NULL);
	free(l);
	return ret;
}

/* Whether nsid is in dev's active namespace list */
UNUSED static bool active(struct mp *m, const char *dev, uint32_t nsid)
{
	struct nvme_ns_list *l = fx_alloc(4096);
	bool found = false;

	assert_int_equal(identify(m, dev, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, l), 0);
	for (unsigned i = 0; i < 1024 && l->ns[i]; i++)
		found |= le32toh(l->ns[i]) == nsid;
	free(l);
	return found;
}

#endif
