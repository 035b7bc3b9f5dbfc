/* SPDX-License-Identifier: MIT */
/*
 * The synchronous ioctl path has its security hook (file_ioctl, Linux's
 * security_file_ioctl): the rules that judge a command sent as a uring_cmd
 * judge it sent by ucmd_ioctl(), the audit trail records the decision, and
 * the driver executes the very copy that was judged, not the caller's
 * memory read again.
 */
#include "host_fixture.h"
#include "security/hooks.h"
#include "security/security.h"
#include "uaccess/uaccess.h"

#include <json-c/json.h>
#include <nvme/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char policy[] =
	"[policy]\ninherit = default\n"
	"[rule no-get-feature]\nverb = get-feature\naction = deny\n";

static const char *tmpfile_with(const char *text)
{
	static char paths[2][64];
	static unsigned n;
	char *path = paths[n++ % 2];
	int fd;

	snprintf(path, 64, "/tmp/ucmd-ioctl-hook-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_rule_judges_ioctl_and_uring_cmd(void **state)
{
	const char *ppath = tmpfile_with(policy), *apath = tmpfile_with("");
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE };
	struct nvme_passthru_cmd64 p;
	struct nvme_uring_cmd u;
	uint8_t *buf = fx_alloc(4096);
	char err[256], line[4096];
	FILE *a;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	assert_int_equal(ucmd_security_setup(f.e, ppath, apath, err, sizeof(err)), 0);

	/* denied by the verb rule, whoever calls (root too), both ways */
	memset(&p, 0, sizeof(p));
	p.opcode = nvme_admin_get_features;
	p.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &p), -EACCES);
	assert_int_equal(ucmd_ioctl(f.e, f.ng, NVME_IOCTL_ADMIN64_CMD, &p), -EACCES);
	memset(&u, 0, sizeof(u));
	u.opcode = nvme_admin_get_features;
	u.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	assert_int_equal(fx_nvme(&f, f.dev, NVME_URING_CMD_ADMIN, &u, NULL), -EACCES);

	/* what the rule does not name goes on as before */
	memset(&p, 0, sizeof(p));
	p.opcode = nvme_admin_identify;
	p.cdw10 = NVME_IDENTIFY_CNS_CTRL;
	p.addr = (uint64_t)(uintptr_t)buf;
	p.data_len = 4096;
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &p), 0);
	/* an ioctl that carries no command is not a command to judge */
	assert_int_equal(ucmd_ioctl(f.e, f.ng, NVME_IOCTL_ID, NULL), (int)f.nsid);
	assert_int_equal(ucmd_ioctl(f.e, f.ng, 0x1234, NULL), -ENOTTY);
	assert_int_equal(ucmd_ioctl(f.e, 4000, NVME_IOCTL_ID, NULL), -EBADF);

	/* one record per denial; the ioctl's names its hook */
	a = fopen(apath, "r");
	assert_non_null(a);
	unsigned n = 0, ioctls = 0;
	while (fgets(line, sizeof(line), a)) {
		json_object *j = json_tokener_parse(line), *v;

		assert_non_null(j);
		n++;
		assert_true(json_object_object_get_ex(j, "hook", &v));
		if (!strcmp(json_object_get_string(v), "file_ioctl")) {
			ioctls++;
			assert_true(json_object_object_get_ex(j, "verb", &v));
			assert_string_equal(json_object_get_string(v), "get-feature");
			assert_true(json_object_object_get_ex(j, "decision", &v));
			assert_string_equal(json_object_get_string(v), "deny");
			assert_true(json_object_object_get_ex(j, "rule", &v));
			assert_non_null(strstr(json_object_get_string(v), "no-get-feature"));
		}
		json_object_put(j);
	}
	fclose(a);
	assert_int_equal(ioctls, 2);
	assert_int_equal(n, 3);

	ucmd_security_teardown(f.e);
	fx_teardown(&f);
	free(buf);
	unlink(ppath);
	unlink(apath);
}

/*
 * A module after the policy rewrites the caller's command in memory once
 * the policy has allowed it (what a second thread racing the ioctl would
 * do): the driver must still run the Identify that was judged.
 */
static struct nvme_passthru_cmd64 *racing;

static int rewrite_after_judging(void *priv, const struct ucmd_ioctl_call *call,
				 const struct ucmd_cred *cred)
{
	(void)priv;
	(void)call;
	(void)cred;
	if (racing) {
		racing->opcode = nvme_admin_format_nvm;
		racing->addr = 0;
		racing->data_len = 0;
	}
	return 0;
}

static const struct ucmd_security_ops racer = { .name = "racer",
						.file_ioctl = rewrite_after_judging };

static void test_driver_runs_the_judged_copy(void **state)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE };
	struct nvme_passthru_cmd64 p;
	struct nvme_id_ctrl *id = fx_alloc(4096);

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	assert_int_equal(security_register(f.e, &racer, NULL), 0);
	memset(&p, 0, sizeof(p));
	memset(id, 0, 4096);
	p.opcode = nvme_admin_identify;
	p.cdw10 = NVME_IDENTIFY_CNS_CTRL;
	p.addr = (uint64_t)(uintptr_t)id;
	p.data_len = 4096;
	racing = &p;
	assert_int_equal(ucmd_ioctl(f.e, f.dev, NVME_IOCTL_ADMIN64_CMD, &p), 0);
	racing = NULL;
	/* the caller's memory says Format now; the controller ran Identify */
	assert_int_equal(p.opcode, nvme_admin_format_nvm);
	assert_int_not_equal(id->vid | id->ssvid | id->sn[0], 0);
	security_unregister(f.e, "racer");
	fx_teardown(&f);
	free(id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_judges_ioctl_and_uring_cmd),
		cmocka_unit_test(test_driver_runs_the_judged_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
