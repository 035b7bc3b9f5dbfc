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
 * The bench starts the built ucmdd itself (--ucmdd PATH, else $UCMDD, else
 * ../src/server/ucmdd next to this binary) on a free loopback port. Cases
 * alternate round by round, best of N. It reports; it never asserts a speed.
 *
 *   bench_tcp [--time S] [--rounds N] [--size BYTES] [--ucmdd PATH] [--only CASE] [--json]
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_daemon.h"
#include "job.h"
#include "opts.h"
#include "rig.h"
#include "table.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"

#define RR_QD	32

struct cfg {
	struct table_opts o;	/* --time, --rounds, --size, --json */
	char ucmdd[PATH_MAX];
	const char *only;
};

/* An engine with a controller attached (in process or over NVMe/TCP) and its target. */
struct peer {
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;		/* in process: the directory's controller */
	struct ucmd_nvme_host *host;
	struct bench_target t;
};

struct ctx {
	const struct cfg *cfg;
	struct daemon_proc d;
	char url_file[512], url_ram[512];
	struct peer tcp_file, tcp_ram, in_file;
	struct bench_rig *rig;
	struct bench_target rig_t;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_tcp: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static struct daemon_proc *the_daemon;

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static void cleanup(void)
{
	if (!the_daemon)
		return;
	if (the_daemon->pid > 0)
		daemon_proc_stop(the_daemon);
	nftw(the_daemon->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void target_init(struct bench_target *t, struct ucmd_engine *e, uint64_t size)
{
	*t = (struct bench_target){ .engine = e, .ng = "ng0n1", .bdev = "/dev/nvme0n1",
				    .nsid = 1, .lba_size = 4096, .nsze = size / 4096 };
}

/* A controller directory with one file namespace of size bytes (4 KiB LBAs). */
static void dir_open(struct peer *p, const char *dir, uint64_t size, bool create)
{
	struct ucmd_ctrl_params cp = { .dir = dir };
	int ret;

	if (create && mkdir(dir, 0700))
		die(dir, errno);
	if ((ret = ucmd_engine_create(&p->e)))
		die("engine", ret);
	if ((ret = ucmd_ctrl_create(&cp, &p->ctrl)))
		die(ucmd_last_error(), ret);
	if (create) {
		struct ucmd_ns_params np = {
			.nsze = size / 4096, .lbaf = 4, .store = UCMD_NS_STORE_FILE, .attach = true,
		};
		if ((ret = ucmd_ctrl_ns_create(p->ctrl, &np)) < 0)
			die("namespace", ret);
	}
	if ((ret = ucmd_nvme_attach(p->e, p->ctrl, NULL, &p->host)))
		die("attach", ret);
	target_init(&p->t, p->e, size);
	/* reads must copy data: unwritten blocks of a sparse file are holes */
	if (create && (ret = bench_fill(&p->t, size)))
		die("filling the namespace", ret);
}

static void peer_close(struct peer *p)
{
	if (p->host)
		ucmd_nvme_detach(p->host);
	if (p->ctrl)
		ucmd_ctrl_destroy(p->ctrl);
	if (p->e)
		ucmd_engine_free(p->e);
	memset(p, 0, sizeof(*p));
}

/* ucmd's host on url; the listener may still be coming up: a few tries. */
static void tcp_open(struct peer *p, const char *url, uint64_t size)
{
	struct ucmd_nvme_host_opts ho = { .queue_depth = 128, .nr_io_queues = 1 };
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
	target_init(&p->t, p->e, size);
}

/* ---- cases ---------------------------------------------------------------- */

struct jobdef {
	const char *peer;	/* "tcp-file", "tcp-ram", "in-file", "in-ram" */
	unsigned batch;
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
			   j_tcp_ram8 = { "tcp-ram", 8 }, j_in_ram8 = { "in-ram", 8 };

static const struct table_case cases[] = {
	{ "rr-tcp-file", "file", "NVMe/TCP, ucmdd tmpfs file ns", job, &j_tcp_file },
	{ "rr-inproc-file", "file", "in-process, same tmpfs file ns", job, &j_in_file },
	{ "rr-tcp-ram", "ram", "NVMe/TCP, ucmdd RAM ns", job, &j_tcp_ram },
	{ "rr-inproc-ram", "ram", "in-process, RAM ns", job, &j_in_ram },
	{ "rr-tcp-ram-b8", "b8", "NVMe/TCP, ucmdd RAM ns, batch 8", job, &j_tcp_ram8 },
	{ "rr-inproc-ram-b8", "b8", "in-process, RAM ns, batch 8", job, &j_in_ram8 },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

static const struct table_ratio ratios[] = {
	{ "rr-tcp-file", "rr-inproc-file", "randread QD32: NVMe/TCP / in-process, file ns", 0.5 },
	{ "rr-tcp-ram", "rr-inproc-ram", "randread QD32: NVMe/TCP / in-process, RAM ns", 0.5 },
	{ "rr-tcp-ram-b8", "rr-inproc-ram-b8", "randread QD32 b8: NVMe/TCP / in-process, RAM", 0.5 },
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
			"[--only CASE] [--json]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct cfg *c)
{
	static const struct option lo[] = {
		TABLE_LONGOPTS,
		{ "ucmdd", required_argument, NULL, 'u' },
		{ "only", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("UCMDD");
	int ch;

	*c = (struct cfg){ 0 };
	table_opts_default(&c->o);
	if (env) {
		snprintf(c->ucmdd, sizeof(c->ucmdd), "%s", env);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n > 0) {
			self[n] = 0;
			snprintf(c->ucmdd, sizeof(c->ucmdd), "%s/../src/server/ucmdd", dirname(self));
		}
	}
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int t = table_opt(&c->o, ch, optarg);

		if (t < 0)
			usage();
		if (t > 0)
			continue;
		switch (ch) {
		case 'u': snprintf(c->ucmdd, sizeof(c->ucmdd), "%s", optarg); break;
		case 'o': c->only = optarg; break;
		default: usage();
		}
	}
	if (!c->o.rounds || optind != argc || (c->only && table_find(&table, c->only) < 0))
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
	static struct ctx c;	/* cleanup() reads c.d from atexit */
	struct table_run best[NR_CASES];
	char ddir[PATH_MAX], fdir[PATH_MAX], addr[64], nqn0[260], nqn1[260];
	struct ucmd_engine *de;
	unsigned port;
	int ret;

	parse(argc, argv, &cfg);
	c.cfg = &cfg;
	if (access(cfg.ucmdd, X_OK))
		die(cfg.ucmdd, errno);
	snprintf(c.d.dir, sizeof(c.d.dir), "/dev/shm/ucmd-bench-tcp.XXXXXX");
	if (!mkdtemp(c.d.dir))
		die("mkdtemp /dev/shm", errno);
	the_daemon = &c.d;
	atexit(cleanup);
	snprintf(ddir, sizeof(ddir), "%s/ctrl-daemon", c.d.dir);
	snprintf(fdir, sizeof(fdir), "%s/ctrl-inproc", c.d.dir);
	struct peer prep = { 0 };
	dir_open(&prep, ddir, cfg.o.size, true);
	peer_close(&prep);
	dir_open(&c.in_file, fdir, cfg.o.size, true);

	port = free_port();
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	ret = daemon_proc_start_tcp(&c.d, cfg.ucmdd, ddir, cfg.o.size, addr);
	if (ret)
		die("starting ucmdd", ret);
	if ((ret = ucmd_engine_connect(c.d.sock, &de)))
		die("ucmd_engine_connect", ret);
	{
		/* as the in-process RAM namespace is: every block written once */
		struct bench_target t = { .engine = de, .ng = "ng1n1", .bdev = "/dev/nvme1n1",
					  .nsid = 1, .lba_size = 4096, .nsze = cfg.o.size / 4096 };

		if ((ret = bench_fill(&t, cfg.o.size)))
			die("filling ucmdd's RAM namespace", ret);
	}
	subnqn(de, "nvme0", nqn0, sizeof(nqn0));
	subnqn(de, "nvme1", nqn1, sizeof(nqn1));
	ucmd_engine_free(de);
	/* the target exports a controller repeating an earlier one's NQN as NQN:nvmeN */
	snprintf(c.url_file, sizeof(c.url_file), "nvme-tcp://%s/%s", addr, nqn0);
	snprintf(c.url_ram, sizeof(c.url_ram), "nvme-tcp://%s/%s%s", addr, nqn1,
		 strcmp(nqn0, nqn1) ? "" : ":nvme1");

	table_run(&table, &c, cfg.o.seconds, cfg.o.rounds, cfg.only, best);

	if (cfg.o.json) {
		json_object *root = json_object_new_object();

		table_json_opts(root, &cfg.o);
		table_json(root, &table, best, cfg.only);
		table_json_emit(root);
	} else {
		printf("bench_tcp: %.2f s per case, best of %u rounds, namespaces %llu MiB, "
		       "ucmd's NVMe/TCP host to ucmdd on %s\n\n", cfg.o.seconds, cfg.o.rounds,
		       (unsigned long long)(cfg.o.size >> 20), addr);
		table_print(&table, best, cfg.only);
	}
	peer_close(&c.tcp_file);
	peer_close(&c.tcp_ram);
	peer_close(&c.in_file);
	bench_rig_close(c.rig);
	ret = daemon_proc_stop(&c.d);
	return ret == 0 ? 0 : 1;
}
