/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

static const char *const rw_names[] = { "read", "write", "randread", "randwrite", "randrw" };
static const char *const path_names[] = { "passthru", "block", "sync" };

const char *bench_rw_name(enum bench_rw rw)
{
	return rw_names[rw];
}

const char *bench_path_name(enum bench_path p)
{
	return path_names[p];
}

void bench_opts_default(struct bench_opts *o)
{
	*o = (struct bench_opts){
		.rw = RW_RANDREAD, .rwmixread = 50, .bs = 4096, .iodepth = 32,
		.batch_submit = 1, .batch_complete = 1, .size = 64ull << 20,
		.threads = 1, .path = PATH_PASSTHRU, .progress = true,
		.target = TARGET_RAM, .ctrl_mode = CTRL_INLINE, .lba_size = 4096,
		.seed = 0x5eed, .plid = -1,
	};
}

void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: ucmd bench [options]\n"
		"  --rw read|write|randread|randwrite|randrw   (randread)\n"
		"  --rwmixread PCT      reads in randrw (50)\n"
		"  --bs BYTES           block size, k/m suffixes (4k)\n"
		"  --iodepth N          requests in flight per thread (32)\n"
		"  --batch S[,C]        SQEs per submit, CQEs waited for per reap (1,1)\n"
		"  --size BYTES         device range covered, split among threads (64m)\n"
		"  --runtime T          run for T (s or ms suffix); without: one pass over size\n"
		"  --ops N              stop each thread after N ops\n"
		"  --threads N          threads, one ring each (1)\n"
		"  --path passthru|block|sync\n"
		"  --fixedbufs --vectored --iopoll --sqpoll --noplug --verify\n"
		"  --target ram|session (ram: a RAM namespace of bench's own, the default;\n"
		"                        session: the controller's namespace, data overwritten)\n"
		"  --ctrl-mode inline|thread|trap --lba-size 512|4096   (ram target)\n"
		"  --output-format normal|json  --no-progress  --seed N\n"
		"  --plid N             writes through FDP placement identifier N, WAF reported\n"
		"                       (passthru and sync paths; the ram target gets FDP)\n");
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int bench_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	/* "4KiB" and "4k" alike */
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (~0ull >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int bench_parse_time(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || v > 1e7)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	uint64_t v;

	if (bench_parse_size(s, &v) || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int pick(const char *s, const char *const *names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

enum {
	O_RW = 256, O_MIX, O_BS, O_DEPTH, O_BATCH, O_SIZE, O_RUNTIME, O_OPS, O_THREADS, O_PATH,
	O_FIXED, O_VEC, O_IOPOLL, O_SQPOLL, O_NOPLUG, O_VERIFY, O_TARGET, O_CMODE, O_LBA,
	O_FMT, O_NOPROG, O_SEED, O_PLID, O_HELP,
};

int bench_opts_parse(struct bench_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option lo[] = {
		{ "rw", required_argument, NULL, O_RW },
		{ "rwmixread", required_argument, NULL, O_MIX },
		{ "bs", required_argument, NULL, O_BS },
		{ "iodepth", required_argument, NULL, O_DEPTH },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "size", required_argument, NULL, O_SIZE },
		{ "runtime", required_argument, NULL, O_RUNTIME },
		{ "ops", required_argument, NULL, O_OPS },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "path", required_argument, NULL, O_PATH },
		{ "fixedbufs", no_argument, NULL, O_FIXED },
		{ "vectored", no_argument, NULL, O_VEC },
		{ "iopoll", no_argument, NULL, O_IOPOLL },
		{ "sqpoll", no_argument, NULL, O_SQPOLL },
		{ "noplug", no_argument, NULL, O_NOPLUG },
		{ "verify", no_argument, NULL, O_VERIFY },
		{ "target", required_argument, NULL, O_TARGET },
		{ "ctrl-mode", required_argument, NULL, O_CMODE },
		{ "lba-size", required_argument, NULL, O_LBA },
		{ "output-format", required_argument, NULL, O_FMT },
		{ "no-progress", no_argument, NULL, O_NOPROG },
		{ "seed", required_argument, NULL, O_SEED },
		{ "plid", required_argument, NULL, O_PLID },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const targets[] = { "session", "ram" };
	static const char *const modes[] = { "inline", "thread", "trap" };
	unsigned long long v;
	char *comma;
	int c, i;

	optind = 0;	/* full reset: the caller may have run getopt already */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", lo, NULL)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_RW:
			if ((i = pick(a, rw_names, 5)) < 0)
				return fail(err, errlen, "--rw: '%s' is not read, write, randread, "
					    "randwrite or randrw", a);
			o->rw = (enum bench_rw)i;
			break;
		case O_MIX:
			if (parse_uint(a, 100, &v))
				return fail(err, errlen, "--rwmixread: '%s' is not a percentage 0-100", a);
			o->rwmixread = (unsigned)v;
			break;
		case O_BS:
			if (parse_uint(a, 1u << 30, &v) || !v)
				return fail(err, errlen, "--bs: '%s' is not a size of 1 byte to 1 GiB", a);
			o->bs = (uint32_t)v;
			break;
		case O_DEPTH:
			if (parse_uint(a, 4096, &v) || !v)
				return fail(err, errlen, "--iodepth: '%s' is not 1-4096", a);
			o->iodepth = (unsigned)v;
			break;
		case O_BATCH:
			comma = strchr(a, ',');
			if (comma)
				*comma = 0;	/* optarg points into argv, ours to cut */
			if (parse_uint(a, 4096, &v) || !v) {
				if (comma)
					*comma = ',';
				return fail(err, errlen, "--batch: '%s' is not S[,C] with 1-4096", a);
			}
			o->batch_submit = o->batch_complete = (unsigned)v;
			if (comma) {
				*comma = ',';
				if (parse_uint(comma + 1, 4096, &v) || !v)
					return fail(err, errlen, "--batch: '%s' is not S[,C] with 1-4096",
						    a);
				o->batch_complete = (unsigned)v;
			}
			break;
		case O_SIZE:
			if (bench_parse_size(a, &o->size) || !o->size)
				return fail(err, errlen, "--size: '%s' is not a size (e.g. 16m, 1g)", a);
			break;
		case O_RUNTIME:
			if (bench_parse_time(a, &o->runtime))
				return fail(err, errlen, "--runtime: '%s' is not a time (e.g. 10, 500ms)",
					    a);
			break;
		case O_OPS:
			if (parse_uint(a, ~0ull, &v) || !v)
				return fail(err, errlen, "--ops: '%s' is not a positive count", a);
			o->ops = v;
			break;
		case O_THREADS:
			if (parse_uint(a, 256, &v) || !v)
				return fail(err, errlen, "--threads: '%s' is not 1-256", a);
			o->threads = (unsigned)v;
			break;
		case O_PATH:
			if ((i = pick(a, path_names, 3)) < 0)
				return fail(err, errlen, "--path: '%s' is not passthru, block or sync", a);
			o->path = (enum bench_path)i;
			break;
		case O_FIXED: o->fixedbufs = true; break;
		case O_VEC: o->vectored = true; break;
		case O_IOPOLL: o->iopoll = true; break;
		case O_SQPOLL: o->sqpoll = true; break;
		case O_NOPLUG: o->noplug = true; break;
		case O_VERIFY: o->verify = true; break;
		case O_NOPROG: o->progress = false; break;
		case O_TARGET:
			if ((i = pick(a, targets, 2)) < 0)
				return fail(err, errlen, "--target: '%s' is not session or ram", a);
			o->target = (enum bench_target_kind)i;
			break;
		case O_CMODE:
			if ((i = pick(a, modes, 3)) < 0)
				return fail(err, errlen, "--ctrl-mode: '%s' is not inline, thread or trap", a);
			o->ctrl_mode = (enum bench_ctrl_mode)i;
			break;
		case O_LBA:
			if (parse_uint(a, 4096, &v) || (v != 512 && v != 4096))
				return fail(err, errlen, "--lba-size: '%s' is not 512 or 4096", a);
			o->lba_size = (uint32_t)v;
			break;
		case O_FMT:
			if (!strcmp(a, "json"))
				o->json = true;
			else if (!strcmp(a, "normal"))
				o->json = false;
			else
				return fail(err, errlen, "--output-format: '%s' is not normal or json", a);
			break;
		case O_SEED:
			if (parse_uint(a, ~0ull, &v))
				return fail(err, errlen, "--seed: '%s' is not a number", a);
			o->seed = v;
			break;
		case O_PLID:
			if (parse_uint(a, 0xffff, &v))
				return fail(err, errlen, "--plid: '%s' is not 0-65535", a);
			o->plid = (int32_t)v;
			break;
		case O_HELP:
			bench_usage(stdout);
			return 1;
		case ':':
			return fail(err, errlen, "%s needs a value", argv[optind - 1]);
		default:
			return fail(err, errlen, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument '%s'", argv[optind]);
	/* Combinations that cannot mean anything */
	if (o->path == PATH_SYNC && (o->iopoll || o->sqpoll || o->fixedbufs || o->noplug))
		return fail(err, errlen, "--path sync is a blocking call per I/O: no ring options "
			    "(--iopoll, --sqpoll, --fixedbufs, --noplug)");
	if (o->plid >= 0 && o->path == PATH_BLOCK)
		return fail(err, errlen, "--plid with --path block: the block layer carries no "
			    "placement identifier (that is what passthrough is for)");
	if (o->fixedbufs && o->vectored)
		return fail(err, errlen, "--fixedbufs with --vectored: passthrough has fixed buffers "
			    "only for non-vectored I/O (as Linux), the block path no READV_FIXED");
	if (o->sqpoll && o->noplug)
		return fail(err, errlen, "--sqpoll with --noplug: the polling thread decides how "
			    "many SQEs one submission takes, the application cannot");
	if (o->batch_submit > o->iodepth)
		return fail(err, errlen, "--batch %u is larger than --iodepth %u", o->batch_submit,
			    o->iodepth);
	if (o->batch_complete > o->iodepth)
		return fail(err, errlen, "--batch completion size %u is larger than --iodepth %u",
			    o->batch_complete, o->iodepth);
	if (o->size / o->threads < o->bs)
		return fail(err, errlen, "--size %llu gives each of %u threads less than one "
			    "--bs %u block", (unsigned long long)o->size, o->threads, o->bs);
	if (o->bs % 512)
		return fail(err, errlen, "--bs %u is not a multiple of 512", o->bs);
	return 0;
}
