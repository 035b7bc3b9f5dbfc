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

int cmd_bench(struct cli *cli, int argc, char **argv)
{
	struct bench_opts o = bench_o;
	struct bench_target t = { 0 };
	struct bench_rig *rig = NULL;
	struct bench_result *r = NULL;
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
	ret = bench_run(&o, &t, &r);
	if (ret) {
		fprintf(stderr, "bench: %s\n", r && r->errmsg[0] ? r->errmsg : strerror(-ret));
		ret = 1;
	} else {
		if (o.json) {
			struct json_object *j = bench_report_json(&o, &t, r);
			json_print(j);	/* puts j */
		} else {
			bench_report_text(stdout, &o, &t, r);
		}
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
