/* SPDX-License-Identifier: MIT */
/*
 * The state file (docs/store.md, docs/security.md): a damaged or edited ctrl.json
 * is refused with the field named and never written back; images must have
 * the size the state gives them; the write-uncorrectable table is bounded
 * (Capacity Exceeded when full) and each mark costs one journal record, not
 * a rewrite of ctrl.json.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "nvme/ctrl/ctrl_int.h"

#define SC(sct, sc)	((sct) << 8 | (sc))
#define DNR		0x4000
#define ST_FULL		(SC(0, NVME_SC_CAP_EXCEEDED) | DNR)
#define ST_MEDIA_READ	(SC(2, 0x81) | DNR)
#define NSZE		4096

struct fixture {
	char dir[64];
	char json[128], journal[128], img[128];
	char err[512];
};

static void paths(struct fixture *f)
{
	snprintf(f->json, sizeof(f->json), "%s/ctrl.json", f->dir);
	snprintf(f->journal, sizeof(f->journal), "%s/ctrl.journal", f->dir);
	snprintf(f->img, sizeof(f->img), "%s/ns1.img", f->dir);
}

/* A directory with one file namespace, NSZE blocks of 512, marks at 100+3, 200+1 */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = NSZE, .lbaf = 0, .store = UCMD_NS_STORE_FILE,
				      .attach = true };
	struct host h;

	/* tmpfs where there is one: thousands of fdatasyncs, and durability is not tested here */
	snprintf(f->dir, sizeof(f->dir), "%s/ucmd-ctrl-state-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	assert_non_null(mkdtemp(f->dir));
	paths(f);
	host_default_params(&p);
	p.dir = f->dir;
	assert_int_equal(host_open_ns(&h, &p, &nsp), 1);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 100, 3, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 200, 1, NULL, 0, NULL, 0), 0);
	host_close(&h);
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

/* Open the directory: 0 or -errno, the reason in f->err */
/* What version 3 added to the state file */
static const char *const v3_members[] = { "subnqn", "boot_id", "current_features", "error_log",
	"sanitize", "self_test", "self_test_run", "fw_slots", NULL };
#define NR_V3	8

static int try_open(struct fixture *f)
{
	struct ucmd_ctrl_params p = { .dir = f->dir, .errbuf = f->err, .errbuf_len = sizeof(f->err) };
	struct ucmd_ctrl *c;
	int ret = ucmd_ctrl_create(&p, &c);

	if (!ret)
		ucmd_ctrl_destroy(c);
	return ret;
}

/* Refused with a message containing want, and ctrl.json left as it was */
static void assert_refused(struct fixture *f, int err, const char *want)
{
	size_t n1, n2;
	char *before = slurp(f->json, &n1), *after;
	int ret = try_open(f);

	if (!strstr(f->err, want))
		fail_msg("ret %d, reason \"%s\", expected it to contain \"%s\"", ret, f->err, want);
	assert_int_equal(ret, err);
	after = slurp(f->json, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(before, after, n1);
	free(before);
	free(after);
}

static void save(struct fixture *f, json_object *root, bool fix_crc)
{
	if (fix_crc) {
		json_object_object_del(root, "crc32c");
		char crc[9];

		snprintf(crc, sizeof(crc), "%08x", ctrl_state_crc(root));
		json_object_object_add(root, "crc32c", json_object_new_string(crc));
	}
	assert_int_equal(json_object_to_file_ext(f->json, root, JSON_C_TO_STRING_PRETTY |
						 JSON_C_TO_STRING_NOSLASHESCAPE), 0);
	json_object_put(root);
}

static json_object *ns0(json_object *root)
{
	json_object *nss;

	assert_true(json_object_object_get_ex(root, "namespaces", &nss));
	return json_object_array_get_idx(nss, 0);
}

/* Set namespaces[0].key (or a top-level key when top) and keep the checksum valid */
static void edit(struct fixture *f, bool top, const char *key, json_object *val, bool fix_crc)
{
	json_object *root = json_object_from_file(f->json);

	assert_non_null(root);
	json_object_object_add(top ? root : ns0(root), key, val);
	save(f, root, fix_crc);
}

static void test_clean_state_opens(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(try_open(f), 0);
	assert_string_equal(f->err, "");
	assert_int_equal(try_open(f), 0);
}

/* get_u64 then a cast made nsid 2^32+1 namespace 1 */
static void test_nsid_wrap(void **state)
{
	struct fixture *f = *state;

	edit(f, false, "nsid", json_object_new_int64(4294967297ll), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].nsid: 4294967297 is out of range 1..64");
}

static void test_lbaf_out_of_range(void **state)
{
	struct fixture *f = *state;

	edit(f, false, "lbaf", json_object_new_int(14), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].lbaf: 14 is out of range 0..13");
}

/* Protection: a type 1-3 (maybe first), and only in a format with metadata */
static void test_dps(void **state)
{
	struct fixture *f = *state;

	edit(f, false, "dps", json_object_new_int(16), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].dps: 16 is out of range 1..11");
	edit(f, false, "dps", json_object_new_int(4), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].dps: 4 is no PI type 1-3");
	edit(f, false, "dps", json_object_new_int(8), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].dps: 8 is no PI type 1-3");
	edit(f, false, "dps", json_object_new_int(9), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].dps: protection, but lbaf 0 has no room");
}

/* lbaf 0 -> 4 turned a 2 MiB namespace into 16 MiB over the same image */
static void test_lbaf_edited(void **state)
{
	struct fixture *f = *state;

	edit(f, false, "lbaf", json_object_new_int(4), false);
	assert_refused(f, -EINVAL, "ctrl.json: crc32c: the file says");
	/* even with a checksum that matches, the image says the geometry is wrong */
	edit(f, false, "lbaf", json_object_new_int(4), true);
	assert_refused(f, -EUCLEAN, "ns1.img is 2097152 bytes, namespace 1 needs 16777216");
}

static void test_wrong_type(void **state)
{
	struct fixture *f = *state;

	edit(f, false, "nsze", json_object_new_string("4096"), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].nsze: expected int, found string");
	edit(f, false, "nsze", json_object_new_double(4096.5), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].nsze: expected int, found double");
	edit(f, false, "nsze", json_object_new_int(-1), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].nsze: -1 is out of range");
	edit(f, false, "nsze", json_object_new_int(NSZE), true);
	edit(f, false, "attached", json_object_new_int(1), true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].attached: expected boolean, found int");
	edit(f, false, "attached", json_object_new_boolean(1), true);
	edit(f, true, "serial", json_object_new_string("012345678901234567890"), true);
	assert_refused(f, -EINVAL, "ctrl.json: serial: 21 characters, more than the 20");
	edit(f, true, "serial", json_object_new_string("SN\x01"), true);
	assert_refused(f, -EINVAL, "ctrl.json: serial: byte 0x01 is not printable ASCII");
	edit(f, true, "serial", json_object_new_string("SN"), true);
	edit(f, true, "version", json_object_new_int(5), true);
	assert_refused(f, -EINVAL, "ctrl.json: version: 5 is out of range 1..4");
	edit(f, true, "version", json_object_new_int(4), true);
	edit(f, true, "nszee", json_object_new_int(2), true);
	assert_refused(f, -EINVAL, "ctrl.json: nszee: unknown field");
}

/* json_tokener_parse of a literal, for the version 3 members */
static json_object *J(const char *text)
{
	json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return o;
}

/* What version 3 added: each member's type, range and consistency */
static void test_v3_members(void **state)
{
	struct fixture *f = *state;
	static const struct { const char *key, *val, *why; } bad[] = {
		{ "subnqn", "\"\"", "subnqn: is empty" },
		{ "subnqn", "7", "subnqn: expected string, found int" },
		{ "boot_id", "\"0123456789012345678901234567890123456789\"", "boot_id: not a boot id" },
		{ "current_features", "{\"arbitration\":0}", "current_features.power_mgmt: missing" },
		{ "error_log", "[[1,0,0,0,0,0]]", "error_log[0]: error count 1 is not one of the 64 newest of 0" },
		{ "error_log", "[[1,0,0,0,0]]", "error_log[0]: expected an array of 6 integers" },
		{ "error_log", "[[1,65536,0,0,0,0]]", "error_log[0][1]: 65536 is out of range 0..65535" },
		{ "sanitize", "{\"sstat\":4,\"scdw10\":2,\"ovrpat\":0,\"ause_fail\":false,\"exited\":false,\"progress\":[0,0,0,0]}",
		  "sanitize.sstat: status 4 is none of 0..3" },
		{ "sanitize", "{\"sstat\":1,\"scdw10\":1,\"ovrpat\":0,\"ause_fail\":false,\"exited\":false,\"progress\":[0,0,0,0]}",
		  "sanitize.scdw10: action 1 starts no sanitize" },
		{ "sanitize", "{\"sstat\":1,\"scdw10\":2,\"ovrpat\":0,\"ause_fail\":0,\"exited\":false,\"progress\":[0,0,0,0]}",
		  "sanitize.ause_fail: expected boolean" },
		{ "sanitize", "{\"sstat\":1,\"scdw10\":2,\"ovrpat\":0,\"ause_fail\":false,\"exited\":false,\"progress\":[0,1,0,0]}",
		  "sanitize.progress: set, but no sanitize is in progress" },
		{ "sanitize", "{\"sstat\":2,\"scdw10\":2,\"ovrpat\":0,\"ause_fail\":false,\"exited\":false,\"progress\":[16,1,0,0]}",
		  "sanitize.progress[0]: 16 is out of range 0..15" },
		{ "self_test", "[[48,0,0,0,0]]", "self_test[0][0]: 48 is out of range 0..47" },
		{ "self_test", "[[0,0,0,0,0]]", "self_test[0]: status 00h is no short or extended" },
		{ "self_test_run", "[3,0,0,0]", "self_test_run[0]: 3 is out of range 0..2" },
		{ "self_test_run", "[1,0,0,86400001]", "self_test_run[3]: 86400001 is out of range" },
		{ "self_test_run", "[0,1,0,0]", "self_test_run: no test running, but the other" },
		{ "fw_slots", "{\"active\":2,\"next\":0,\"next_conv\":false,\"revisions\":[\"0.1\",\"\",\"\"],\"flags\":[0,0,0]}",
		  "fw_slots.active: slot 2 holds \"\", not the firmware" },
		{ "fw_slots", "{\"active\":1,\"next\":3,\"next_conv\":false,\"revisions\":[\"0.1\",\"\",\"\"],\"flags\":[0,0,0]}",
		  "fw_slots.next: slot 3 is empty" },
		{ "fw_slots", "{\"active\":1,\"next\":0,\"next_conv\":false,\"revisions\":[\"0.1\",\"a\\u007fb\",\"\"],\"flags\":[0,0,0]}",
		  "fw_slots.revisions: slot 2: byte 0x7f is not printable" },
		{ "fw_slots", "{\"active\":1,\"next\":0,\"next_conv\":false,\"revisions\":[\"0.1\",\"\",\"\"],\"flags\":[0,2,0]}",
		  "fw_slots.flags[1]: 2 is out of range 0..1" },
		{ "fw_slots", "{\"active\":4,\"next\":0,\"next_conv\":false,\"revisions\":[\"0.1\",\"\",\"\"],\"flags\":[0,0,0]}",
		  "fw_slots.active: 4 is out of range 1..3" },
	};
	json_object *root = json_object_from_file(f->json), *good[NR_V3];

	for (size_t i = 0; i < NR_V3; i++) {
		json_object *v;

		assert_true(json_object_object_get_ex(root, v3_members[i], &v));
		good[i] = json_object_get(v);
	}
	json_object_put(root);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		edit(f, true, bad[i].key, J(bad[i].val), true);
		assert_refused(f, -EINVAL, bad[i].why);
		for (size_t k = 0; k < NR_V3; k++)
			if (!strcmp(v3_members[k], bad[i].key))
				edit(f, true, bad[i].key, json_object_get(good[k]), true);
		assert_int_equal(try_open(f), 0);
	}
	/* a member missing */
	root = json_object_from_file(f->json);
	json_object_object_del(root, "fw_slots");
	save(f, root, true);
	assert_refused(f, -EINVAL, "ctrl.json: fw_slots: missing");
	for (size_t k = 0; k < NR_V3; k++)
		json_object_put(good[k]);
}

/*
 * A subsystem of several controllers: its ANA states, change count and
 * controllers 2..N's saved features and SMART counters, a namespace
 * attached to some of them; each checked, and what is valid comes back.
 */
static void test_subsystem_members(void **state)
{
	struct fixture *f = *state;
	static const char feats[] = "{\"arbitration\":3,\"power_mgmt\":0,\"err_recovery\":0,"
		"\"vwc\":1,\"irq_coalesce\":0,\"write_atomic\":0,\"async_event\":0,"
		"\"tmpth_over\":343,\"tmpth_under\":0}";
	/* controller 2's SMART counters */
	static const char smart[] = "{\"units_read_512\":11,\"units_written_512\":22,"
		"\"host_reads\":3,\"host_writes\":4,\"power_cycles\":5,\"unsafe_shutdowns\":1,"
		"\"power_on_seconds\":600,\"media_errors\":2}";
	/* controller 2's error log: its 69th and 70th errors */
	static const char errors[] = "{\"error_count\":70,\"error_log\":"
		"[[69,0,5,8194,1,7],[70,1,9,4,1,8]]}";
	char good[1024], buf[1024];
	static const struct { const char *sub, *att, *why; } bad[] = {
		{ "{\"ana_states\":[1,9],\"ana_chgcnt\":0,\"saved_features\":[%s]}", NULL,
		  "subsystem.ana_states: entry 1 is no ANA state" },
		{ "{\"ana_states\":[1],\"ana_chgcnt\":0,\"saved_features\":[%s]}", NULL,
		  "subsystem.ana_states: 1 states for 2 controllers" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":-1,\"saved_features\":[%s]}", NULL,
		  "subsystem.ana_chgcnt" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[]}%s", NULL,
		  "subsystem.saved_features: 0 for controllers 2..2" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],\"x\":1}", NULL,
		  "subsystem.x: unknown field" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],\"smart\":[]}",
		  NULL, "subsystem.smart: 0 for controllers 2..2" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],\"smart\":{}}",
		  NULL, "subsystem.smart: expected array, found object" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],\"smart\":[7]}",
		  NULL, "subsystem.smart[0].: expected object" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],"
		  "\"smart\":[{\"error_count\":0}]}", NULL,
		  "subsystem.smart[0].error_count: unknown field" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],"
		  "\"smart\":[{\"host_reads\":1}]}", NULL,
		  "subsystem.smart[0].units_read_512: missing" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],"
		  "\"smart\":[{\"units_read_512\":0,\"units_written_512\":0,\"host_reads\":-1,"
		  "\"host_writes\":0,\"power_cycles\":0,\"unsafe_shutdowns\":0,"
		  "\"power_on_seconds\":0,\"media_errors\":0}]}", NULL,
		  "subsystem.smart[0].host_reads" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],\"errors\":[]}",
		  NULL, "subsystem.errors: 0 for controllers 2..2" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],\"errors\":[7]}",
		  NULL, "subsystem.errors[0].: expected object" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],"
		  "\"errors\":[{\"error_count\":0,\"error_log\":[],\"x\":1}]}", NULL,
		  "subsystem.errors[0].x: unknown field" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],"
		  "\"errors\":[{\"error_log\":[]}]}", NULL,
		  "subsystem.errors[0].error_count: missing" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],"
		  "\"errors\":[{\"error_count\":1,\"error_log\":[[2,0,0,0,0,0]]}]}", NULL,
		  "subsystem.errors[0].error_log[0]: error count 2 is not one of the 64 newest of 1" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],"
		  "\"errors\":[{\"error_count\":100,\"error_log\":[[30,0,0,0,0,0]]}]}", NULL,
		  "subsystem.errors[0].error_log[0]: error count 30 is not one of the 64 newest" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s],"
		  "\"errors\":[{\"error_count\":1,\"error_log\":[[1,0,0,65536,0,0]]}]}", NULL,
		  "subsystem.errors[0].error_log[0][3]" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s]}", "[3]",
		  "namespaces[0].attached_to: entry 0 is no controller 1..2" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s]}", "[1,2]",
		  "namespaces[0].attached_to: expected 1 to 1 controller numbers" },
		{ "{\"ana_states\":[1,1],\"ana_chgcnt\":0,\"saved_features\":[%s]}", "[2,2]",
		  "namespaces[0].attached_to: expected 1 to 1" },
	};
	struct ucmd_ctrl_params p = { .dir = f->dir, .errbuf = f->err, .errbuf_len = sizeof(f->err) };
	struct ucmd_ctrl *c;

	/* one controller has no subsystem state */
	snprintf(good, sizeof(good), "{\"ana_states\":[1,3],\"ana_chgcnt\":5,"
		 "\"saved_features\":[%s],\"smart\":[%s],\"errors\":[%s]}", feats, smart, errors);
	edit(f, true, "subsystem", J(good), true);
	assert_refused(f, -EINVAL, "subsystem: present for a subsystem of one controller");
	edit(f, true, "controllers", json_object_new_int(2), true);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), bad[i].sub, feats);
		edit(f, true, "subsystem", J(buf), true);
		if (bad[i].att)
			edit(f, false, "attached_to", J(bad[i].att), true);
		assert_refused(f, -EINVAL, bad[i].why);
		json_object *root = json_object_from_file(f->json);
		json_object_object_del(ns0(root), "attached_to");
		save(f, root, true);
	}
	/* valid: controller 2 inaccessible, its own saved arbitration, namespace 1 on it only */
	edit(f, true, "subsystem", J(good), true);
	edit(f, false, "attached_to", J("[2]"), true);
	assert_int_equal(ucmd_ctrl_create(&p, &c), 0);
	assert_int_equal(ucmd_ctrl_ana_state(c, 1, 0), NVME_ANA_STATE_OPTIMIZED);
	assert_int_equal(ucmd_ctrl_ana_state(ucmd_ctrl_controller(c, 1), 1, 0),
			 NVME_ANA_STATE_INACCESSIBLE);
	assert_int_equal(c->ana_chgcnt, 5);
	assert_int_equal(c->ns[1]->attached, 2);
	assert_int_equal(c->sib[0]->saved.arbitration, 3);
	assert_int_equal(c->saved.arbitration, 0);
	/* controller 2's counters, its own (this start is a cold one: one cycle more) */
	assert_int_equal(c->sib[0]->smart.units_read_512, 11);
	assert_int_equal(c->sib[0]->smart.units_written_512, 22);
	assert_int_equal(c->sib[0]->smart.host_reads, 3);
	assert_int_equal(c->sib[0]->smart.host_writes, 4);
	assert_int_equal(c->sib[0]->smart.power_cycles, c->power_cycled ? 6 : 5);
	assert_int_equal(c->sib[0]->smart.power_on_seconds, 600);
	assert_int_equal(c->sib[0]->smart.media_errors, 2);
	/* its error log: what Get Log Page reads (the newest 64, count 70) */
	assert_int_equal(c->sib[0]->error_count, 70);
	assert_int_equal(le64toh(c->sib[0]->errlog[69 % 64].error_count), 70);
	assert_int_equal(le16toh(c->sib[0]->errlog[69 % 64].cmdid), 9);
	assert_int_equal(le64toh(c->sib[0]->errlog[68 % 64].error_count), 69);
	assert_int_equal(le16toh(c->sib[0]->errlog[68 % 64].status_field), 8194);
	assert_int_equal(c->error_count, 0);
	/* one more error on controller 2 while it runs: kept too */
	ctrl_error_record(c->sib[0], 1, 11, 0x2, 1, 12);
	assert_int_equal(ucmd_ctrl_destroy(c), 0);
	/* and saved as loaded */
	json_object *root = json_object_from_file(f->json), *v, *sub, *er;
	assert_true(json_object_object_get_ex(ns0(root), "attached_to", &v));
	assert_int_equal(json_object_array_length(v), 1);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(v, 0)), 2);
	assert_true(json_object_object_get_ex(root, "subsystem", &sub));
	assert_true(json_object_object_get_ex(sub, "errors", &er));
	assert_int_equal(json_object_array_length(er), 1);
	er = json_object_array_get_idx(er, 0);
	assert_true(json_object_object_get_ex(er, "error_count", &v));
	assert_int_equal(json_object_get_uint64(v), 71);
	assert_true(json_object_object_get_ex(er, "error_log", &v));
	assert_int_equal(json_object_array_length(v), 3);
	json_object_put(root);
	/* and back after the restart, controller 1's log untouched */
	assert_int_equal(ucmd_ctrl_create(&p, &c), 0);
	assert_int_equal(c->sib[0]->error_count, 71);
	assert_int_equal(le16toh(c->sib[0]->errlog[70 % 64].cmdid), 11);
	assert_int_equal(le64toh(c->sib[0]->errlog[70 % 64].lba), 12);
	assert_int_equal(le16toh(c->sib[0]->errlog[69 % 64].cmdid), 9);
	assert_int_equal(c->error_count, 0);
	assert_int_equal(ucmd_ctrl_destroy(c), 0);
}

static void test_features_smart_range(void **state)
{
	struct fixture *f = *state;
	json_object *root = json_object_from_file(f->json), *o;

	assert_true(json_object_object_get_ex(root, "saved_features", &o));
	json_object_object_add(o, "tmpth_over", json_object_new_int(65536));
	save(f, root, true);
	assert_refused(f, -EINVAL,
		       "ctrl.json: saved_features.tmpth_over: 65536 is out of range 0..65535");
	root = json_object_from_file(f->json);
	assert_true(json_object_object_get_ex(root, "saved_features", &o));
	json_object_object_add(o, "tmpth_over", json_object_new_int(343));
	assert_true(json_object_object_get_ex(root, "smart", &o));
	json_object_object_del(o, "host_writes");
	save(f, root, true);
	assert_refused(f, -EINVAL, "ctrl.json: smart.host_writes: missing");
}

static json_object *range(uint64_t slba, uint64_t nlb)
{
	json_object *r = json_object_new_array();

	json_object_array_add(r, json_object_new_uint64(slba));
	json_object_array_add(r, json_object_new_uint64(nlb));
	return r;
}

static void test_range_outside(void **state)
{
	struct fixture *f = *state;
	json_object *u = json_object_new_array();

	json_object_array_add(u, range(NSZE - 1, 2));
	edit(f, false, "uncorrectable", u, true);
	assert_refused(f, -EINVAL,
		       "ctrl.json: namespaces[0].uncorrectable[0][1]: 2 is out of range 1..1");
	u = json_object_new_array();
	json_object_array_add(u, range(UINT64_MAX, 2));
	edit(f, false, "uncorrectable", u, true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].uncorrectable[0][0]: "
		       "18446744073709551615 is out of range 0..4095");
	u = json_object_new_array();
	json_object_array_add(u, range(10, 5));
	json_object_array_add(u, range(12, 1));
	edit(f, false, "uncorrectable", u, true);
	assert_refused(f, -EINVAL, "ctrl.json: namespaces[0].uncorrectable[1]: starts at 12");
}

static void test_bad_checksum(void **state)
{
	struct fixture *f = *state;

	edit(f, true, "serial", json_object_new_string("EDITED"), false);
	assert_refused(f, -EINVAL, "ctrl.json: crc32c: the file says");
}

static off_t size_of(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return sb.st_size;
}

/* A truncated image read as zeros and was silently extended back */
static void test_truncated_image(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(truncate(f->img, 4096), 0);
	assert_refused(f, -EUCLEAN, "ns1.img is 4096 bytes, namespace 1 needs 2097152");
	assert_int_equal(size_of(f->img), 4096);	/* not resized */
	assert_int_equal(truncate(f->img, 2 * NSZE * 512), 0);
	assert_refused(f, -EUCLEAN, "ns1.img is 4194304 bytes");
}

static void test_missing_image(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(unlink(f->img), 0);
	assert_refused(f, -ENOENT, "ns1.img: missing; namespace 1 needs an image of 2097152 bytes");
	assert_int_not_equal(access(f->img, F_OK), 0);	/* not recreated */
}

static void test_not_json(void **state)
{
	struct fixture *f = *state;
	FILE *fp = fopen(f->json, "w");

	assert_non_null(fp);
	fputs("{\"version\":2,", fp);
	fclose(fp);
	assert_refused(f, -EINVAL, "ctrl.json: not valid JSON");
}

/* An identity the loader would refuse is refused at creation, not saved */
static void test_identity_param(void **state)
{
	struct fixture *f = *state;
	struct ucmd_ctrl_params p = { .dir = f->dir, .errbuf = f->err, .errbuf_len = sizeof(f->err),
				      .serial = "0123456789012345678901234" };
	struct ucmd_ctrl *c;

	assert_int_equal(ucmd_ctrl_create(&p, &c), -EINVAL);
	assert_non_null(strstr(f->err, "serial: must be 1..20 printable ASCII characters"));
	p.serial = NULL;
	p.firmware = "";
	assert_int_equal(ucmd_ctrl_create(&p, &c), -EINVAL);
	assert_non_null(strstr(f->err, "firmware: must be 1..8"));
	p.firmware = NULL;
	assert_int_equal(ucmd_ctrl_create(&p, &c), 0);
	ucmd_ctrl_destroy(c);
}

/* A ctrl.json of version 1 (no checksum, no journal) still opens, as version 4 after */
static void test_version1(void **state)
{
	struct fixture *f = *state;
	json_object *root = json_object_from_file(f->json);
	size_t n;
	char *text;

	json_object_object_del(root, "crc32c");
	json_object_object_del(root, "generation");
	for (const char *const *k = v3_members; *k; k++)
		json_object_object_del(root, *k);
	json_object_object_add(root, "version", json_object_new_int(1));
	save(f, root, false);
	assert_int_equal(unlink(f->journal), 0);
	assert_int_equal(try_open(f), 0);
	text = slurp(f->json, &n);
	assert_non_null(strstr(text, "\"crc32c\""));
	free(text);
	assert_int_equal(access(f->journal, F_OK), 0);
}

static uint64_t ranges_of(struct host *h, uint32_t nsid)
{
	return h->ctrl->ns[nsid]->uncor.n;
}

static void reopen(struct fixture *f, struct host *h)
{
	struct ucmd_ctrl_params p;

	host_default_params(&p);
	p.dir = f->dir;
	assert_int_equal(host_open(h, &p), 0);
	assert_int_equal(host_create_io_queue(h, 1, 16, true, 1), 0);
}

static void fill_table(struct host *h, uint64_t nsze)
{
	/* every other block: UCMD_MAX_UNCOR_RANGES ranges that cannot merge */
	assert_true(2ull * UCMD_MAX_UNCOR_RANGES <= nsze);
	for (unsigned i = 0; i < UCMD_MAX_UNCOR_RANGES; i++)
		assert_int_equal(host_io(h, nvme_cmd_write_uncor, 2, 2ull * i, 1, NULL, 0, NULL, 0),
				 0);
	assert_int_equal(ranges_of(h, 2), UCMD_MAX_UNCOR_RANGES);
}

/* The table holds UCMD_MAX_UNCOR_RANGES ranges; past that, Capacity Exceeded */
static void test_table_full(void **state)
{
	struct fixture *f = *state;
	struct ucmd_ns_params nsp = { .nsze = 4 * UCMD_MAX_UNCOR_RANGES, .lbaf = 0,
				      .store = UCMD_NS_STORE_FILE, .attach = true };
	uint64_t last = 2ull * UCMD_MAX_UNCOR_RANGES;
	uint8_t *buf;
	struct host h;

	reopen(f, &h);
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), 2);
	buf = host_alloc(&h, 3 * 512);
	fill_table(&h, nsp.nsze);
	/* one more separate range: the NVMe status a full device gives */
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 2, last + 10, 1, NULL, 0, NULL, 0),
			 ST_FULL);
	/* marks that merge with one already there still work */
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 2, 1, 1, NULL, 0, NULL, 0), 0);
	assert_int_equal(ranges_of(&h, 2), UCMD_MAX_UNCOR_RANGES - 1);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 2, last + 10, 1, NULL, 0, NULL, 0), 0);
	/* [0, 3) is one range now: a write into its middle would split a full table */
	assert_int_equal(host_io(&h, nvme_cmd_write, 2, 1, 1, buf, 512, NULL, 0), ST_FULL);
	assert_int_equal(host_io(&h, nvme_cmd_read, 2, 1, 1, buf, 512, NULL, 0), ST_MEDIA_READ);
	assert_int_equal(host_io(&h, nvme_cmd_write_zeroes, 2, 1, 1, NULL, 0, NULL, 0), ST_FULL);
	/* a write over a whole range frees a slot */
	assert_int_equal(host_io(&h, nvme_cmd_write, 2, 0, 3, buf, 3 * 512, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_write, 2, 0, 2, buf, 2 * 512, NULL, 0), 0);
	assert_int_equal(ranges_of(&h, 2), UCMD_MAX_UNCOR_RANGES - 1);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 2, last + 20, 1, NULL, 0, NULL, 0), 0);
	host_close(&h);

	/* all of it comes back from ctrl.json */
	reopen(f, &h);
	assert_int_equal(ranges_of(&h, 2), UCMD_MAX_UNCOR_RANGES);
	host_close(&h);
}

/* Each mark appends one journal record; ctrl.json is not rewritten per command */
static void test_mark_costs_one_record(void **state)
{
	struct fixture *f = *state;
	struct stat before, after;
	off_t jsize;
	uint8_t *buf;
	struct host h;

	reopen(f, &h);
	buf = host_alloc(&h, 512);
	assert_int_equal(stat(f->json, &before), 0);
	jsize = size_of(f->journal);
	for (unsigned i = 0; i < 200; i++) {
		assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 1000 + 2ull * i, 1, NULL, 0,
					 NULL, 0), 0);
		assert_int_equal(size_of(f->journal), jsize + 32 * (off_t)(i + 1));
	}
	/* clearing a mark: one record as well */
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 1000, 1, buf, 512, NULL, 0), 0);
	assert_int_equal(size_of(f->journal), jsize + 32 * 201);
	/* a write that clears nothing writes no record */
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 3000, 1, buf, 512, NULL, 0), 0);
	assert_int_equal(size_of(f->journal), jsize + 32 * 201);
	assert_int_equal(stat(f->json, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);	/* not replaced */
	assert_int_equal(before.st_size, after.st_size);
	host_close(&h);

	/* closing compacts the journal into ctrl.json */
	assert_int_equal(size_of(f->journal), 0);
	reopen(f, &h);
	buf = host_alloc(&h, 512);
	assert_int_equal(ranges_of(&h, 1), 2 + 199);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 1002, 1, buf, 512, NULL, 0), ST_MEDIA_READ);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 1000, 1, buf, 512, NULL, 0), 0);
	host_close(&h);
}

/* Past UCMD_JOURNAL_MAX records the journal is compacted into ctrl.json */
static void test_journal_compacts(void **state)
{
	struct fixture *f = *state;
	struct stat before, after;
	struct host h;

	reopen(f, &h);
	assert_int_equal(stat(f->json, &before), 0);
	for (unsigned i = 1; i < UCMD_JOURNAL_MAX; i++)
		assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 5, 1, NULL, 0, NULL, 0), 0);
	assert_int_equal(size_of(f->journal), 32 * (off_t)(UCMD_JOURNAL_MAX - 1));
	assert_int_equal(stat(f->json, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 5, 1, NULL, 0, NULL, 0), 0);
	assert_int_equal(size_of(f->journal), 0);
	assert_int_equal(stat(f->json, &after), 0);
	assert_int_not_equal(before.st_ino, after.st_ino);
	host_close(&h);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cp --sparse=always %s %s", from, to);
	assert_int_equal(system(cmd), 0);
}

/* The files as a crash leaves them: ctrl.json of the open, records after it */
static void crash_copy(struct fixture *f, struct fixture *g)
{
	snprintf(g->dir, sizeof(g->dir), "%s/ucmd-ctrl-crash-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	assert_non_null(mkdtemp(g->dir));
	paths(g);
	copy_file(f->json, g->json);
	copy_file(f->journal, g->journal);
	copy_file(f->img, g->img);
}

static void append_bytes(const char *path, const void *b, size_t n)
{
	FILE *fp = fopen(path, "ab");

	assert_non_null(fp);
	assert_int_equal(fwrite(b, 1, n, fp), n);
	fclose(fp);
}

static void test_journal_after_crash(void **state)
{
	struct fixture *f = *state, *g = calloc(1, sizeof(*g));
	uint8_t *buf, junk[32];
	struct host h;
	size_t n;
	char *j;

	reopen(f, &h);
	buf = host_alloc(&h, 512);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 500, 4, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_write, 1, 101, 1, buf, 512, NULL, 0), 0);
	crash_copy(f, g);
	host_close(&h);

	/* a torn last record (a write the crash cut short) is dropped */
	memset(junk, 0xa5, sizeof(junk));
	append_bytes(g->journal, junk, 20);
	reopen(g, &h);
	buf = host_alloc(&h, 512);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 503, 1, buf, 512, NULL, 0), ST_MEDIA_READ);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 100, 1, buf, 512, NULL, 0), ST_MEDIA_READ);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 101, 1, buf, 512, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 102, 1, buf, 512, NULL, 0), ST_MEDIA_READ);
	assert_int_equal(ranges_of(&h, 1), 4);
	host_close(&h);

	/* a damaged record followed by a good one is not a crash: refused */
	teardown((void **)&g);
	g = calloc(1, sizeof(*g));
	reopen(f, &h);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 600, 1, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, 1, 700, 1, NULL, 0, NULL, 0), 0);
	crash_copy(f, g);
	host_close(&h);
	j = slurp(g->journal, &n);
	assert_int_equal(n, 64);
	j[10] ^= 1;
	FILE *fp = fopen(g->journal, "wb");
	fwrite(j, 1, n, fp);
	fclose(fp);
	free(j);
	assert_refused(g, -EINVAL, "ctrl.journal: record 0: checksum mismatch");
	/* a missing journal loses marks: refused, an empty one accepts the loss */
	assert_int_equal(unlink(g->journal), 0);
	assert_refused(g, -ENOENT, "ctrl.journal: missing");
	append_bytes(g->journal, junk, 0);
	assert_int_equal(try_open(g), 0);
	teardown((void **)&g);
}

/* The table against a bitmap, through random marks and clears */
static void test_ranges_model(void **state)
{
	enum { SPACE = 300 };
	struct ctrl_ranges rs = { 0 };
	bool model[SPACE] = { false };

	(void)state;
	srand(12);
	for (unsigned op = 0; op < 20000; op++) {
		uint64_t slba = (uint64_t)rand() % SPACE, nlb = 1 + (uint64_t)rand() % 8;

		if (slba + nlb > SPACE)
			nlb = SPACE - slba;
		if (rand() % 2) {
			assert_int_equal(ctrl_ranges_add(&rs, slba, nlb), 0);
			for (uint64_t i = slba; i < slba + nlb; i++)
				model[i] = true;
		} else {
			assert_true(ctrl_ranges_remove(&rs, slba, nlb) >= 0);
			for (uint64_t i = slba; i < slba + nlb; i++)
				model[i] = false;
		}
		/* sorted, disjoint, merged with neighbours, and the same blocks */
		for (size_t i = 0; i < rs.n; i++) {
			assert_true(rs.r[i].nlb > 0);
			if (i)
				assert_true(rs.r[i].slba > rs.r[i - 1].slba + rs.r[i - 1].nlb);
		}
		for (uint64_t lba = 0; lba < SPACE; lba++)
			assert_int_equal(ctrl_ranges_overlap(&rs, lba, 1), model[lba]);
	}
	ctrl_ranges_clear(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_state_opens, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nsid_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lbaf_out_of_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lbaf_edited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_features_smart_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_outside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_checksum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v3_members, setup, teardown),
		cmocka_unit_test_setup_teardown(test_subsystem_members, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identity_param, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mark_costs_one_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_compacts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_after_crash, setup, teardown),
		cmocka_unit_test(test_ranges_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
