// SPDX-License-Identifier: MIT
/*
 * The NVMe/TCP target's listener, its subsystems (one per ucmdd controller,
 * named by the controller's own subsystem NQN) and its fabrics controllers:
 * Connect on an admin queue makes one, with a controller ID, and the I/O
 * queues' Connects name it again (NVMe-oF 1.1 section 3.3).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/nvme_ioctl.h>

#include "nvme/target/tcp.h"
#include "ucmd/ucmd.h"

uint64_t nvmet_tcp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static const struct nvmet_tcp_limits default_limits = {
	.icreq_ms = 10000,
	.connect_ms = 10000,
	.send_ms = 30000,
	.kato0_ms = 120000,
	.max_conns = NVMET_TCP_MAX_CONNS,
	.max_ctrls = NVMET_TCP_MAX_CTRLS,
	/* two associations of a host using every I/O queue (NVMET_TCP_MAX_IO_QUEUES + 1 each) */
	.peer_conns = 2 * (NVMET_TCP_MAX_IO_QUEUES + 1),
	.peer_ctrls = 16,
};

/* ",KEY=VALUE" settings after the address: 0 or -EINVAL. */
static int parse_limits(const char *s, struct nvmet_tcp_limits *lim)
{
	static const struct {
		const char *key;
		size_t off;
		bool seconds;
		unsigned long max;
	} keys[] = {
		{ "icreq_timeout", offsetof(struct nvmet_tcp_limits, icreq_ms), true, 3600 },
		{ "connect_timeout", offsetof(struct nvmet_tcp_limits, connect_ms), true, 3600 },
		{ "send_timeout", offsetof(struct nvmet_tcp_limits, send_ms), true, 3600 },
		{ "kato0", offsetof(struct nvmet_tcp_limits, kato0_ms), true, 3600 },
		{ "max_conns", offsetof(struct nvmet_tcp_limits, max_conns), false, NVMET_TCP_MAX_CONNS },
		{ "max_assocs", offsetof(struct nvmet_tcp_limits, max_ctrls), false, NVMET_TCP_MAX_CTRLS },
		{ "conns_per_peer", offsetof(struct nvmet_tcp_limits, peer_conns), false, NVMET_TCP_MAX_CONNS },
		{ "assocs_per_peer", offsetof(struct nvmet_tcp_limits, peer_ctrls), false, NVMET_TCP_MAX_CTRLS },
	};

	*lim = default_limits;
	while (s && *s == ',') {
		const char *eq = strchr(++s, '='), *end = strchr(s, ',');
		size_t klen = eq ? (size_t)(eq - s) : 0;
		unsigned long v;
		unsigned i;
		char *e;

		if (!end)
			end = s + strlen(s);
		if (!eq || eq > end)
			return -EINVAL;
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strlen(keys[i].key) == klen && !strncmp(s, keys[i].key, klen))
				break;
		if (i == sizeof(keys) / sizeof(keys[0]) || !isdigit((unsigned char)eq[1]))
			return -EINVAL;
		errno = 0;
		v = strtoul(eq + 1, &e, 10);
		if (errno || e != end || !v || v > keys[i].max)
			return -EINVAL;
		*(uint32_t *)(void *)((char *)lim + keys[i].off) =
			(uint32_t)(keys[i].seconds ? v * 1000 : v);
		s = end;
	}
	return s && *s ? -EINVAL : 0;
}

int nvmet_tcp_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	return nvmet_tcp_parse(s, ss, len, NULL);
}

int nvmet_tcp_parse(const char *arg, struct sockaddr_storage *ss, socklen_t *len,
	       struct nvmet_tcp_limits *lim)
{
	struct nvmet_tcp_limits scratch;
	char host[64], addr[128];
	const char *s = addr, *comma = strchr(arg, ',');
	size_t al = comma ? (size_t)(comma - arg) : strlen(arg);
	const char *port = NULL, *end;
	unsigned long p = NVME_TCP_DEFAULT_PORT;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (al >= sizeof(addr) || parse_limits(comma, lim ? lim : &scratch))
		return -EINVAL;
	memcpy(addr, arg, al);
	addr[al] = 0;
	if (s[0] == '[') {	/* [v6]:port */
		end = strchr(s, ']');
		if (!end)
			return -EINVAL;
		hl = (size_t)(end - s - 1);
		s++;
		if (end[1] == ':')
			port = end + 2;
		else if (end[1])
			return -EINVAL;
	} else {
		end = strrchr(s, ':');
		hl = end ? (size_t)(end - s) : strlen(s);
		if (end)
			port = end + 1;
	}
	if (!hl || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = 0;
	if (port) {
		char *e;

		errno = 0;
		p = strtoul(port, &e, 10);
		if (errno || *e || !*port || !p || p > 65535)
			return -EINVAL;
	}
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)p);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

int nvmet_tcp_subsys_find(struct nvmet_tcp_port *t, const char *nqn)
{
	if (!strcmp(nqn, NVME_DISC_SUBSYS_NAME))
		return -1;
	for (unsigned i = 0; i < t->nr_subsys; i++)
		if (!strcmp(nqn, t->subsys[i].nqn))
			return (int)i;
	return -2;
}

struct nvmet_tcp_ctrl *nvmet_tcp_ctrl_new(struct nvmet_tcp_conn *conn, int subsys, const char *hostnqn,
				const uint8_t hostid[16], uint32_t kato_ms)
{
	struct nvmet_tcp_port *t = conn->t;
	struct nvmet_tcp_ctrl *c = calloc(1, sizeof(*c));
	unsigned all = 0, mine = 0;

	if (!c)
		return NULL;
	c->t = t;
	c->subsys = subsys;
	snprintf(c->hostnqn, sizeof(c->hostnqn), "%s", hostnqn);
	memcpy(c->hostid, hostid, 16);
	snprintf(c->owner, sizeof(c->owner), "%s", conn->owner);
	c->root = conn->root;
	c->kato_ms = kato_ms;
	c->refs = 1;
	atomic_init(&c->dead, false);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_lock(&t->lock);
	/* everyone's but root's count against max_ctrls; root has NVMET_TCP_ROOT_CTRLS more */
	for (unsigned i = 0; i < NVMET_TCP_MAX_CTRLS + NVMET_TCP_ROOT_CTRLS; i++) {
		const struct nvmet_tcp_ctrl *o = t->ctrls[i];

		if (!o || o->root)
			continue;
		all++;
		mine += !strcmp(o->owner, c->owner);
	}
	/*
	 * any free slot: the others' count stays within max_ctrls, so root
	 * always finds NVMET_TCP_ROOT_CTRLS of them
	 */
	if (c->root || (all < t->lim.max_ctrls && mine < t->lim.peer_ctrls)) {
		for (unsigned i = 0; i < NVMET_TCP_MAX_CTRLS + NVMET_TCP_ROOT_CTRLS; i++) {
			if (!t->ctrls[i]) {
				t->ctrls[i] = c;
				c->cntlid = (uint16_t)(t->cntlid_base + i + 1);
				break;
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (!c->cntlid) {
		if (t->log)
			t->log("nvme-tcp: %s from %s (%s): no association: %s", hostnqn, conn->peer,
			       c->owner, mine >= t->lim.peer_ctrls ? "assocs_per_peer reached" :
			       "max_assocs reached");
		pthread_mutex_destroy(&c->lock);
		free(c);
		return NULL;
	}
	return c;
}

struct nvmet_tcp_ctrl *nvmet_tcp_ctrl_get(struct nvmet_tcp_port *t, uint16_t cntlid, int subsys, const char *hostnqn,
				const uint8_t hostid[16])
{
	struct nvmet_tcp_ctrl *c = NULL;

	/* another port's controller is not this one's: a host connects its queues where its admin queue is */
	if (cntlid <= t->cntlid_base || cntlid > t->cntlid_base + NVMET_TCP_MAX_CTRLS + NVMET_TCP_ROOT_CTRLS)
		return NULL;
	pthread_mutex_lock(&t->lock);
	c = t->ctrls[cntlid - t->cntlid_base - 1];
	if (c && (c->subsys != subsys || strcmp(c->hostnqn, hostnqn) ||
		  memcmp(c->hostid, hostid, 16) || atomic_load(&c->dead)))
		c = NULL;
	if (c)
		c->refs++;
	pthread_mutex_unlock(&t->lock);
	return c;
}

void nvmet_tcp_ctrl_put(struct nvmet_tcp_ctrl *c)
{
	struct nvmet_tcp_port *t = c->t;
	bool last;

	pthread_mutex_lock(&t->lock);
	last = --c->refs == 0;
	if (last && t->ctrls[c->cntlid - t->cntlid_base - 1] == c)
		t->ctrls[c->cntlid - t->cntlid_base - 1] = NULL;
	pthread_mutex_unlock(&t->lock);
	if (last) {
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
}

static void *listener_main(void *arg)
{
	struct nvmet_tcp_port *t = arg;

	for (;;) {
		struct pollfd pf[2] = {
			{ .fd = t->lfd, .events = POLLIN },
			{ .fd = t->stop_fd, .events = POLLIN },
		};
		int s;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents || atomic_load(&t->stopping) || atomic_load(&t->disabled))
			break;
		if (!pf[0].revents)
			continue;
		s = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0) {
			/* out of descriptors: let the backlog wait rather than spin */
			if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS)
				poll(NULL, 0, 100);
			continue;
		}
		if (nvmet_tcp_conn_start(t, s))
			close(s);
	}
	return NULL;
}

/* The subsystem NQN of nvme<instance>, from its Identify Controller. */
static int subsys_nqn(struct ucmd_engine *e, unsigned instance, char *nqn, size_t len)
{
	struct nvme_passthru_cmd64 cmd = { 0 };
	char name[32];
	uint8_t *id;
	int fd, ret;

	snprintf(name, sizeof(name), "nvme%u", instance);
	fd = ucmd_open(e, name, O_RDONLY);
	if (fd < 0)
		return fd;
	id = calloc(1, 4096);
	if (!id) {
		ucmd_close(e, fd);
		return -ENOMEM;
	}
	cmd.opcode = 0x06;	/* Identify */
	cmd.cdw10 = 1;		/* CNS 01h: the controller */
	cmd.addr = (uint64_t)(uintptr_t)id;
	cmd.data_len = 4096;
	ret = ucmd_ioctl(e, fd, NVME_IOCTL_ADMIN64_CMD, &cmd);
	if (ret > 0)
		ret = -EIO;
	if (!ret) {
		const struct nvme_id_ctrl *ic = (const void *)id;

		snprintf(nqn, len, "%.*s", (int)sizeof(ic->subnqn), ic->subnqn);
		if (!nqn[0])	/* before NVMe 1.2.1 it may be empty: make one */
			snprintf(nqn, len, "nqn.2024-01.io.ucmd:nvme%u", instance);
	}
	free(id);
	ucmd_close(e, fd);
	return ret;
}

int nvmet_tcp_start(struct ucmd_engine *e, const char *addr, unsigned portid,
	       const unsigned *instances, unsigned nr, void (*log)(const char *fmt, ...),
	       struct nvmet_tcp_port **out, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct nvmet_tcp_port *t;
	int ret;

	struct nvmet_tcp_limits lim;

	if (nvmet_tcp_parse(addr, &ss, &sl, &lim)) {
		snprintf(err, errlen, "--nvme-tcp %s: ADDR[:PORT][,KEY=VALUE...] expected (IPv6 in "
			 "brackets)", addr);
		return -EINVAL;
	}
	if (!portid || portid > NVMET_TCP_MAX_PORTS) {
		snprintf(err, errlen, "--nvme-tcp %s: at most %u listeners", addr, NVMET_TCP_MAX_PORTS);
		return -EINVAL;
	}
	if (nr > NVMET_TCP_MAX_SUBSYS)
		nr = NVMET_TCP_MAX_SUBSYS;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->lim = lim;
	t->e = e;
	t->log = log;
	t->lfd = -1;
	t->genctr = 1;
	t->portid = (uint16_t)portid;
	t->cntlid_base = (uint16_t)((portid - 1) * (NVMET_TCP_MAX_CTRLS + NVMET_TCP_ROOT_CTRLS));
	nvmet_tcp_ana_init(t);
	atomic_init(&t->stopping, false);
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->gone, NULL);
	for (unsigned i = 0; i < nr; i++) {
		t->subsys[i].instance = instances[i];
		ret = subsys_nqn(e, instances[i], t->subsys[i].nqn, sizeof(t->subsys[i].nqn));
		if (ret) {
			snprintf(err, errlen, "--nvme-tcp: the subsystem NQN of nvme%u: %s",
				 instances[i], strerror(-ret));
			goto fail;
		}
		/*
		 * Controllers that report the same NQN (the same serial: every
		 * --ram controller has UCMD0001) would be one subsystem to a host,
		 * their namespaces paths of the same ones: the later ones get the
		 * controller's number appended, and Identify says so too.
		 */
		for (unsigned j = 0; j < i; j++) {
			if (strcmp(t->subsys[j].nqn, t->subsys[i].nqn))
				continue;
			size_t l = strnlen(t->subsys[i].nqn, NVMF_NQN_SIZE - 12);

			snprintf(t->subsys[i].nqn + l, sizeof(t->subsys[i].nqn) - l, ":nvme%u",
				 instances[i]);
			if (log)
				log("nvme-tcp: nvme%u reports nvme%u's subsystem NQN: exported as %s",
				    instances[i], instances[j], t->subsys[i].nqn);
			break;
		}
		t->nr_subsys++;
	}
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, t->traddr,
			  sizeof(t->traddr));
		snprintf(t->trsvcid, sizeof(t->trsvcid), "%u",
			 ntohs(((struct sockaddr_in *)&ss)->sin_port));
		t->adrfam = NVMF_ADDR_FAMILY_IP4;
	} else {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, t->traddr,
			  sizeof(t->traddr));
		snprintf(t->trsvcid, sizeof(t->trsvcid), "%u",
			 ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
		t->adrfam = NVMF_ADDR_FAMILY_IP6;
	}
	t->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (t->stop_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "--nvme-tcp: eventfd: %s", strerror(errno));
		goto fail;
	}
	t->ss = ss;
	t->sl = sl;
	pthread_mutex_init(&t->state_lock, NULL);
	ret = nvmet_tcp_listen(t);
	if (ret) {
		snprintf(err, errlen, "--nvme-tcp %s: %s", addr, strerror(-ret));
		pthread_mutex_destroy(&t->state_lock);
		goto fail;
	}
	*out = t;
	return 0;
fail:
	if (t->stop_fd >= 0)
		close(t->stop_fd);
	free(t);
	return ret;
}

int nvmet_tcp_listen(struct nvmet_tcp_port *t)
{
	int one = 1, ret;

	t->lfd = socket(t->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->lfd < 0)
		return -errno;
	setsockopt(t->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(t->lfd, (struct sockaddr *)&t->ss, t->sl) || listen(t->lfd, 64)) {
		ret = -errno;
		goto fail;
	}
	ret = -pthread_create(&t->listener, NULL, listener_main, t);
	if (!ret)
		return 0;
fail:
	close(t->lfd);
	t->lfd = -1;
	return ret;
}

void nvmet_tcp_stop(struct nvmet_tcp_port *t)
{
	uint64_t one = 1;

	if (!t)
		return;
	pthread_mutex_lock(&t->state_lock);
	atomic_store(&t->stopping, true);
	if (write(t->stop_fd, &one, sizeof(one)) != sizeof(one))
		abort();	/* an eventfd write of 1 cannot fail */
	/* a port taken down has no listener */
	if (t->lfd >= 0) {
		pthread_join(t->listener, NULL);
		close(t->lfd);
	}
	pthread_mutex_unlock(&t->state_lock);
	pthread_mutex_destroy(&t->state_lock);
	/* every connection sees stop_fd, fails its sends and ends */
	nvmet_tcp_port_drop_conns(t);
	close(t->stop_fd);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->gone);
	free(t);
}
