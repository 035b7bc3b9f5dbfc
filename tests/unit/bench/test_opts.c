/* SPDX-License-Identifier: MIT */
/* `ucmd bench` option parsing: good input is taken, bad input says why. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "opts.h"

static char err[256];

/* argv from a NULL-terminated list of literals, copied (getopt may permute) */
static int parse(struct bench_opts *o, const char **args)
{
	static char store[32][64];
	char *argv[33];
	int argc = 0;

	bench_opts_default(o);
	err[0] = 0;
	for (; args[argc]; argc++) {
		strcpy(store[argc], args[argc]);
		argv[argc] = store[argc];
	}
	argv[argc] = NULL;
	return bench_opts_parse(o, argc, argv, err, sizeof(err));
}

#define PARSE(o, ...) parse(o, (const char *[]){ "bench", __VA_ARGS__, NULL })

static void test_defaults_and_full(void **state)
{
	(void)state;
	struct bench_opts o;

	assert_int_equal(parse(&o, (const char *[]){ "bench", NULL }), 0);
	assert_int_equal(o.rw, RW_RANDREAD);
	assert_int_equal(o.bs, 4096);
	assert_int_equal(o.iodepth, 32);
	assert_int_equal(o.path, PATH_PASSTHRU);

	assert_int_equal(PARSE(&o, "--rw", "randrw", "--rwmixread", "70", "--bs", "8k",
			       "--iodepth", "128", "--batch", "32,16", "--size", "16M",
			       "--runtime", "500ms", "--threads", "2", "--path", "block",
			       "--fixedbufs", "--iopoll", "--verify", "--output-format", "json",
			       "--target", "ram", "--ctrl-mode", "thread", "--lba-size", "512"), 0);
	assert_int_equal(o.rw, RW_RANDRW);
	assert_int_equal(o.rwmixread, 70);
	assert_int_equal(o.bs, 8192);
	assert_int_equal(o.iodepth, 128);
	assert_int_equal(o.batch_submit, 32);
	assert_int_equal(o.batch_complete, 16);
	assert_int_equal(o.size, 16u << 20);
	assert_true(o.runtime > 0.499 && o.runtime < 0.501);
	assert_int_equal(o.threads, 2);
	assert_int_equal(o.path, PATH_BLOCK);
	assert_true(o.fixedbufs && o.iopoll && o.verify && o.json);
	assert_int_equal(o.target, TARGET_RAM);
	assert_int_equal(o.ctrl_mode, CTRL_THREAD);
	assert_int_equal(o.lba_size, 512);

	/* one --batch value sets both sizes */
	assert_int_equal(PARSE(&o, "--batch", "8"), 0);
	assert_int_equal(o.batch_submit, 8);
	assert_int_equal(o.batch_complete, 8);
	assert_int_equal(PARSE(&o, "--target", "ram", "--ctrl-mode", "trap"), 0);
	assert_int_equal(o.ctrl_mode, CTRL_TRAP);
}

static void test_sizes_and_times(void **state)
{
	(void)state;
	uint64_t v;
	double t;

	assert_int_equal(bench_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(bench_parse_size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(bench_parse_size("4KiB", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(bench_parse_size("1g", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(bench_parse_size("0x10", &v), 0);
	assert_int_equal(v, 16);
	assert_int_not_equal(bench_parse_size("", &v), 0);
	assert_int_not_equal(bench_parse_size("-1", &v), 0);
	assert_int_not_equal(bench_parse_size("4q", &v), 0);
	assert_int_not_equal(bench_parse_size("4kx", &v), 0);
	assert_int_not_equal(bench_parse_size("99999999999999999999", &v), 0);
	assert_int_not_equal(bench_parse_size("17179869184g", &v), 0);	/* overflows */
	assert_int_equal(bench_parse_time("2", &t), 0);
	assert_true(t == 2);
	assert_int_equal(bench_parse_time("1.5s", &t), 0);
	assert_true(t == 1.5);
	assert_int_not_equal(bench_parse_time("1h", &t), 0);
	assert_int_not_equal(bench_parse_time("-1", &t), 0);
	assert_int_not_equal(bench_parse_time("nan", &t), 0);
}

/* Each bad input fails with -EINVAL and a message naming the option. */
static void expect_error(const char **args, const char *needle)
{
	struct bench_opts o;

	assert_int_equal(parse(&o, args), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

#define BAD(needle, ...) expect_error((const char *[]){ "bench", __VA_ARGS__, NULL }, needle)

static void test_bad_input(void **state)
{
	(void)state;
	BAD("--rw", "--rw", "readwrite");
	BAD("--rwmixread", "--rwmixread", "101");
	BAD("--bs", "--bs", "0");
	BAD("--bs", "--bs", "four");
	BAD("multiple of 512", "--bs", "1000");
	BAD("--iodepth", "--iodepth", "0");
	BAD("--iodepth", "--iodepth", "5000");
	BAD("--batch", "--batch", "8,x");
	BAD("--batch", "--batch", ",8");
	BAD("larger than --iodepth", "--iodepth", "4", "--batch", "8");
	BAD("--size", "--size", "12z");
	BAD("--runtime", "--runtime", "soon");
	BAD("--threads", "--threads", "0");
	BAD("--path", "--path", "nvme");
	BAD("--path sync", "--path", "sync", "--iopoll");
	BAD("--sqpoll", "--sqpoll", "--noplug");
	BAD("--vectored", "--fixedbufs", "--vectored");
	BAD("--target", "--target", "disk");
	BAD("--ctrl-mode", "--ctrl-mode", "irq");
	BAD("--lba-size", "--lba-size", "1024");
	BAD("--output-format", "--output-format", "xml");
	BAD("unknown option", "--frobnicate");
	BAD("needs a value", "--bs");
	BAD("unexpected argument", "extra");
	BAD("less than one", "--size", "4k", "--bs", "4k", "--threads", "2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_full),
		cmocka_unit_test(test_sizes_and_times),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
