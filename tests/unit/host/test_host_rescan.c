/* SPDX-License-Identifier: MIT */
/*
 * Namespace management through the host's ioctl path rescans the
 * namespaces as Linux's nvme_passthru_end does: a created and attached
 * namespace gets its devices, a deleted one loses them while a file open
 * on it stays usable (its commands fail with the controller's status).
 */
#include "host_fixture.h"

#include <fcntl.h>
#include <nvme/types.h>
#include <stdlib.h>
#include <string.h>

static bool has_device(struct fx *f, const char *name)
{
	const char *names[64];
	int n = ucmd_device_names(f->e, names, 64);

	for (int i = 0; i < n && i < 64; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static int admin(struct fx *f, uint8_t opcode, uint32_t nsid, uint32_t cdw10, void *buf,
		 uint64_t *result)
{
	struct nvme_passthru_cmd64 c = {
		.opcode = opcode, .nsid = nsid, .cdw10 = cdw10,
		.addr = (uint64_t)(uintptr_t)buf, .data_len = buf ? 4096 : 0,
	};
	int ret = ucmd_ioctl(f->e, f->dev, NVME_IOCTL_ADMIN64_CMD, &c);

	if (result)
		*result = c.result;
	return ret;
}

static void test_rescan_create_attach_delete(void **state)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE };
	struct nvme_id_ctrl *idc = fx_alloc(4096);
	struct nvme_id_ns *id = fx_alloc(4096);
	struct nvme_ctrl_list *cl = fx_alloc(4096);
	uint8_t *buf = fx_alloc(4096);
	uint64_t nsid;
	int fd;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	assert_false(has_device(&f, "ng0n2"));
	assert_int_equal(admin(&f, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, idc, NULL), 0);

	memset(id, 0, 4096);
	id->nsze = id->ncap = htole64(1024);
	assert_int_equal(admin(&f, nvme_admin_ns_mgmt, 0, 0, id, &nsid), 0);
	assert_int_equal(nsid, 2);
	/* created, not attached: not active, no device yet */
	assert_false(has_device(&f, "ng0n2"));
	cl->num = htole16(1);
	cl->identifier[0] = idc->cntlid;
	assert_int_equal(admin(&f, nvme_admin_ns_attach, 2, 0, cl, NULL), 0);
	assert_true(has_device(&f, "ng0n2"));
	assert_true(has_device(&f, "nvme0n2"));

	/* an open file on it: I/O works, and keeps the device alive past delete */
	fd = ucmd_open(f.e, "ng0n2", O_RDWR);
	assert_true(fd >= 0);
	struct nvme_passthru_cmd64 rd = {
		.opcode = nvme_cmd_read, .nsid = 2, .addr = (uint64_t)(uintptr_t)buf,
		.data_len = 512,
	};
	assert_int_equal(ucmd_ioctl(f.e, fd, NVME_IOCTL_IO64_CMD, &rd), 0);

	assert_int_equal(admin(&f, nvme_admin_ns_mgmt, 2, 1, NULL, NULL), 0);
	assert_false(has_device(&f, "ng0n2"));
	assert_false(has_device(&f, "nvme0n2"));
	assert_true(has_device(&f, "ng0n1"));
	/* the controller answers for the gone namespace: Invalid Namespace or Format */
	assert_int_equal(ucmd_ioctl(f.e, fd, NVME_IOCTL_IO64_CMD, &rd) & 0x7ff,
			 NVME_SC_INVALID_NS);
	assert_int_equal(ucmd_close(f.e, fd), 0);
	assert_true(ucmd_open(f.e, "ng0n2", O_RDWR) < 0);

	/* a new namespace 2 gets the names again */
	assert_int_equal(admin(&f, nvme_admin_ns_mgmt, 0, 0, id, &nsid), 0);
	assert_int_equal(admin(&f, nvme_admin_ns_attach, (uint32_t)nsid, 0, cl, NULL), 0);
	assert_true(has_device(&f, "ng0n2"));
	fx_teardown(&f);
	free(idc);
	free(id);
	free(cl);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rescan_create_attach_delete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
