/* SPDX-License-Identifier: MIT */
/*
 * Every command that reads or changes logical blocks reports every range it
 * touches, so range rules cannot be sidestepped:
 *  - a table walk over every I/O opcode the emulated controller executes
 *    (its dispatch table, src/nvme/ctrl/exec.c, via ctrl_opcode_effects): each is range-described,
 *    exactly, through the device's describe() as the hook chain calls it;
 *    an opcode added to the controller without a description fails here;
 *  - every admin opcode that changes logical blocks (LBCC) is described
 *    as touching blocks it does not list (the whole namespace);
 *  - a range list that cannot be read is judged conservatively;
 *  - end to end through a ring: a deny rule with a range stops Copy (as
 *    destination or source) and DSM on the protected blocks;
 *  - the list judged is the list executed: a module that rewrites the
 *    user's list after the policy judged it (another thread, in real life)
 *    changes nothing the controller does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_fixture.h"
#include "core/core.h"
#include "nvme/host/host.h"
#include "security/security.h"

/* describe() reads the ring's flags through the request that holds cmd */
static struct ucmd_ctx ring_ctx = { .task = &init_task,
				    .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
static struct ucmd_kiocb req;

/* d as the hook chain would get it for u on fd; the caller ends with done() */
static void describe(struct fx *f, int fd, uint32_t cmd_op, const struct nvme_uring_cmd *u,
		     struct ucmd_cmd_desc *d)
{
	struct ucmd_file *file = fget(f->e, fd);

	assert_non_null(file);
	memset(&req, 0, sizeof(req));
	req.ctx = &ring_ctx;
	req.opcode = IORING_OP_URING_CMD;
	memcpy(req.sqe[0].cmd, u, sizeof(*u));
	req.cmd.file = file;
	req.cmd.sqe = req.sqe;
	req.cmd.cmd_op = cmd_op;
	ucmd_desc_init(d, "", cmd_op, 0);
	assert_int_equal(file->ops->describe(&req.cmd, d), 0);
	fput(file);
}

static void done(void)
{
	io_uring_cmd_snap_release(&req);
}

/* I/O opcodes the controller executes that touch no logical block. */
static bool touches_no_lba(uint8_t opcode)
{
	return opcode == nvme_cmd_flush || opcode == nvme_zns_cmd_mgmt_recv ||
	       opcode == nvme_cmd_io_mgmt_recv || opcode == nvme_cmd_io_mgmt_send;
}

/*
 * Zone Append writes at the write pointer, Zone Management Send may reset
 * every zone: the command does not say which blocks, so the description
 * must say it does not know (judged as any range), never a range.
 */
static bool range_unnamed(uint8_t opcode)
{
	return opcode == nvme_zns_cmd_append || opcode == nvme_zns_cmd_mgmt_send;
}

struct expect {
	uint64_t slba, nlb;
	unsigned nr;
	struct ucmd_desc_range r[4];
};

/*
 * Fill u for opcode with ranges the description must give back. The
 * range-list commands carry theirs in the data buffer; every other command
 * its SLBA in CDW10/11 and its 0-based NLB in CDW12.
 */
static void build(uint8_t opcode, struct nvme_uring_cmd *u, void *buf, struct expect *x)
{
	memset(u, 0, sizeof(*u));
	memset(x, 0, sizeof(*x));
	u->opcode = opcode;
	u->nsid = 1;
	if (opcode == nvme_cmd_dsm) {
		struct nvme_dsm_range *r = buf;

		memset(r, 0, 3 * sizeof(*r));
		r[0].slba = htole64(100);
		r[0].nlb = htole32(8);
		r[1].slba = htole64(7);
		r[1].nlb = htole32(1);
		r[2].slba = htole64(3000);
		r[2].nlb = htole32(16);
		u->addr = (uint64_t)(uintptr_t)r;
		u->data_len = 3 * sizeof(*r);
		u->cdw10 = 2;			/* NR, 0-based */
		u->cdw11 = NVME_DSMGMT_AD;
		*x = (struct expect){ 100, 8, 2, { { 7, 1, 0, 0 }, { 3000, 16, 0, 0 } } };
	} else if (opcode == nvme_cmd_copy) {
		struct nvme_copy_range *r = buf;

		memset(r, 0, 2 * sizeof(*r));
		r[0].slba = htole64(0);
		r[0].nlb = htole16(3);		/* 4 blocks */
		r[1].slba = htole64(900);
		r[1].nlb = htole16(1);		/* 2 blocks */
		u->addr = (uint64_t)(uintptr_t)r;
		u->data_len = 2 * sizeof(*r);
		u->cdw10 = 500;			/* SDLBA */
		u->cdw12 = 1;			/* NR 0-based, format 0 */
		*x = (struct expect){ 500, 6, 2, { { 0, 4, 0, 0 }, { 900, 2, 0, 0 } } };
	} else {
		u->cdw10 = 10;
		u->cdw12 = 7;
		*x = (struct expect){ 10, 8, 0, { { 0 } } };
	}
}

static void test_every_io_opcode(void **state)
{
	struct fx f;
	unsigned checked = 0;
	void *buf = fx_alloc(4096);

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	for (unsigned op = 0; op < 256; op++) {
		struct nvme_uring_cmd u;
		struct ucmd_cmd_desc d;
		struct expect x;

		if (!ctrl_opcode_effects(false, (uint8_t)op))
			continue;
		build((uint8_t)op, &u, buf, &x);
		describe(&f, f.ng, NVME_URING_CMD_IO, &u, &d);
		if (range_unnamed((uint8_t)op)) {
			assert_true(d.range_unknown);
			assert_false(d.has_range);
			assert_true(d.destructive);
			done();
			continue;
		}
		if (touches_no_lba((uint8_t)op)) {
			assert_false(d.has_range);
			assert_int_equal(d.nr_ranges, 0);
			assert_false(d.range_unknown);
			done();
			continue;
		}
		if (d.range_unknown || !d.has_range)
			fail_msg("I/O opcode 0x%02x: the controller executes it but describe() "
				 "gives it no range (src/nvme/host/describe.c)", op);
		assert_int_equal(d.slba, x.slba);
		assert_int_equal(d.nlb, x.nlb);
		assert_int_equal(d.offset, x.slba * f.lbs);
		assert_int_equal(d.length, x.nlb * f.lbs);
		assert_int_equal(d.nr_ranges, x.nr);
		for (unsigned i = 0; i < x.nr; i++) {
			assert_int_equal(d.ranges[i].slba, x.r[i].slba);
			assert_int_equal(d.ranges[i].nlb, x.r[i].nlb);
			assert_int_equal(d.ranges[i].offset, x.r[i].slba * f.lbs);
			assert_int_equal(d.ranges[i].length, x.r[i].nlb * f.lbs);
		}
		/* through an iovec array the same list gives the same ranges */
		if (nvme_cmd_has_range_list((uint8_t)op)) {
			struct iovec iov = { (void *)(uintptr_t)u.addr, u.data_len };
			struct ucmd_cmd_desc dv;

			done();
			u.addr = (uint64_t)(uintptr_t)&iov;
			u.data_len = 1;
			describe(&f, f.ng, NVME_URING_CMD_IO_VEC, &u, &dv);
			assert_false(dv.range_unknown);
			assert_int_equal(dv.slba, x.slba);
			assert_int_equal(dv.nr_ranges, x.nr);
			assert_int_equal(dv.ranges[x.nr - 1].slba, x.r[x.nr - 1].slba);
		}
		done();
		checked++;
	}
	/* read, write, write uncorrectable, compare, write zeroes, DSM, verify, copy */
	assert_true(checked >= 8);
	free(buf);
	fx_teardown(&f);
}

/* Admin commands that change logical blocks touch every block of a namespace. */
static void test_every_admin_lbcc_opcode(void **state)
{
	struct fx f;
	unsigned checked = 0;

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	for (unsigned op = 0; op < 256; op++) {
		struct nvme_uring_cmd u = { .opcode = (uint8_t)op, .nsid = 1 };
		struct ucmd_cmd_desc d;

		if (!(ctrl_opcode_effects(true, (uint8_t)op) & NVME_CMD_EFFECTS_LBCC))
			continue;
		describe(&f, f.dev, NVME_URING_CMD_ADMIN, &u, &d);
		if (!d.range_unknown && !d.has_range)
			fail_msg("admin opcode 0x%02x changes logical blocks but describe() gives "
				 "it no range", op);
		done();
		checked++;
	}
	assert_true(checked >= 1);	/* Format NVM */
	fx_teardown(&f);
}

/* A list that cannot be read or decoded: the range is unknown, not empty. */
static void test_unreadable_list(void **state)
{
	struct fx f;
	struct nvme_uring_cmd u;
	struct ucmd_cmd_desc d;
	struct expect x;
	void *buf = fx_alloc(4096);

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	/* no data at all */
	build(nvme_cmd_dsm, &u, buf, &x);
	u.data_len = 0;
	describe(&f, f.ng, NVME_URING_CMD_IO, &u, &d);
	assert_true(d.range_unknown);
	done();
	/* a bad address */
	build(nvme_cmd_copy, &u, buf, &x);
	u.addr = 0;
	describe(&f, f.ng, NVME_URING_CMD_IO, &u, &d);
	assert_true(d.range_unknown);
	assert_int_equal(d.nr_ranges, 0);
	done();
	/* a bad iovec array */
	build(nvme_cmd_dsm, &u, buf, &x);
	u.addr = 0;
	u.data_len = 1;
	describe(&f, f.ng, NVME_URING_CMD_IO_VEC, &u, &d);
	assert_true(d.range_unknown);
	done();
	/* a Copy descriptor format the controller refuses (2h): unknown */
	build(nvme_cmd_copy, &u, buf, &x);
	u.cdw12 |= 2u << 8;
	describe(&f, f.ng, NVME_URING_CMD_IO, &u, &d);
	assert_true(d.range_unknown);
	done();
	/* format 1h: 40-byte entries, decoded like format 0h's */
	{
		struct nvme_copy_range_f1 *r1 = buf;

		memset(r1, 0, 2 * sizeof(*r1));
		r1[0].slba = htole64(40);
		r1[0].nlb = htole16(3);
		r1[1].slba = htole64(4000);
		r1[1].nlb = htole16(0);
		u = (struct nvme_uring_cmd){ .opcode = nvme_cmd_copy, .nsid = 1,
			.addr = (uint64_t)(uintptr_t)r1, .data_len = 2 * sizeof(*r1),
			.cdw10 = 600, .cdw12 = 1 | 1u << 8 };
		describe(&f, f.ng, NVME_URING_CMD_IO, &u, &d);
		assert_false(d.range_unknown);
		assert_int_equal(d.slba, 600);
		assert_int_equal(d.nlb, 5);
		assert_int_equal(d.nr_ranges, 2);
		assert_int_equal(d.ranges[0].slba, 40);
		assert_int_equal(d.ranges[0].nlb, 4);
		assert_int_equal(d.ranges[1].slba, 4000);
		assert_int_equal(d.ranges[1].nlb, 1);
		done();
	}
	/* an I/O opcode nobody knows may touch anything */
	build(0x7c, &u, buf, &x);
	describe(&f, f.ng, NVME_URING_CMD_IO, &u, &d);
	assert_true(d.range_unknown);
	done();
	free(buf);
	fx_teardown(&f);
}

/* ---- end to end through a ring, with a policy ------------------------------ */

static const char protect_label[] =
	"[policy]\ndefault = allow\n"
	"[rule protect-label]\n"
	"verb = write, write-zeroes, trim, write-uncor, copy\n"
	"bytes = 0+4K\n"		/* LBAs 0-7 at 512 bytes */
	"action = deny\n";

static void policy_setup(struct fx *f, const char *text)
{
	char path[] = "/tmp/ucmd-ranges-XXXXXX", err[256];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	if (ucmd_security_setup(f->e, path, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	unlink(path);
}

static int rw(struct fx *f, uint8_t opcode, uint64_t slba, uint32_t nlb, void *buf)
{
	struct nvme_uring_cmd c;

	fx_rw_cmd(&c, opcode, f->nsid, slba, nlb, buf, nlb * f->lbs);
	return fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL);
}

static int dsm(struct fx *f, struct nvme_dsm_range *r, unsigned nr)
{
	struct nvme_uring_cmd c = { .opcode = nvme_cmd_dsm, .nsid = f->nsid,
				    .addr = (uint64_t)(uintptr_t)r,
				    .data_len = nr * (uint32_t)sizeof(*r),
				    .cdw10 = nr - 1, .cdw11 = NVME_DSMGMT_AD };

	return fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL);
}

static int copy(struct fx *f, uint64_t sdlba, struct nvme_copy_range *r, unsigned nr)
{
	struct nvme_uring_cmd c = { .opcode = nvme_cmd_copy, .nsid = f->nsid,
				    .addr = (uint64_t)(uintptr_t)r,
				    .data_len = nr * (uint32_t)sizeof(*r),
				    .cdw10 = (uint32_t)sdlba, .cdw11 = (uint32_t)(sdlba >> 32),
				    .cdw12 = nr - 1 };

	return fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL);
}

static void assert_blocks(struct fx *f, uint64_t slba, uint32_t nlb, const void *want)
{
	void *got = fx_alloc(nlb * f->lbs);

	assert_int_equal(rw(f, nvme_cmd_read, slba, nlb, got), 0);
	assert_memory_equal(got, want, nlb * f->lbs);
	free(got);
}

static void test_policy_stops_copy_and_dsm(void **state)
{
	struct fx f;
	void *label = fx_alloc(8 * 512), *other = fx_alloc(8 * 512);
	struct nvme_dsm_range *dr = fx_alloc(4096);
	struct nvme_copy_range *cr = fx_alloc(4096);

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	assert_int_equal(f.lbs, 512);
	fx_fill(label, 8 * 512, 1);
	fx_fill(other, 8 * 512, 2);
	assert_int_equal(rw(&f, nvme_cmd_write, 0, 8, label), 0);
	assert_int_equal(rw(&f, nvme_cmd_write, 100, 8, other), 0);
	policy_setup(&f, protect_label);

	assert_int_equal(rw(&f, nvme_cmd_write, 0, 1, other), -EACCES);
	/* Copy onto the label, from the label, or straddling its edge */
	memset(cr, 0, 4096);
	cr[0].slba = htole64(100);
	cr[0].nlb = htole16(7);
	assert_int_equal(copy(&f, 0, cr, 1), -EACCES);
	assert_int_equal(copy(&f, 4, cr, 1), -EACCES);
	cr[1].slba = htole64(0);
	cr[1].nlb = htole16(0);
	assert_int_equal(copy(&f, 200, cr, 2), -EACCES);
	assert_int_equal(copy(&f, 200, cr, 1), 0);	/* nothing of the label */
	/* DSM deallocate on the label, as its only range or its last */
	memset(dr, 0, 4096);
	dr[0].slba = htole64(0);
	dr[0].nlb = htole32(8);
	assert_int_equal(dsm(&f, dr, 1), -EACCES);
	dr[0].slba = htole64(1000);
	dr[1].slba = htole64(7);
	dr[1].nlb = htole32(1);
	assert_int_equal(dsm(&f, dr, 2), -EACCES);
	assert_int_equal(dsm(&f, dr, 1), 0);
	assert_blocks(&f, 0, 8, label);
	assert_blocks(&f, 200, 8, other);
	ucmd_security_teardown(f.e);
	free(label);
	free(other);
	free(dr);
	free(cr);
	fx_teardown(&f);
}

/*
 * A module after the policy in the chain rewrites the user's list: what a
 * thread of the application can do at any moment between the policy's
 * decision and the controller's read of the list.
 */
static struct nvme_dsm_range *race_list;

static int racer(void *priv, const struct io_uring_cmd *cmd)
{
	(void)priv;
	(void)cmd;
	race_list[0].slba = htole64(0);
	return 0;
}

static const struct ucmd_security_ops racer_ops = { .name = "racer", .uring_cmd = racer };

static void test_list_judged_is_list_executed(void **state)
{
	struct fx f;
	void *label = fx_alloc(8 * 512), *zero = fx_alloc(8 * 512), *other = fx_alloc(8 * 512);

	(void)state;
	race_list = fx_alloc(4096);
	assert_int_equal(fx_setup(&f, NULL), 0);
	fx_fill(label, 8 * 512, 3);
	fx_fill(other, 8 * 512, 4);
	memset(zero, 0, 8 * 512);
	assert_int_equal(rw(&f, nvme_cmd_write, 0, 8, label), 0);
	assert_int_equal(rw(&f, nvme_cmd_write, 1000, 8, other), 0);
	policy_setup(&f, protect_label);
	assert_int_equal(security_register(f.e, &racer_ops, NULL), 0);

	memset(race_list, 0, 4096);
	race_list[0].slba = htole64(1000);
	race_list[0].nlb = htole32(8);
	assert_int_equal(dsm(&f, race_list, 1), 0);	/* judged: blocks 1000-1007 */
	assert_int_equal(le64toh(race_list[0].slba), 0);	/* the racer did run */
	assert_blocks(&f, 0, 8, label);			/* the label is intact */
	assert_blocks(&f, 1000, 8, zero);		/* what was judged was done */
	security_unregister(f.e, "racer");
	ucmd_security_teardown(f.e);
	free(race_list);
	free(label);
	free(zero);
	free(other);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_io_opcode),
		cmocka_unit_test(test_every_admin_lbcc_opcode),
		cmocka_unit_test(test_unreadable_list),
		cmocka_unit_test(test_policy_stops_copy_and_dsm),
		cmocka_unit_test(test_list_judged_is_list_executed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
