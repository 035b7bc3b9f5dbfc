/* SPDX-License-Identifier: MIT */
/*
 * `ucmd bench`: a workload on a volatile RAM controller of its own (the
 * default, --target ram: inline or thread mode) or, only when asked with
 * --target session, on the CLI's session (the persistent namespace, whose
 * data a write job overwrites), as fio writes only where a filename points
 * it. Options are parsed before any session is opened (bench_pre), so the
 * RAM target opens none. The runner itself is tools/bench (job.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cli.h"
#include "job.h"
#include "opts.h"
#include "rig.h"
#include "ucmd/kernel.h"

static struct bench_opts bench_o;

int bench_pre(struct cli *cli, int argc, char **argv, bool *needs_session)
{
	struct bench_opts *o = &bench_o;
	char err[256];
	int ret;

	/* -h or --help anywhere: the usage only, as every command */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			bench_usage(stdout);
			return 1;
		}
	bench_opts_default(o);
	o->json = cli->fmt == OUT_JSON;
	ret = bench_opts_parse(o, argc, argv, err, sizeof(err));
	if (ret > 0)
		return 1;
	if (ret) {
		fprintf(stderr, "bench: %s\n", err);
		return -EINVAL;
	}
	if (o->target == TARGET_RAM && (cli->daemon || cli->device)) {
		fprintf(stderr, "bench: %s: add --target session to run on its namespace (a write "
			"job overwrites its data); the default target is a RAM namespace of "
			"bench's own\n", cli->daemon ? "--daemon" : cli->device);
		return -EINVAL;
	}
	*needs_session = o->target == TARGET_SESSION;
	return 0;
}

/* Log 22h of the target's controller: host and media bytes written (-errno, NVMe status) */
static int fdp_stats(const struct bench_target *t, uint64_t *host, uint64_t *media)
{
	static uint8_t s[64] __attribute__((aligned(4096)));
	struct nvme_passthru_cmd64 c = { .opcode = 0x02, .data_len = sizeof(s),
					 .addr = (uint64_t)(uintptr_t)s,
					 .cdw10 = 0x22 | (sizeof(s) / 4 - 1) << 16,
					 .cdw11 = 1u << 16 };	/* LSI: endurance group 1 */
	int fd = ucmd_open(t->engine, "nvme0", O_RDWR), ret;

	if (fd < 0)
		return fd;
	ret = (int)ucmd_ioctl(t->engine, fd, NVME_IOCTL_ADMIN64_CMD, &c);
	ucmd_close(t->engine, fd);
	memcpy(host, s, 8);
	memcpy(media, s + 16, 8);
	return ret;
}

int cmd_bench(struct cli *cli, int argc, char **argv)
{
	struct bench_opts o = bench_o;
	struct bench_target t = { 0 };
	struct bench_rig *rig = NULL;
	struct bench_result *r = NULL;
	uint64_t h0 = 0, m0 = 0, h1 = 0, m1 = 0;
	bool have_stats;
	int ret;

	(void)argc;
	(void)argv;
	if (o.target == TARGET_RAM && cli->s.daemon) {
		fprintf(stderr, "bench: --target ram makes a controller in this process: run it "
			"with --ctrl DIR instead of --daemon, or leave --target out to run on the "
			"daemon's namespace\n");
		return 2;
	}
	if (o.target == TARGET_RAM) {
		struct bench_rig_params rp = {
			.thread_mode = o.ctrl_mode != CTRL_INLINE,
			.db_trap = o.ctrl_mode == CTRL_TRAP,
			.bytes = o.size,
			.lba_size = o.lba_size,
			.nr_io_queues = o.threads,
			.nr_poll_queues = o.iopoll ? o.threads : 0,
			.queue_depth = o.iodepth < 64 ? 64 : o.iodepth + 1,
			.fdp = o.plid >= 0,
		};
		ret = bench_rig_open(&rp, &rig, &t);
		if (ret) {
			fprintf(stderr, "bench: RAM controller: %s\n", strerror(-ret));
			return 1;
		}
		/* --verify writes its own pattern first; plain reads need written blocks */
		if (!o.verify && o.rw != RW_WRITE && o.rw != RW_RANDWRITE &&
		    (ret = bench_fill(&t, o.size))) {
			fprintf(stderr, "bench: filling the RAM namespace: %s\n", strerror(-ret));
			bench_rig_close(rig);
			return 1;
		}
	} else {
		struct session *s = &cli->s;
		if (!s->lba_size) {
			fprintf(stderr, "bench: namespace %u is not active\n", s->nsid);
			return 1;
		}
		t.engine = s->e;
		t.nsid = s->nsid;
		t.lba_size = s->lba_size;
		t.nsze = s->nsze;
		snprintf(t.ng, sizeof(t.ng), "ng0n%u", s->nsid);
		snprintf(t.bdev, sizeof(t.bdev), "nvme0n%u", s->nsid);
		if (s->kernel && s->kn) {
			/* a real /dev/ngXnY; its block twin is /dev/nvmeXnY (buffered, not O_DIRECT) */
			snprintf(t.ng, sizeof(t.ng), "%s", s->kn->ns_path);
			if (!strncmp(s->kn->ns_path, "/dev/ng", 7))
				snprintf(t.bdev, sizeof(t.bdev), "/dev/nvme%s", s->kn->ns_path + 7);
		}
		if (s->meta_size && o.path != PATH_PASSTHRU)
			fprintf(stderr, "bench: note: namespace has %u metadata bytes per LBA\n",
				s->meta_size);
	}
	have_stats = o.plid >= 0 && !fdp_stats(&t, &h0, &m0);
	ret = bench_run(&o, &t, &r);
	if (ret) {
		fprintf(stderr, "bench: %s\n", r && r->errmsg[0] ? r->errmsg : strerror(-ret));
		ret = 1;
	} else {
		/* what the run cost the media, from the controller's log 22h */
		have_stats = have_stats && !fdp_stats(&t, &h1, &m1) && h1 > h0;
		if (o.json) {
			struct json_object *j = bench_report_json(&o, &t, r);

			if (have_stats) {
				struct json_object *f = json_object_new_object();

				json_object_object_add(f, "plid", json_object_new_int(o.plid));
				json_object_object_add(f, "host_bytes", json_object_new_uint64(h1 - h0));
				json_object_object_add(f, "media_bytes", json_object_new_uint64(m1 - m0));
				json_object_object_add(f, "waf", json_object_new_double(
					(double)(m1 - m0) / (double)(h1 - h0)));
				json_object_object_add(j, "fdp", f);
			}
			json_print(j);	/* puts j */
		} else {
			bench_report_text(stdout, &o, &t, r);
		}
		if (have_stats && !o.json)
			printf("  fdp: plid=%d WAF=%.2f (log 22h: %llu host, %llu media bytes "
			       "written during the run)\n", o.plid,
			       (double)(m1 - m0) / (double)(h1 - h0),
			       (unsigned long long)(h1 - h0), (unsigned long long)(m1 - m0));
		/* a wrong answer is a failure, whatever the speed */
		ret = (r->io_errors || r->verify_errors) ? 1 : 0;
		if (r->io_errors)
			fprintf(stderr, "bench: %llu I/Os failed (first res %d)\n",
				(unsigned long long)r->io_errors, r->first_error);
		if (r->verify_errors)
			fprintf(stderr, "bench: %llu reads did not verify\n",
				(unsigned long long)r->verify_errors);
	}
	free(r);
	bench_rig_close(rig);
	return ret;
}
