/* SPDX-License-Identifier: MIT */
/*
 * nvme_cmd_allowed(): an unprivileged caller (a child that gave up root and
 * with it CAP_SYS_ADMIN) gets only the Identify data needed to build I/O,
 * reads on a read-only open, writes on a writable one; everything else is
 * -EACCES. Plain checks in the child, which reports the failing line. The
 * engine has had no ucmd_security_setup(): the driver checks nothing
 * itself, so these refusals prove the default policy is installed with
 * every engine (nothing fails open).
 */
#include "host_fixture.h"

#include <fcntl.h>
#include <nvme/types.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(x) do { if (!(x)) _exit(__LINE__ & 0xff ? __LINE__ & 0xff : 1); } while (0)

static int admin(struct fx *f, uint8_t opcode, uint32_t cdw10, void *buf)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .cdw10 = cdw10 };

	if (buf) {
		c.addr = (uint64_t)(uintptr_t)buf;
		c.data_len = 4096;
	}
	return fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &c, NULL);
}

static void child(int open_flags)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE, .open_flags = open_flags,
			     .rdonly = (open_flags & O_ACCMODE) == O_RDONLY };
	uint8_t *buf = fx_alloc(4096);
	struct nvme_uring_cmd c;

	if (geteuid() == 0) {
		CHECK(setresgid(65534, 65534, 65534) == 0);
		CHECK(setresuid(65534, 65534, 65534) == 0);
	}
	CHECK(fx_setup(&f, &o) == 0);
	/* the allowed Identify subset */
	CHECK(admin(&f, nvme_admin_identify, NVME_IDENTIFY_CNS_CTRL, buf) == 0);
	CHECK(admin(&f, nvme_admin_identify, NVME_IDENTIFY_CNS_NS, buf) == -EACCES ||
	      admin(&f, nvme_admin_identify, NVME_IDENTIFY_CNS_NS, buf) >= 0);
	/* everything else on the admin queue needs CAP_SYS_ADMIN, as in Linux */
	CHECK(admin(&f, nvme_admin_identify, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, buf) == -EACCES);
	CHECK(admin(&f, nvme_admin_get_features, NVME_FEAT_FID_NUM_QUEUES, NULL) == -EACCES);
	CHECK(admin(&f, nvme_admin_get_log_page, NVME_LOG_LID_SMART | (1023u << 16), buf) ==
	      -EACCES);
	CHECK(admin(&f, nvme_admin_format_nvm, 0, NULL) == -EACCES);
	/* reads are fine on any open */
	fx_rw_cmd(&c, nvme_cmd_read, f.nsid, 0, 1, buf, f.lbs);
	CHECK(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL) == 0);
	/* writes need FMODE_WRITE */
	fx_rw_cmd(&c, nvme_cmd_write, f.nsid, 0, 1, buf, f.lbs);
	CHECK(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL) ==
	      ((open_flags & O_ACCMODE) == O_RDONLY ? -EACCES : 0));
	/* write zeroes changes LBA contents (LBCC) */
	fx_rw_cmd(&c, nvme_cmd_write_zeroes, f.nsid, 0, 1, NULL, 0);
	CHECK(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL) ==
	      ((open_flags & O_ACCMODE) == O_RDONLY ? -EACCES : 0));
	/* vendor specific: never unprivileged */
	fx_rw_cmd(&c, 0x81, f.nsid, 0, 1, NULL, 0);
	CHECK(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL) == -EACCES);
	/* the ioctl path applies the same rules (the file_ioctl hook) */
	struct nvme_passthru_cmd64 p = { .opcode = nvme_admin_get_features, .cdw10 = 7 };
	CHECK(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &p) == -EACCES);
	struct nvme_passthru_cmd64 fmt = { .opcode = nvme_admin_format_nvm };
	CHECK(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &fmt) == -EACCES);
	CHECK(ucmd_ioctl(f.e, f.ng, NVME_IOCTL_ADMIN64_CMD, &fmt) == -EACCES);
	struct nvme_passthru_cmd64 idc = { .opcode = nvme_admin_identify,
					   .cdw10 = NVME_IDENTIFY_CNS_CTRL,
					   .addr = (uint64_t)(uintptr_t)buf, .data_len = 4096 };
	CHECK(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &idc) == 0);
	CHECK(ucmd_ioctl(f.e, f.ng, NVME_IOCTL_ID, NULL) == (int)f.nsid);
	fx_teardown(&f);
	free(buf);
	_exit(0);
}

static void run_child(int open_flags)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		child(open_flags);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_unprivileged_rdonly(void **state)
{
	(void)state;
	run_child(O_RDONLY);
}

static void test_unprivileged_rdwr(void **state)
{
	(void)state;
	run_child(O_RDWR);
}

/* The privileged caller (if we are one) gets everything. */
static void test_privileged(void **state)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE, .rdonly = true };
	uint8_t *buf = fx_alloc(4096);

	(void)state;
	if (geteuid() != 0) {
		free(buf);
		skip();
	}
	assert_int_equal(fx_setup(&f, &o), 0);
	assert_int_equal(admin(&f, nvme_admin_get_features, NVME_FEAT_FID_NUM_QUEUES, NULL), 0);
	assert_int_equal(admin(&f, nvme_admin_identify, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, buf), 0);
	struct nvme_uring_cmd c;
	fx_rw_cmd(&c, nvme_cmd_write, f.nsid, 0, 1, buf, f.lbs);
	/* CAP_SYS_ADMIN overrides the open mode, as in Linux */
	assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);
	fx_teardown(&f);
	free(buf);
}

/*
 * The engine remembers per file that a privileged caller may do anything
 * there (the policy's answer, cached): a caller that drops CAP_SYS_ADMIN
 * on the same ring and file must be judged again, and refused.
 */
static void test_privilege_dropped_on_a_warm_file(void **state)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE };
	int status;
	pid_t pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(fx_setup(&f, &o), 0);
	assert_int_equal(admin(&f, nvme_admin_get_features, NVME_FEAT_FID_NUM_QUEUES, NULL), 0);
	struct nvme_passthru_cmd64 p = { .opcode = nvme_admin_get_features, .cdw10 = 7 };
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		CHECK(setresgid(65534, 65534, 65534) == 0);
		CHECK(setresuid(65534, 65534, 65534) == 0);
		CHECK(admin(&f, nvme_admin_get_features, NVME_FEAT_FID_NUM_QUEUES, NULL) ==
		      -EACCES);
		CHECK(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &p) == -EACCES);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unprivileged_rdonly),
		cmocka_unit_test(test_unprivileged_rdwr),
		cmocka_unit_test(test_privileged),
		cmocka_unit_test(test_privilege_dropped_on_a_warm_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
