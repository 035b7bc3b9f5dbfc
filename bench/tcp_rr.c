/* SPDX-License-Identifier: MIT */
/*
 * bench_tcp: ucmd's NVMe/TCP host transport to ucmdd's NVMe/TCP target on
 * loopback against the in-process path on the same kind of namespace, side
 * by side, in one run (docs/performance.md "NVMe/TCP on loopback").
 *   file  4 KiB random reads, QD32, `ucmd bench`'s job (passthrough on
 *         ng0n1, one SQE per submit, one CQE per wait): over NVMe/TCP
 *         (ucmd_nvme_attach_tcp() to `ucmdd --ctrl DIR --nvme-tcp`) and in
 *         process on an identical controller directory on tmpfs (--ctrl DIR)
 *   ram   the same on ucmdd's --ram controller against an in-process RAM
 *         namespace (the bench rig)
 *   b8    the RAM pair submitting and reaping 8 at a time
 *   poll, fpoll  the RAM and file pairs on IOPOLL rings: the NVMe/TCP host
 *         reads its polled queue's socket on the waiting thread
 * The bench starts the built ucmdd itself (--ucmdd PATH, else $UCMDD, else
 * ../src/server/ucmdd next to this binary) on a free loopback port. Cases
 * alternate round by round, best of N. It reports; it never asserts a speed.
 *
 *   bench_tcp [--time S] [--rounds N] [--size BYTES] [--ucmdd PATH] [--only CASE[|CASE...]] [--json]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_daemon.h"
#include "dirctrl.h"
#include "job.h"
#include "opts.h"
#include "rig.h"
#include "table.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"

#define RR_QD	32

struct cfg {
	struct table_opts o;	/* --time, --rounds, --size, --json */
	struct daemon_opts dopt;	/* --ucmdd, --only */
};

struct ctx {
	const struct cfg *cfg;
	struct daemon_proc d;
	char url_file[512], url_ram[512];
	struct dirctrl tcp_file, tcp_ram, in_file;
	struct bench_rig *rig;
	struct bench_target rig_t;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_tcp: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* ucmd's host on url; the listener may still be coming up: a few tries. */
static void tcp_open(struct dirctrl *p, const char *url, uint64_t size)
{
	/* a polled queue besides: the IOPOLL cases' requests go there (Linux's poll queues) */
	struct ucmd_nvme_host_opts ho = { .queue_depth = 128, .nr_io_queues = 1,
					  .nr_poll_queues = 1 };
	int ret = -ECONNREFUSED;

	if ((ret = ucmd_engine_create(&p->e)))
		die("engine", ret);
	for (int i = 0; i < 100; i++) {
		ret = ucmd_nvme_attach_tcp(p->e, url, &ho, NULL, &p->host);
		if (ret != -ECONNREFUSED)
			break;
		usleep(50000);
	}
	if (ret) {
		fprintf(stderr, "bench_tcp: %s: %s\n", url, ucmd_last_error());
		exit(1);
	}
	dirctrl_target(&p->t, p->e, size);
}

/* ---- cases ---------------------------------------------------------------- */

struct jobdef {
	const char *peer;	/* "tcp-file", "tcp-ram", "in-file", "in-ram" */
	unsigned batch;
	bool iopoll;
};

static struct bench_target *target(struct ctx *c, const char *which)
{
	uint64_t size = c->cfg->o.size;

	if (!strcmp(which, "tcp-file")) {
		if (!c->tcp_file.e)
			tcp_open(&c->tcp_file, c->url_file, size);
		return &c->tcp_file.t;
	}
	if (!strcmp(which, "tcp-ram")) {
		if (!c->tcp_ram.e)
			tcp_open(&c->tcp_ram, c->url_ram, size);
		return &c->tcp_ram.t;
	}
	if (!strcmp(which, "in-file"))
		return &c->in_file.t;
	if (!c->rig) {
		struct bench_rig_params p = { .bytes = size, .lba_size = 4096,
					      .nr_io_queues = 1, .queue_depth = 256 };
		int ret = bench_rig_open(&p, &c->rig, &c->rig_t);

		if (ret)
			die("RAM controller", ret);
		if ((ret = bench_fill(&c->rig_t, size)))
			die("filling the RAM namespace", ret);
	}
	return &c->rig_t;
}

static void job(struct ctx *c, const void *arg, double s, struct table_run *r)
{
	const struct jobdef *j = arg;
	struct bench_target *t = target(c, j->peer);
	struct bench_result *res;
	struct bench_opts o;

	bench_opts_default(&o);
	o.rw = RW_RANDREAD;
	o.bs = 4096;
	o.size = c->cfg->o.size;
	o.path = PATH_PASSTHRU;
	o.iodepth = RR_QD;
	o.batch_submit = o.batch_complete = j->batch;
	o.iopoll = j->iopoll;
	o.progress = false;
	o.runtime = s;
	int ret = bench_run(&o, t, &res);
	if (ret || res->io_errors) {
		fprintf(stderr, "bench_tcp: %s: %s (%llu I/O errors, first %d)\n", j->peer,
			res ? res->errmsg : "", res ? (unsigned long long)res->io_errors : 0ull,
			res ? res->first_error : 0);
		exit(1);
	}
	r->ops = (int64_t)res->dir[DIR_READ].ios;
	r->elapsed = res->elapsed;
	free(res);
}

static const struct jobdef j_tcp_file = { "tcp-file", 1 }, j_in_file = { "in-file", 1 },
			   j_tcp_ram = { "tcp-ram", 1 }, j_in_ram = { "in-ram", 1 },
			   j_tcp_ram8 = { "tcp-ram", 8 }, j_in_ram8 = { "in-ram", 8 },
			   j_tcp_ramp = { "tcp-ram", 1, true }, j_in_ramp = { "in-ram", 1, true },
			   j_tcp_filep = { "tcp-file", 1, true }, j_in_filep = { "in-file", 1, true };

static const struct table_case cases[] = {
	{ "rr-tcp-file", "file", "NVMe/TCP, ucmdd tmpfs file ns", job, &j_tcp_file },
	{ "rr-inproc-file", "file", "in-process, same tmpfs file ns", job, &j_in_file },
	{ "rr-tcp-ram", "ram", "NVMe/TCP, ucmdd RAM ns", job, &j_tcp_ram },
	{ "rr-inproc-ram", "ram", "in-process, RAM ns", job, &j_in_ram },
	{ "rr-tcp-ram-b8", "b8", "NVMe/TCP, ucmdd RAM ns, batch 8", job, &j_tcp_ram8 },
	{ "rr-inproc-ram-b8", "b8", "in-process, RAM ns, batch 8", job, &j_in_ram8 },
	{ "rr-tcp-ram-poll", "poll", "NVMe/TCP, ucmdd RAM ns, IOPOLL", job, &j_tcp_ramp },
	{ "rr-inproc-ram-poll", "poll", "in-process, RAM ns, IOPOLL", job, &j_in_ramp },
	{ "rr-tcp-file-poll", "fpoll", "NVMe/TCP, ucmdd tmpfs file ns, IOPOLL", job, &j_tcp_filep },
	{ "rr-inproc-file-poll", "fpoll", "in-process, same file ns, IOPOLL", job, &j_in_filep },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

static const struct table_ratio ratios[] = {
	{ "rr-tcp-file", "rr-inproc-file", "randread QD32: NVMe/TCP / in-process, file ns", 0.5 },
	{ "rr-tcp-ram", "rr-inproc-ram", "randread QD32: NVMe/TCP / in-process, RAM ns", 0.5 },
	{ "rr-tcp-ram-b8", "rr-inproc-ram-b8", "randread QD32 b8: NVMe/TCP / in-process, RAM", 0.5 },
	{ "rr-tcp-ram-poll", "rr-inproc-ram-poll", "randread QD32 IOPOLL: NVMe/TCP / in-process, RAM",
	  0.5 },
	{ "rr-tcp-file-poll", "rr-inproc-file-poll",
	  "randread QD32 IOPOLL: NVMe/TCP / in-process, file", 0.5 },
};
#define NR_RATIOS (sizeof(ratios) / sizeof(ratios[0]))

static const struct table table = {
	.cases = cases, .nr_cases = NR_CASES, .ratios = ratios, .nr_ratios = NR_RATIOS,
	.label_width = 36, .ratio_width = 50,
};

/* ---- main ----------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: bench_tcp [--time S] [--rounds N] [--size BYTES] [--ucmdd PATH] "
			"[--only CASE[|CASE...]] [--json]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct cfg *c)
{
	static const struct option lo[] = {
		TABLE_LONGOPTS,
		DAEMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	table_opts_default(&c->o);
	daemon_opts_default(&c->dopt);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int t = table_opt(&c->o, ch, optarg);

		if (t < 0 || (!t && !daemon_opt(&c->dopt, ch, optarg)))
			usage();
	}
	if (!c->o.rounds || optind != argc ||
	    !table_only_ok(&table, c->dopt.only))
		usage();
}

/* A loopback port nobody listens on now (the daemon binds it a moment later). */
static unsigned free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		die("a free port", errno);
	close(fd);
	return ntohs(a.sin_port);
}

/* Identify Controller's SUBNQN of the daemon's controller dev ("nvme0"). */
static void subnqn(struct ucmd_engine *e, const char *dev, char *nqn, size_t len)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	uint8_t *id = ucmd_buf_alloc(e, 4096);
	int fd = ucmd_open(e, dev, O_RDONLY), ret;
	struct io_uring_cqe *cqe;
	struct ucmd_ring ring;

	if (!id || fd < 0)
		die(dev, fd < 0 ? fd : -ENOMEM);
	if ((ret = ucmd_queue_init_engine(e, 4, &ring, &p)))
		die("ring", ret);
	struct nvme_uring_cmd cmd = { .opcode = 0x06, .cdw10 = 1,
				      .addr = (uint64_t)(uintptr_t)id, .data_len = 4096 };
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&ring), fd, NVME_URING_CMD_ADMIN, &cmd);
	ret = ucmd_submit_and_wait(&ring, 1);
	if (ret >= 0)
		ret = ucmd_wait_cqe(&ring, &cqe);
	if (ret >= 0) {
		ret = cqe->res;
		ucmd_cqe_seen(&ring, cqe);
	}
	if (ret)
		die("Identify Controller", ret < 0 ? ret : -EIO);
	snprintf(nqn, len, "%.256s", (const char *)id + 768);
	ucmd_queue_exit(&ring);
	ucmd_close(e, fd);
	ucmd_buf_free(e, id);
}

int main(int argc, char **argv)
{
	struct cfg cfg;
	static struct ctx c;	/* cleanup at exit reads c.d */
	struct table_run best[NR_CASES];
	char ddir[PATH_MAX], addr[64], nqn0[260], nqn1[260];
	struct ucmd_engine *de;
	const char *what;
	unsigned port;
	int ret;

	parse(argc, argv, &cfg);
	c.cfg = &cfg;
	if (access(cfg.dopt.ucmdd, X_OK))
		die(cfg.dopt.ucmdd, errno);
	if ((ret = daemon_proc_dir(&c.d, "ucmd-bench-tcp")))
		die("mkdtemp /dev/shm", ret);
	if ((ret = dirctrl_twins(c.d.dir, cfg.o.size, ddir, sizeof(ddir), &c.in_file, &what)))
		die(what, ret);

	port = free_port();
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	ret = daemon_proc_start_tcp(&c.d, cfg.dopt.ucmdd, ddir, cfg.o.size, addr);
	if (ret)
		die("starting ucmdd", ret);
	if ((ret = ucmd_engine_connect(c.d.sock, &de)))
		die("ucmd_engine_connect", ret);
	if ((ret = daemon_proc_fill_ram(de, cfg.o.size)))
		die("filling ucmdd's RAM namespace", ret);
	subnqn(de, "nvme0", nqn0, sizeof(nqn0));
	subnqn(de, "nvme1", nqn1, sizeof(nqn1));
	ucmd_engine_free(de);
	/* the target exports a controller repeating an earlier one's NQN as NQN:nvmeN */
	snprintf(c.url_file, sizeof(c.url_file), "nvme-tcp://%s/%s", addr, nqn0);
	snprintf(c.url_ram, sizeof(c.url_ram), "nvme-tcp://%s/%s%s", addr, nqn1,
		 strcmp(nqn0, nqn1) ? "" : ":nvme1");

	table_run(&table, &c, cfg.o.seconds, cfg.o.rounds, cfg.dopt.only, best);

	if (cfg.o.json) {
		json_object *root = json_object_new_object();

		table_json_opts(root, &cfg.o);
		table_json(root, &table, best, cfg.dopt.only);
		table_json_emit(root);
	} else {
		printf("bench_tcp: %.2f s per case, best of %u rounds, namespaces %llu MiB, "
		       "ucmd's NVMe/TCP host to ucmdd on %s\n\n", cfg.o.seconds, cfg.o.rounds,
		       (unsigned long long)(cfg.o.size >> 20), addr);
		table_print(&table, best, cfg.dopt.only);
		/* where the host's completions were read: by the waiting thread, a poller, or the receivers */
		const struct dirctrl *hosts[] = { &c.tcp_file, &c.tcp_ram };
		for (unsigned i = 0; i < 2; i++) {
			struct ucmd_nvme_tcp_info info;

			if (hosts[i]->host && !ucmd_nvme_tcp_info(hosts[i]->host, &info))
				printf("%s host: %lu completions read by a waiting thread, %lu by a poller\n",
				       i ? "RAM" : "file", info.waited_completions,
				       info.polled_completions);
		}
	}
	dirctrl_close(&c.tcp_file);
	dirctrl_close(&c.tcp_ram);
	dirctrl_close(&c.in_file);
	bench_rig_close(c.rig);
	ret = daemon_proc_stop(&c.d);
	return ret == 0 ? 0 : 1;
}
