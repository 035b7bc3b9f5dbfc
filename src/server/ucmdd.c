/* SPDX-License-Identifier: MIT */
/*
 * ucmdd: the engine as a process of its own, which owns the controller
 * directories (private to its user) and serves clients over a Unix socket.
 * One engine holds every controller; one security chain judges every
 * client's commands, from the daemon's own copies, by the client's
 * credentials as the kernel reports them (docs/daemon.md).
 *
 *   SIGTERM, SIGINT  stop accepting; every client's rings finish what they
 *                    hold; the connections close; the controllers save
 *                    their state; exit 0
 *   SIGHUP           reload the policy (the old one stays if the new fails)
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <stddef.h>
#include <unistd.h>

#include "server/ana_keep.h"
#include "server/ctl.h"
#include "nvme/target/tcp.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"
#include "ucmd/security.h"

#ifndef UCMDD_VERSION_STRING
#define UCMDD_VERSION_STRING "unknown"
#endif

#define MAX_CTRLS 32
#define DEFAULT_NS_BYTES (1ull << 30)

struct opts {
	char *ctrl[MAX_CTRLS];		/* NULL: a RAM controller of ram[i] bytes */
	uint64_t ram[MAX_CTRLS];
	unsigned nr_ctrl;
	char *socket;
	char *policy;
	char *audit;
	char *nvme_tcp[NVMET_TCP_MAX_PORTS];	/* ADDR[:PORT] of each NVMe/TCP port */
	unsigned nr_tcp;
	gid_t socket_gid;		/* --socket-group, or -1 */
	int socket_mode;		/* --socket-mode, or -1: 0600, 0660 with a group */
	bool foreground;
	bool power_on;
	struct srv_limits lim;		/* --limit, --idle-timeout */
};

static const char usage[] =
	"usage: ucmdd --ctrl DIR [--ctrl DIR...] [--ram SIZE...] --socket PATH [--policy FILE]\n"
	"             [--socket-group GROUP] [--socket-mode MODE]\n"
	"             [--audit FILE] [--nvme-tcp ADDR[:PORT][,KEY=VALUE...]]\n"
	"             [--limit KEY=N,...] [--idle-timeout SECONDS] [--foreground]\n"
	"       ucmdd --help | --version\n"
	"\n"
	"Own the NVMe controllers kept in each DIR and serve them to clients\n"
	"over the Unix socket PATH. Clients are told apart by their credentials\n"
	"as the kernel reports them; the policy decides what each may do.\n"
	"\n"
	"options:\n"
	"  --ctrl DIR      a controller directory (repeatable, up to 32): nvme0 is\n"
	"                  the first, nvme1 the next, ... A missing DIR is created\n"
	"                  (mode 0700) with one 1 GiB namespace; an existing one\n"
	"                  must be owned by ucmdd's user and mode 0700\n"
	"  --ram SIZE      a controller kept in memory only, numbered in command-\n"
	"                  line order with the --ctrl ones: one namespace of SIZE\n"
	"                  bytes (suffix K, M or G; a multiple of 4096), gone when\n"
	"                  the daemon stops; namespaces made later by clients\n"
	"                  stay within SIZE in all. For tests and benchmarks\n"
	"  --socket PATH   where clients connect (a stale socket is replaced).\n"
	"                  Owned by ucmdd's user, mode 0600: only that user (and\n"
	"                  root) may connect, as only root may open /dev/ng0n1.\n"
	"                  Not needed when systemd passes a socket (LISTEN_FDS=1;\n"
	"                  ucmdd.socket's SocketMode and SocketGroup then decide)\n"
	"  --socket-group GROUP\n"
	"                  the socket's group (a name or a number), mode 0660:\n"
	"                  its members may connect too, as the disk group may\n"
	"                  open /dev/nvme0n1\n"
	"  --socket-mode MODE\n"
	"                  the socket's mode in octal instead (at most 0777).\n"
	"                  A mode that lets other users connect (o+w) needs a\n"
	"                  --policy: the default rules would let every local\n"
	"                  user write every namespace\n"
	"  --policy FILE   the policy (ucmd-policy(5)); default: Linux's rules.\n"
	"                  SIGHUP reloads it\n"
	"  --audit FILE    append audit records (JSON lines) to FILE, or - for stderr\n"
	"  --nvme-tcp ADDR[:PORT][,KEY=VALUE...]\n"
	"                  also export the controllers over NVMe/TCP (NVMe over\n"
	"                  Fabrics) at ADDR, port 4420 by default (IPv6 in\n"
	"                  brackets): a discovery controller and one subsystem per\n"
	"                  controller, named by its subsystem NQN. Commands go\n"
	"                  through the policy as a remote identity (no uid, no\n"
	"                  capability), or a process of this host as its uid, gid\n"
	"                  and groups (no capability; one whose holder cannot be\n"
	"                  told is refused), with the Connect's host NQN and\n"
	"                  host ID (policy keys hostnqn, hostid). KEYs (seconds,\n"
	"                  counts): icreq_timeout=10, connect_timeout=10,\n"
	"                  send_timeout=30, kato0=120, max_conns=256,\n"
	"                  max_assocs=128, conns_per_peer=130, assocs_per_peer=16\n"
	"                  (a peer: a uid, or a remote address; root is past\n"
	"                  them; docs/daemon.md). Repeatable (up to 16): each\n"
	"                  listener is a port of every subsystem, with an ANA\n"
	"                  state that `ucmd ana-state` sets (multipath)\n"
	"  --limit KEY=N[,KEY=N...]\n"
	"                  what all the connections of one user may hold together\n"
	"                  (root and ucmdd's own user: no limit, and a reserve of\n"
	"                  16 connections and 256 devices the others cannot take):\n"
	"                  conns (default 32), fds (open devices, 512), rings (64),\n"
	"                  regions (shared buffers, 256), sqpoll (SQPOLL rings\n"
	"                  whose thread polls while idle, 1). Beyond: EDQUOT\n"
	"  --idle-timeout SECONDS\n"
	"                  close a connection that has never opened a device, a\n"
	"                  ring or a region after SECONDS without a request\n"
	"                  (default 60; 0: never)\n"
	"  --power-on      this start is the devices' power on: each --ctrl counts a\n"
	"                  power cycle and loses its volatile state (the service\n"
	"                  unit passes it). Without it a controller is powered on\n"
	"                  only when the host booted since its last run or that run\n"
	"                  did not shut down (ucmd exec's private daemon)\n"
	"  --foreground    do not detach; log to stderr, not syslog\n"
	"  --help          this text\n"
	"  --version       the version\n"
	"\n"
	"signals: SIGTERM or SIGINT finishes in-flight commands, saves the\n"
	"controllers and exits 0; SIGHUP reloads the policy.\n";

/* SIZE[K|M|G]: nonzero, a multiple of 4096, at most 1 TiB; 0 or -1. */
static int parse_size(const char *arg, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!isdigit((unsigned char)arg[0]))
		return -1;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || !v || v > (1ull << 40) >> shift)
		return -1;
	v <<= shift;
	if (v % 4096)
		return -1;
	*out = v;
	return 0;
}

/* Relative paths made absolute now: the daemon changes directory to /. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/' || !strcmp(path, "-"))
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

/* A group name or number: 0 or -1. */
static int parse_group(const char *arg, gid_t *out)
{
	char buf[4096], *end;
	struct group gr, *res = NULL;
	unsigned long v;

	if (isdigit((unsigned char)arg[0])) {
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || v >= (gid_t)-1)
			return -1;
		*out = (gid_t)v;
		return 0;
	}
	if (getgrnam_r(arg, &gr, buf, sizeof(buf), &res) || !res)
		return -1;
	*out = res->gr_gid;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "ctrl", required_argument, NULL, 'c' },
		{ "ram", required_argument, NULL, 'r' },
		{ "socket", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "audit", required_argument, NULL, 'a' },
		{ "nvme-tcp", required_argument, NULL, 't' },
		{ "socket-group", required_argument, NULL, 'g' },
		{ "socket-mode", required_argument, NULL, 'm' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "power-on", no_argument, NULL, 'P' },
		{ "limit", required_argument, NULL, 'L' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		char **slot = NULL;

		switch (ch) {
		case 'c':
			if (o->nr_ctrl == MAX_CTRLS) {
				fprintf(stderr, "ucmdd: at most %d --ctrl directories\n", MAX_CTRLS);
				return 2;
			}
			slot = &o->ctrl[o->nr_ctrl++];
			break;
		case 'r':
			if (o->nr_ctrl == MAX_CTRLS) {
				fprintf(stderr, "ucmdd: at most %d controllers\n", MAX_CTRLS);
				return 2;
			}
			if (parse_size(optarg, &o->ram[o->nr_ctrl])) {
				fprintf(stderr, "ucmdd: --ram %s: a size in bytes (K, M, G), a "
					"multiple of 4096, is expected\n", optarg);
				return 2;
			}
			o->nr_ctrl++;
			break;
		case 's':
			slot = &o->socket;
			break;
		case 'p':
			slot = &o->policy;
			break;
		case 'a':
			slot = &o->audit;
			break;
		case 't': {
			struct sockaddr_storage ss;
			socklen_t sl;

			if (nvmet_tcp_parse_addr(optarg, &ss, &sl)) {
				fprintf(stderr, "ucmdd: --nvme-tcp %s: ADDR[:PORT] expected (an IP "
					"address; IPv6 in brackets), then ,KEY=VALUE settings "
					"(see --help)\n", optarg);
				return 2;
			}
			if (o->nr_tcp == NVMET_TCP_MAX_PORTS) {
				fprintf(stderr, "ucmdd: at most %d --nvme-tcp listeners\n",
					NVMET_TCP_MAX_PORTS);
				return 2;
			}
			o->nvme_tcp[o->nr_tcp] = strdup(optarg);
			if (!o->nvme_tcp[o->nr_tcp++])
				return 1;
			break;
		}
		case 'g':
			if (parse_group(optarg, &o->socket_gid)) {
				fprintf(stderr, "ucmdd: --socket-group %s: no such group\n", optarg);
				return 2;
			}
			break;
		case 'm': {
			char *end;
			long m = strtol(optarg, &end, 8);

			if (!isdigit((unsigned char)optarg[0]) || *end || m < 0 || m > 0777) {
				fprintf(stderr, "ucmdd: --socket-mode %s: an octal mode, at most "
					"0777, is expected\n", optarg);
				return 2;
			}
			o->socket_mode = (int)m;
			break;
		}
		case 'f':
			o->foreground = true;
			break;
		case 'P':
			o->power_on = true;
			break;
		case 'L':
			if (srv_limits_parse(optarg, &o->lim)) {
				fprintf(stderr, "ucmdd: --limit %s: KEY=N[,KEY=N...] expected, KEY one of "
					"conns, fds, rings, regions, sqpoll\n", optarg);
				return 2;
			}
			break;
		case 'I': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!isdigit((unsigned char)optarg[0]) || *end || v > 86400) {
				fprintf(stderr, "ucmdd: --idle-timeout %s: seconds (0 to 86400) "
					"expected\n", optarg);
				return 2;
			}
			o->lim.idle_s = (unsigned)v;
			break;
		}
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("ucmdd %s\n", UCMDD_VERSION_STRING);
			return 0;
		case ':':
			fprintf(stderr, "ucmdd: %s needs an argument\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "ucmdd: unknown option %s (ucmdd --help lists them)\n",
				argv[optind - 1]);
			return 2;
		}
		if (slot) {
			if (!optarg[0]) {
				fprintf(stderr, "ucmdd: %s: empty argument\n", argv[optind - 1]);
				return 2;
			}
			free(*slot);
			*slot = absolute(optarg);
			if (!*slot) {
				fprintf(stderr, "ucmdd: %s: %s\n", optarg, strerror(errno));
				return 1;
			}
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ucmdd: unexpected argument '%s' (ucmdd --help)\n", argv[optind]);
		return 2;
	}
	if (!o->nr_ctrl) {
		fprintf(stderr, "ucmdd: no --ctrl DIR or --ram SIZE: nothing to serve (ucmdd --help)\n");
		return 2;
	}
	if (o->socket_mode < 0)
		o->socket_mode = o->socket_gid == (gid_t)-1 ? 0600 : 0660;
	if ((o->socket_mode & 0002) && !o->policy) {
		fprintf(stderr, "ucmdd: --socket-mode %04o lets every user connect: that needs "
			"a --policy (ucmd-policy(5))\n", (unsigned)o->socket_mode);
		return 2;
	}
	return -1;
}

static void opts_free(struct opts *o)
{
	for (unsigned i = 0; i < o->nr_ctrl; i++)
		free(o->ctrl[i]);
	free(o->socket);
	free(o->policy);
	free(o->audit);
	for (unsigned i = 0; i < o->nr_tcp; i++)
		free(o->nvme_tcp[i]);
}

/* Parents as mkdir -p makes them; the controller directory itself private. */
static int ctrl_dir_prepare(const char *dir)
{
	char buf[PATH_MAX];
	struct stat sb;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &sb))
		return -errno;
	if (!S_ISDIR(sb.st_mode)) {
		srv_log("%s is not a directory%s", dir,
			S_ISLNK(sb.st_mode) ? " (a symbolic link: name the directory itself)" : "");
		return -ENOTDIR;
	}
	/*
	 * The images are the raw data of every namespace: only the daemon's
	 * user may reach them, or the policy would bind nobody.
	 */
	if (sb.st_uid != geteuid() || (sb.st_mode & 077)) {
		srv_log("%s is owned by uid %u with mode %04o: it must be ucmdd's (uid %u), "
			"mode 0700", dir, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777),
			(unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

struct daemon_state {
	bool power_on;		/* --power-on: this start powers the devices on */
	struct srv_daemon d;
	struct ucmd_ctrl *ctrl[MAX_CTRLS];
	struct ucmd_nvme_host *host[MAX_CTRLS];
	/* a directory of several controllers: a head over them (Linux's multipath) */
	struct ucmd_nvme_subsys *subsys[MAX_CTRLS];
	struct nvmet_tcp_port *tcp[NVMET_TCP_MAX_PORTS];	/* --nvme-tcp, port i + 1 */
	unsigned nr_tcp;
	/*
	 * The first --ctrl directory, where the ports' ANA states are kept
	 * (server/ana_keep.h); -1 with none (--ram only: not kept). ana_lock
	 * makes a change and its save one step among the clients' threads.
	 */
	int keep_fd;
	pthread_mutex_t ana_lock;
	bool security;
	int lfd, sfd;
	bool own_socket;
};

/* --ram: a controller without a directory, one RAM namespace of 4 KiB blocks. */
static int ram_ctrl_up(struct daemon_state *s, uint64_t bytes, unsigned i,
		       const struct ucmd_nvme_host_opts *ho)
{
	/*
	 * SIZE is the controller's capacity too: a client that may manage
	 * namespaces can remake them within it, never make the daemon hold
	 * more memory than its command line said.
	 */
	struct ucmd_ctrl_params cp = { .mode = UCMD_CTRL_INLINE, .ram_capacity = bytes };
	struct ucmd_ns_params np = {
		.nsze = bytes / 4096,
		.lbaf = 4,	/* 4096+0 */
		.store = UCMD_NS_STORE_RAM,
		.attach = true,
	};
	int ret;

	ret = ucmd_ctrl_create(&cp, &s->ctrl[i]);
	if (ret) {
		srv_log("--ram: %s", ucmd_last_error());
		return ret;
	}
	ret = ucmd_ctrl_ns_create(s->ctrl[i], &np);
	if (ret < 0) {
		srv_log("--ram: the namespace: %s", strerror(-ret));
		return ret;
	}
	ret = ucmd_nvme_attach(s->d.e, s->ctrl[i], ho, &s->host[i]);
	if (ret)
		srv_log("--ram: attaching nvme%u: %s", i, ucmd_last_error());
	return ret;
}

static int ctrl_up(struct daemon_state *s, const char *dir, uint64_t ram, unsigned i, bool last)
{
	struct ucmd_ctrl_params cp = { 0 };
	struct ucmd_nvme_host_opts ho = { .instance = i };
	char err[512] = "";
	int ret;

	if (!dir)
		return ram_ctrl_up(s, ram, i, &ho);
	ret = ctrl_dir_prepare(dir);
	if (ret) {
		if (ret != -EPERM && ret != -ENOTDIR)
			srv_log("%s: %s", dir, strerror(-ret));
		return ret;
	}
	cp.dir = dir;
	cp.mode = UCMD_CTRL_INLINE;
	cp.errbuf = err;
	cp.errbuf_len = sizeof(err);
	/* with --power-on the daemon's start is the device's power on (docs/store.md) */
	cp.power_on = s->power_on;
	ret = ucmd_ctrl_create(&cp, &s->ctrl[i]);
	if (ret) {
		srv_log("%s: %s", dir, err[0] ? err : strerror(-ret));
		return ret;
	}
	/* a new directory gets a first namespace; one whose were all deleted keeps none */
	if (ucmd_ctrl_is_new(s->ctrl[i])) {
		struct ucmd_ns_params np = {
			.nsze = DEFAULT_NS_BYTES / 512,
			.store = UCMD_NS_STORE_FILE,
			.attach = true,
		};

		ret = ucmd_ctrl_ns_create(s->ctrl[i], &np);
		if (ret < 0) {
			srv_log("%s: the default namespace: %s", dir, strerror(-ret));
			return ret;
		}
	}
	if (ucmd_ctrl_controllers(s->ctrl[i]) > 1) {
		/* its controllers are nvme<i>, nvme<i+1>...: no later --ctrl may take those */
		if (!last) {
			srv_log("%s: a directory of %u controllers must be the last --ctrl", dir,
				ucmd_ctrl_controllers(s->ctrl[i]));
			return -EINVAL;
		}
		ret = ucmd_nvme_attach_multipath(s->d.e, s->ctrl[i], &ho, &s->subsys[i]);
	} else {
		ret = ucmd_nvme_attach(s->d.e, s->ctrl[i], &ho, &s->host[i]);
	}
	if (ret)
		srv_log("%s: attaching nvme%u: %s", dir, i, ucmd_last_error());
	return ret;
}

/* 0, or -errno when a controller's state could not be saved (said in the log) */
static int daemon_down(struct daemon_state *s, const struct opts *o)
{
	int ret = 0;

	if (s->lfd >= 0)
		close(s->lfd);
	if (s->own_socket)
		unlink(o->socket);
	/* NVMe/TCP connections end first: their commands finish in the engine */
	for (unsigned i = 0; i < o->nr_tcp; i++)
		nvmet_tcp_stop(s->tcp[i]);
	/* every client's rings drain and its connection closes */
	if (s->d.stop_fd >= 0)
		srv_clients_stop(&s->d);
	for (unsigned i = o->nr_ctrl; i-- > 0;) {
		if (s->host[i])
			ucmd_nvme_detach(s->host[i]);
		if (s->subsys[i])
			ucmd_nvme_subsys_detach(s->subsys[i]);
		/* saves the controller's state, flushes the images */
		if (s->ctrl[i] && ucmd_ctrl_destroy(s->ctrl[i])) {
			srv_log("nvme%u: %s", i, ucmd_last_error());
			ret = -EIO;
		}
	}
	if (s->security)
		ucmd_security_teardown(s->d.e);
	if (s->d.e)
		ucmd_engine_free(s->d.e);
	srv_quota_free(&s->d);
	if (s->sfd >= 0)
		close(s->sfd);
	if (s->keep_fd >= 0)
		close(s->keep_fd);
	return ret;
}

/* UCMDD_ANA_STATE: the port's group state, set when state is not 0 */
static int ana_state(struct srv_daemon *d, uint32_t port, uint32_t grpid, uint32_t state)
{
	struct daemon_state *s = (struct daemon_state *)((char *)d - offsetof(struct daemon_state, d));
	int ret;

	if (!port || port > s->nr_tcp)
		return -ENODEV;
	if (state > 0xff)
		return -EINVAL;
	if (state && s->keep_fd >= 0) {
		/* kept before it is made: a change the next start would not find is none */
		uint8_t st[NVMET_TCP_MAX_PORTS][ANA_KEEP_GRPS];

		if (!grpid || grpid > ANA_KEEP_GRPS || !nvmet_tcp_ana_state_name((uint8_t)state))
			return -EINVAL;
		pthread_mutex_lock(&s->ana_lock);
		for (unsigned p = 0; p < s->nr_tcp; p++)
			for (unsigned g = 0; g < ANA_KEEP_GRPS; g++)
				st[p][g] = nvmet_tcp_ana_get(s->tcp[p], g + 1);
		st[port - 1][grpid - 1] = (uint8_t)state;
		ret = ana_keep_save(s->keep_fd, st, s->nr_tcp);
		if (ret)
			srv_log("nvme-tcp: port %u: keeping its ANA state in %s: %s", port,
				ANA_KEEP_FILE, strerror(-ret));
		else
			ret = nvmet_tcp_ana_set(s->tcp[port - 1], grpid, (uint8_t)state);
		pthread_mutex_unlock(&s->ana_lock);
		if (ret)
			return ret;
		return nvmet_tcp_ana_get(s->tcp[port - 1], grpid);
	}
	ret = state ? nvmet_tcp_ana_set(s->tcp[port - 1], grpid, (uint8_t)state) : 0;
	if (!ret && !(ret = nvmet_tcp_ana_get(s->tcp[port - 1], grpid)))
		ret = -EINVAL;	/* no such group */
	return ret;
}

/*
 * The ports' ANA states as the last run left them (ucmdd-ports.json in the
 * first --ctrl directory), before any host connects. A file that is not
 * ucmdd's stops the start: 0 or -errno (said in the log).
 */
static int ana_restore(struct daemon_state *s, const struct opts *o)
{
	uint8_t st[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS];
	const char *dir = NULL;
	char err[256] = "";
	int ret;

	for (unsigned i = 0; i < o->nr_ctrl && !dir; i++)
		dir = o->ctrl[i];
	if (!dir || !o->nr_tcp)
		return 0;
	s->keep_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->keep_fd < 0) {
		ret = -errno;
		srv_log("%s: %s", dir, strerror(-ret));
		return ret;
	}
	ret = ana_keep_load(s->keep_fd, st, err, sizeof(err));
	if (ret) {
		srv_log("%s/%s: %s (remove it to start with every port optimized)", dir,
			ANA_KEEP_FILE, err[0] ? err : strerror(-ret));
		return ret;
	}
	/* a port not given this time is forgotten at the next change */
	for (unsigned p = 0; p < s->nr_tcp; p++)
		for (unsigned g = 0; g < ANA_KEEP_GRPS; g++)
			if (st[p][g] && (ret = nvmet_tcp_ana_set(s->tcp[p], g + 1, st[p][g])))
				return ret;
	return 0;
}

/* UCMDD_PORT_STATE: the port taken down or brought back, when state is not 0 */
static int port_state(struct srv_daemon *d, uint32_t port, uint32_t state)
{
	struct daemon_state *s = (struct daemon_state *)((char *)d - offsetof(struct daemon_state, d));
	int ret = 0;

	if (!port || port > s->nr_tcp)
		return -ENODEV;
	if (state)
		ret = nvmet_tcp_port_enable(s->tcp[port - 1], state == UCMDD_PORT_UP);
	if (ret)
		return ret;
	return nvmet_tcp_port_enabled(s->tcp[port - 1]) ? UCMDD_PORT_UP : UCMDD_PORT_DOWN;
}

/*
 * UCMDD_CTRL_ANA_STATE: controller nvmeX, the first --ctrl's controllers
 * from nvme0, a directory of several taking nvmeX..nvmeX+N-1 (ctrl_up)
 */
static int ctrl_ana_state(struct srv_daemon *d, const char *name, uint32_t grpid, uint32_t state)
{
	struct daemon_state *s = (struct daemon_state *)((char *)d - offsetof(struct daemon_state, d));
	unsigned long x;
	char *end;

	if (strncmp(name, "nvme", 4) || !isdigit((unsigned char)name[4]))
		return -ENODEV;
	x = strtoul(name + 4, &end, 10);
	if (*end)
		return -ENODEV;
	/* --ctrl i is nvme<i>; a directory of n controllers (the last) nvme<i>..nvme<i+n-1> */
	for (unsigned i = 0; i < MAX_CTRLS && s->ctrl[i]; i++)
		if (x >= i && x - i < ucmd_ctrl_controllers(s->ctrl[i]))
			return ucmd_ctrl_ana_state(ucmd_ctrl_controller(s->ctrl[i], (unsigned)(x - i)),
						   grpid, state);
	return -ENODEV;
}

static int daemon_up(struct daemon_state *s, const struct opts *o, int lfd)
{
	char err[512];
	int ret;

	s->lfd = lfd;
	s->d.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s->d.stop_fd < 0)
		return -errno;
	ret = srv_quota_init(&s->d, &o->lim);
	if (ret)
		return ret;
	ret = ucmd_engine_create(&s->d.e);
	if (ret) {
		srv_log("%s", ucmd_last_error());
		return ret;
	}
	/* the policy before any controller: no device exists unjudged */
	ret = ucmd_security_setup(s->d.e, o->policy, o->audit, err, sizeof(err));
	if (ret) {
		srv_log("%s", err);
		return ret;
	}
	s->security = true;
	for (unsigned i = 0; i < o->nr_ctrl; i++) {
		s->power_on = o->power_on;
		ret = ctrl_up(s, o->ctrl[i], o->ram[i], i, i + 1 == o->nr_ctrl);
		if (ret)
			return ret;
	}
	/* each listener is a port of every subsystem: port i + 1 */
	for (unsigned p = 0; p < o->nr_tcp; p++) {
		unsigned inst[MAX_CTRLS];

		for (unsigned i = 0; i < o->nr_ctrl; i++)
			inst[i] = i;
		ret = nvmet_tcp_start(s->d.e, o->nvme_tcp[p], p + 1, inst, o->nr_ctrl, srv_log,
				 &s->tcp[p], err, sizeof(err));
		if (ret) {
			srv_log("%s", err);
			return ret;
		}
	}
	s->nr_tcp = o->nr_tcp;
	if ((ret = ana_restore(s, o)))
		return ret;
	s->d.ana_state = ana_state;
	s->d.port_state = port_state;
	s->d.ctrl_ana_state = ctrl_ana_state;
	if (s->lfd < 0) {
		s->lfd = srv_listen_path(o->socket, (mode_t)o->socket_mode, o->socket_gid);
		if (s->lfd < 0) {
			ret = s->lfd;
			srv_log("%s: %s%s", o->socket, strerror(-ret),
				ret == -EADDRINUSE ? " (another ucmdd answers there)"
				: ret == -EEXIST ? " (not a socket: not replacing it)" : "");
			return ret;
		}
		s->own_socket = true;
	}
	return 0;
}

static void serve(struct daemon_state *s, const struct opts *o)
{
	bool accepting = true;

	for (;;) {
		struct pollfd pf[2] = {
			{ .fd = s->sfd, .events = POLLIN },
			{ .fd = accepting ? s->lfd : -1, .events = POLLIN },
		};
		struct signalfd_siginfo si;

		if (poll(pf, 2, accepting ? -1 : 100) < 0) {
			if (errno == EINTR)
				continue;
			srv_log("poll: %s", strerror(errno));
			return;
		}
		accepting = true;
		if (pf[1].revents) {
			int ret = srv_accept(&s->d, s->lfd);

			/*
			 * Out of descriptors or memory: the connection waits in
			 * the backlog; stop polling the socket for a moment
			 * rather than spin on it.
			 */
			if (ret == -EMFILE || ret == -ENFILE || ret == -ENOMEM || ret == -ENOBUFS)
				accepting = false;
		}
		if (!pf[0].revents)
			continue;
		if (read(s->sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			char err[512];
			int ret = ucmd_security_reload(s->d.e, o->policy, err, sizeof(err));

			if (ret)
				srv_log("SIGHUP: the policy stays as it was: %s", err);
			else
				srv_log("SIGHUP: policy reloaded from %s",
					o->policy ? o->policy : "the default");
			continue;
		}
		srv_log("signal %d: stopping", (int)si.ssi_signo);
		return;
	}
}

/*
 * Detach before anything starts a thread (the engine's and the
 * controllers' do not survive fork). The parent waits for the child to
 * report its set-up, so that `ucmdd` returns only once clients can
 * connect, with the set-up's error as its exit status.
 */
static int detach(int *report)
{
	int p[2], status = 1;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &status, sizeof(status)) != sizeof(status))
			status = 1;
		_exit(status);
	}
	close(p[0]);
	setsid();
	*report = p[1];
	return 0;
}

static void report_up(int report, int status)
{
	int null;

	if (report < 0)
		return;
	if (!status) {
		/* from now on messages go to syslog */
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			close(null);
		}
		srv_log_to_syslog();
	}
	if (write(report, &status, sizeof(status)) != sizeof(status))
		srv_log("reporting to the parent: %s", strerror(errno));
	close(report);
}

static int run(int argc, char **argv, struct opts *o);

/*
 * Free heap kept by each malloc arena before it is given back. A ring
 * thread allocates a bounce buffer per request it takes and frees it at
 * completion; with glibc's default (128 KiB, or a dynamic one) a pass that
 * took 32 reads of 4 KiB crossed it, and every such pass ended in an
 * madvise(MADV_DONTNEED) of the arena's top (a TLB shootdown on every CPU)
 * and the next one in page faults and zeroing the pages again: perf put
 * most of ucmdd's time of fio's batch-8 job under exec there once the
 * client's submit stopped waiting for the ring thread (passes of many
 * SQEs). What is kept is memory a pass used; 8 MiB per arena holds QD256
 * of 32 KiB bounces.
 */
#define UCMDD_HEAP_KEEP (8 << 20)

int main(int argc, char **argv)
{
	struct opts o = { .socket_gid = (gid_t)-1, .socket_mode = -1, .lim = srv_limits_default };
	int ret;

	(void)mallopt(M_TRIM_THRESHOLD, UCMDD_HEAP_KEEP);
	ret = run(argc, argv, &o);

	opts_free(&o);
	return ret;
}

static int run(int argc, char **argv, struct opts *op)
{
	struct daemon_state s = { .lfd = -1, .sfd = -1, .d.stop_fd = -1, .keep_fd = -1,
				  .ana_lock = PTHREAD_MUTEX_INITIALIZER };
	sigset_t set;
	int ret, lfd, report = -1;

	ret = parse(argc, argv, op);
	if (ret >= 0)
		return ret;
	lfd = srv_listen_systemd();
	if (lfd == -EINVAL) {
		fprintf(stderr, "ucmdd: systemd passed sockets other than one listening "
			"SOCK_SEQPACKET Unix socket (check ucmdd.socket)\n");
		return 1;
	}
	if (lfd < 0 && !op->socket) {
		fprintf(stderr, "ucmdd: no --socket PATH, and no socket from systemd (ucmdd --help)\n");
		return 2;
	}
	if (!op->foreground && (ret = detach(&report))) {
		fprintf(stderr, "ucmdd: detaching: %s\n", strerror(-ret));
		return 1;
	}
	/* signals arrive through signalfd; every thread inherits the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	s.sfd = signalfd(-1, &set, SFD_CLOEXEC);
	pthread_mutex_init(&s.d.lock, NULL);
	pthread_cond_init(&s.d.gone, NULL);
	atomic_init(&s.d.stopping, false);
	ret = s.sfd < 0 ? -errno : daemon_up(&s, op, lfd);
	if (ret) {
		report_up(report, 1);
		daemon_down(&s, op);
		return 1;
	}
	if (chdir("/"))
		srv_log("chdir /: %s", strerror(errno));
	srv_log("serving %u controller%s on %s%s%s", op->nr_ctrl, op->nr_ctrl == 1 ? "" : "s",
		op->socket ? op->socket : "the socket systemd passed",
		op->nr_tcp ? " and NVMe/TCP at " : "", op->nr_tcp ? op->nvme_tcp[0] : "");
	for (unsigned i = 1; i < op->nr_tcp; i++)
		srv_log("NVMe/TCP port %u at %s", i + 1, op->nvme_tcp[i]);
	report_up(report, 0);
	serve(&s, op);
	if (daemon_down(&s, op)) {
		/* a service manager must see it: a restart recovers from what is on disk */
		srv_log("stopped; controller state not saved");
		return 1;
	}
	srv_log("stopped");
	return 0;
}
