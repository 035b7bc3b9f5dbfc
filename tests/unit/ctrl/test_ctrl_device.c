/* SPDX-License-Identifier: MIT */
/*
 * State like a device's: a power cycle only at a cold start (a new state,
 * params.power_on, a host boot since the last save, or a last run that did
 * not shut down: then also an unsafe shutdown), volatile feature values
 * kept while "powered", the error log and its count kept across runs, a
 * serial and subsystem NQN of its own per directory, and no namespace that
 * nobody asked for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "nvme/ctrl/ctrl_int.h"

#define SC(sct, sc)	((sct) << 8 | (sc))
#define DNR		0x4000

struct fixture {
	char dir[64], json[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ucmd-ctrl-device-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->json, sizeof(f->json), "%s/ctrl.json", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(host_rmdir(f->dir), 0);
	free(f);
	return 0;
}

static uint64_t u64at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void open_dir(struct host *h, const char *dir, bool power_on)
{
	struct ucmd_ctrl_params p;

	host_default_params(&p);
	p.serial = NULL;	/* the directory's own */
	p.dir = dir;
	p.power_on = power_on;
	assert_int_equal(host_open(h, &p), 0);
}

static struct nvme_smart_log *smart(struct host *h)
{
	struct nvme_smart_log *s = host_alloc(h, sizeof(*s));

	assert_int_equal(host_get_log(h, NVME_LOG_LID_SMART, 0, s, sizeof(*s)), 0);
	return s;
}

/*
 * TNVMCAP of a controller with a directory is what its filesystem holds
 * (at most 1 PiB), not more than the images could ever take: nvme-cli's
 * create-max-ns test makes namespaces of a 64th of it each.
 */
static void test_tnvmcap_dir(void **state)
{
	struct fixture *f = *state;
	struct nvme_id_ctrl *id;
	struct statvfs fs;
	struct host h;
	uint64_t t, u, want;

	assert_int_equal(statvfs(f->dir, &fs), 0);
	want = (uint64_t)fs.f_blocks * fs.f_frsize;
	if (want > 1ull << 50)
		want = 1ull << 50;
	open_dir(&h, f->dir, true);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	t = u64at(id->tnvmcap);
	u = u64at(id->unvmcap);
	assert_int_equal(t, want);
	assert_true(u <= t);
	host_close(&h);
}

/* Change one member of ctrl.json, keeping its checksum right */
static void edit(struct fixture *f, const char *key, json_object *val)
{
	json_object *root = json_object_from_file(f->json);
	char crc[9];

	assert_non_null(root);
	json_object_object_del(root, "crc32c");
	json_object_object_add(root, key, val);
	snprintf(crc, sizeof(crc), "%08x", ctrl_state_crc(root));
	json_object_object_add(root, "crc32c", json_object_new_string(crc));
	assert_int_equal(json_object_to_file(f->json, root), 0);
	json_object_put(root);
}

static void test_power_cycles(void **state)
{
	struct fixture *f = *state;
	struct nvme_smart_log *s;
	struct host h;

	open_dir(&h, f->dir, false);
	assert_true(ucmd_ctrl_is_new(h.ctrl));
	assert_true(ucmd_ctrl_power_cycled(h.ctrl));
	/* a new directory gets no namespace by itself */
	assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 0);
	host_close(&h);
	/* created again and again in the same boot: the device stayed powered */
	for (int i = 0; i < 3; i++) {
		open_dir(&h, f->dir, false);
		assert_false(ucmd_ctrl_is_new(h.ctrl));
		assert_false(ucmd_ctrl_power_cycled(h.ctrl));
		assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 0);
		s = smart(&h);
		assert_int_equal(u64at(s->power_cycles), 1);
		assert_int_equal(u64at(s->unsafe_shutdowns), 0);
		host_close(&h);
	}
	/* the daemon's start */
	open_dir(&h, f->dir, true);
	assert_true(ucmd_ctrl_power_cycled(h.ctrl));
	assert_int_equal(u64at(smart(&h)->power_cycles), 2);
	host_close(&h);
	/* a host reboot since the last save */
	edit(f, "boot_id", json_object_new_string("00000000-0000-0000-0000-000000000000"));
	open_dir(&h, f->dir, false);
	assert_true(ucmd_ctrl_power_cycled(h.ctrl));
	s = smart(&h);
	assert_int_equal(u64at(s->power_cycles), 3);
	assert_int_equal(u64at(s->unsafe_shutdowns), 0);
	host_close(&h);
	/* the last run never shut down: the power went, unsafely */
	edit(f, "clean", json_object_new_boolean(false));
	open_dir(&h, f->dir, false);
	assert_true(ucmd_ctrl_power_cycled(h.ctrl));
	s = smart(&h);
	assert_int_equal(u64at(s->power_cycles), 4);
	assert_int_equal(u64at(s->unsafe_shutdowns), 1);
	host_close(&h);
}

static void test_features(void **state)
{
	struct fixture *f = *state;
	struct host h;
	uint32_t v;

	open_dir(&h, f->dir, false);
	/* volatile: current changes, saved and default do not; SEL 3: saveable, changeable */
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ARBITRATION, 0x0303, false, NULL), 0);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_IRQ_COALESCE, 0x0101, true, NULL), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 0, 0, &v), 0);
	assert_int_equal(v, 0x0303);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 1, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 2, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 3, 0, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_COALESCE, 2, 0, &v), 0);
	assert_int_equal(v, 0x0101);
	/* not saveable: Feature Identifier Not Saveable */
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_NUM_QUEUES, 0, true, NULL),
			 SC(1, NVME_SC_FEATURE_NOT_SAVEABLE) | DNR);
	/* a Controller Level Reset brings back the saved values */
	host_disable(&h);
	assert_int_equal(host_enable(&h, HOST_ADMIN_QD), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ARBITRATION, 0x0404, false, NULL), 0);
	host_close(&h);
	/* the next user of the powered device sees the current value... */
	open_dir(&h, f->dir, false);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 0, 0, &v), 0);
	assert_int_equal(v, 0x0404);
	host_close(&h);
	/* ...a power cycle does not; the saved one survives both */
	open_dir(&h, f->dir, true);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_COALESCE, 0, 0, &v), 0);
	assert_int_equal(v, 0x0101);
	host_close(&h);
}

static void test_error_log(void **state)
{
	struct fixture *f = *state;
	struct ucmd_nvme_sqe bad = { .opcode = 0xc7 };
	struct nvme_error_log_page *e;
	struct host h;
	uint16_t cid;

	open_dir(&h, f->dir, false);
	assert_int_equal(host_cmd(&h, 0, &bad, NULL), SC(0, NVME_SC_INVALID_OPCODE) | DNR);
	assert_int_equal(host_cmd(&h, 0, &bad, NULL), SC(0, NVME_SC_INVALID_OPCODE) | DNR);
	cid = bad.cid;
	assert_int_equal(u64at(smart(&h)->num_err_log_entries), 2);
	host_close(&h);
	open_dir(&h, f->dir, true);
	assert_int_equal(u64at(smart(&h)->num_err_log_entries), 2);
	e = host_alloc(&h, 4096);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_ERROR, 0, e, 4096), 0);
	assert_int_equal(e[0].error_count, 2);
	assert_int_equal(e[0].cmdid, cid);
	assert_int_equal(e[0].sqid, 0);
	assert_int_equal(e[0].status_field >> 1, SC(0, NVME_SC_INVALID_OPCODE) | DNR);
	assert_int_equal(e[1].error_count, 1);
	assert_int_equal(e[2].error_count, 0);
	/* counting goes on from there */
	assert_int_equal(host_cmd(&h, 0, &bad, NULL), SC(0, NVME_SC_INVALID_OPCODE) | DNR);
	assert_int_equal(u64at(smart(&h)->num_err_log_entries), 3);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_ERROR, 0, e, 4096), 0);
	assert_int_equal(e[0].error_count, 3);
	assert_int_equal(e[2].error_count, 1);
	host_close(&h);
}

static void test_identity(void **state)
{
	struct fixture *f = *state;
	char dir2[] = "/tmp/ucmd-ctrl-device-XXXXXX";
	struct nvme_id_ctrl *id, id1, id2;
	struct host h;

	assert_non_null(mkdtemp(dir2));
	open_dir(&h, f->dir, false);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	id1 = *id;
	host_close(&h);
	open_dir(&h, dir2, false);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	id2 = *id;
	host_close(&h);
	assert_memory_equal(id1.sn, "UCMD", 4);
	assert_memory_not_equal(id1.sn, id2.sn, sizeof(id1.sn));
	assert_string_not_equal(id1.subnqn, id2.subnqn);
	assert_non_null(strstr(id1.subnqn, "nqn.2014-08.org.nvmexpress:uuid:"));
	/* the same directory keeps them, power cycled or not */
	open_dir(&h, f->dir, true);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	assert_memory_equal(id->sn, id1.sn, sizeof(id1.sn));
	assert_string_equal(id->subnqn, id1.subnqn);
	host_close(&h);
	assert_int_equal(host_rmdir(dir2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_power_cycles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tnvmcap_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_features, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identity, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
