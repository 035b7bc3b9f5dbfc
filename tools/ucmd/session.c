/* SPDX-License-Identifier: MIT */
/*
 * The embedded default: a controller living in a directory, attached to an
 * engine through the host driver. A directory is made (with one
 * file-backed namespace) only when the caller asks: the default directory
 * on first use, --create, create-ctrl; a controller whose namespaces were
 * all deleted keeps none. Every command then goes through a ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nvme/types.h>

#include "cli.h"
#include "ucmd/ctrl.h"
#include "ucmd/daemon.h"
#include "ucmd/kernel.h"
#include "ucmd/nvme.h"
#include "ucmd/security.h"

const char *session_hostnqn;
const struct ucmd_ns_params *session_bootstrap_ns;
const struct ucmd_fdp_params *session_bootstrap_fdp;
unsigned session_bootstrap_controllers;

/* Parents as mkdir -p makes them; the controller directory itself private (0700). */
static int mkdir_p(const char *dir)
{
	char buf[4096];

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
	return 0;
}

/*
 * A command that only reads opens an existing controller read-only: a
 * shared lock, nothing written, so a full or read-only directory still
 * reads. A directory without ctrl.json is opened read-write, to create the
 * default controller (or to be refused, when it holds images).
 */
static bool use_read_only(const char *dir, bool only_reads)
{
	char path[4096];
	struct stat sb;

	if (!only_reads || snprintf(path, sizeof(path), "%s/ctrl.json", dir) >= (int)sizeof(path))
		return false;
	return lstat(path, &sb) == 0;
}

int session_passthru(struct session *s, bool admin, const struct nvme_uring_cmd *cmd,
		     uint64_t *result)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(&s->ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	ucmd_prep_nvme_cmd(sqe, admin ? s->ctrl_fd : s->ns_fd,
			   admin ? NVME_URING_CMD_ADMIN : NVME_URING_CMD_IO, cmd);
	ret = ucmd_submit_and_wait(&s->ring, 1);
	if (ret < 0)
		return ret;
	ret = ucmd_wait_cqe(&s->ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	if (result)
		*result = cqe->big_cqe[0];
	ucmd_cqe_seen(&s->ring, cqe);
	return ret;
}

/* Identify Namespace: LBA data and metadata size of the format in use. */
int session_namespace_info(struct session *s, uint32_t nsid)
{
	struct nvme_id_ns *id = aligned_alloc(4096, sizeof(*id));
	struct nvme_uring_cmd c = { 0 };
	int ret;

	if (!id)
		return -ENOMEM;
	c.opcode = nvme_admin_identify;
	c.nsid = nsid;
	c.addr = (uint64_t)(uintptr_t)id;
	c.data_len = sizeof(*id);
	c.cdw10 = NVME_IDENTIFY_CNS_NS;
	ret = session_passthru(s, true, &c, NULL);
	if (ret == 0) {
		unsigned idx = (id->flbas & 0xf) | (((id->flbas >> 5) & 3) << 4);
		s->lba_size = 1u << id->lbaf[idx].ds;
		s->meta_size = id->lbaf[idx].ms;
		s->lbaf = (uint8_t)idx;
		s->extended = id->flbas & NVME_NS_FLBAS_META_EXT;
		s->nsze = id->nsze;
		if (!s->nsze)
			ret = -ENXIO;	/* not an active namespace */
	}
	free(id);
	return ret;
}

static bool has_ctrl(const char *dir)
{
	char path[4096];
	struct stat sb;

	return snprintf(path, sizeof(path), "%s/ctrl.json", dir) < (int)sizeof(path) &&
	       lstat(path, &sb) == 0;
}

const char *session_devname(const struct session *s, char *buf, size_t len)
{
	snprintf(buf, len, "nvme0n%u", s->nsid);
	return buf;
}

/*
 * --ctrl URL,URL[,...]: controllers of one subsystem, one namespace head
 * over them (Linux's native multipath): ng0nY and nvme0nY are the head's.
 */
static int session_attach_multipath(struct session *s, const char *list,
				    const struct ucmd_nvme_host_opts *ho,
				    const struct ucmd_nvme_tcp_opts *to)
{
	const char *urls[8];
	char *copy = strdup(list), *save = NULL, *tok;
	unsigned n = 0;
	int ret;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == 8) {
			free(copy);
			fprintf(stderr, "ucmd: more than 8 nvme-tcp:// paths\n");
			s->reported = true;
			return -EINVAL;
		}
		urls[n++] = tok;
	}
	ret = ucmd_nvme_attach_tcp_multipath(s->e, urls, n, ho, to, &s->subsys);
	free(copy);
	return ret;
}

int session_open(struct session *s, const char *dir, uint32_t nsid, const char *policy,
		 const char *audit, bool only_reads, uint64_t bootstrap_blocks)
{
	bool created = false;
	struct ucmd_ctrl_params cp = { 0 };
	struct ucmd_nvme_host_opts ho = { 0 };
	struct io_uring_params p = { 0 };
	char name[32];
	int ret;

	bool tcp = !strncmp(dir, "nvme-tcp://", 11);

	memset(s, 0, sizeof(*s));
	s->ctrl_fd = s->ns_fd = -1;
	s->dir = dir;
	/* --ctrl nvme-tcp://HOST:PORT/SUBNQN: a remote controller, no directory */
	if (!tcp && !has_ctrl(dir)) {
		struct stat sb;

		/* there may well be one, in a directory not ours to enter */
		if (errno == EACCES) {
			bool st = !stat(dir, &sb);

			fprintf(stderr, "ucmd: %s: permission denied%s", dir,
				st ? "" : " (a directory on the way is not ours to enter)\n");
			if (st)
				fprintf(stderr, " (mode %04o, owner uid %u; this is uid %u): run as "
					"its owner, or reach it through its owner's ucmdd\n",
					(unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid,
					(unsigned)getuid());
			s->reported = true;
			return -EACCES;
		}
		if (!bootstrap_blocks) {
			fprintf(stderr, "ucmd: %s: no controller there (%s); --create or "
				"`ucmd --ctrl %s create-ctrl` makes one\n", dir,
				stat(dir, &sb) ? "no such directory" : "no ctrl.json", dir);
			s->reported = true;
			return -ENOENT;
		}
		created = true;
	}
	cp.read_only = !tcp && use_read_only(dir, only_reads);
	ret = cp.read_only || tcp ? 0 : mkdir_p(dir);
	if (ret)
		return ret;
	ret = ucmd_engine_create(&s->e);
	if (ret)
		return ret;
	/*
	 * Security first, before any ring exists: with no --policy the
	 * default policy is Linux's own nvme_cmd_allowed() rules.
	 */
	char err[512];
	ret = ucmd_security_setup(s->e, policy, audit, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s\n", err);
		s->reported = true;
		return ret;
	}
	s->security = true;
	if (tcp && strchr(dir, ',')) {
		struct ucmd_nvme_tcp_opts to = { .hostnqn = session_hostnqn };

		ret = session_attach_multipath(s, dir, &ho, &to);
		if (ret) {
			fprintf(stderr, "ucmd: %s\n", ucmd_last_error());
			s->reported = true;
			return ret;
		}
		goto attached;
	}
	if (tcp) {
		struct ucmd_nvme_tcp_opts to = { .hostnqn = session_hostnqn };

		ret = ucmd_nvme_attach_tcp(s->e, dir, &ho, &to, &s->host);
		if (ret) {
			fprintf(stderr, "ucmd: %s\n", ucmd_last_error());
			s->reported = true;
			return ret;
		}
		goto attached;
	}
	cp.dir = dir;
	cp.mode = UCMD_CTRL_INLINE;
	cp.errbuf = err;
	cp.errbuf_len = sizeof(err);
	if (session_bootstrap_fdp)
		cp.fdp = *session_bootstrap_fdp;
	cp.controllers = (uint8_t)session_bootstrap_controllers;
	err[0] = 0;
	ret = ucmd_ctrl_create(&cp, &s->ctrl);
	if (ret) {
		/* which file and check or field, before main's errno line */
		if (err[0])
			fprintf(stderr, "ucmd: %s\n", err);
		/* main's errno line adds the errno to a cause, unless it says it already */
		s->reported = err[0] && ret < 0 && strstr(err, strerror(-ret));
		return ret;
	}
	/* only a controller made now gets its first namespace */
	if (created && ucmd_ctrl_ns_count(s->ctrl) == 0) {
		struct ucmd_ns_params np = {
			.nsze = bootstrap_blocks,
			.lbaf = 0,
			.store = UCMD_NS_STORE_FILE,
			.attach = true,
		};

		if (session_bootstrap_ns) {
			np.lbaf = session_bootstrap_ns->lbaf;
			np.zoned = session_bootstrap_ns->zoned;
		}
		ret = ucmd_ctrl_ns_create(s->ctrl, &np);
		if (ret < 0) {
			if (err[0])
				fprintf(stderr, "ucmd: %s\n", err);
			return ret;
		}
	}
	/* a subsystem of several controllers: a head over them, as Linux's multipath */
	if (ucmd_ctrl_controllers(s->ctrl) > 1)
		ret = ucmd_nvme_attach_multipath(s->e, s->ctrl, &ho, &s->subsys);
	else
		ret = ucmd_nvme_attach(s->e, s->ctrl, &ho, &s->host);
	if (ret)
		return ret;
attached:
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	ret = ucmd_queue_init_engine(s->e, 64, &s->ring, &p);
	if (ret)
		return ret;
	/* the controller device of the first path attached (one may be retried) */
	snprintf(name, sizeof(name), "nvme0");
	for (unsigned i = 0; s->subsys && i < 8; i++)
		if (ucmd_nvme_subsys_path(s->subsys, i)) {
			snprintf(name, sizeof(name), "nvme%u", i);
			break;
		}
	s->ctrl_fd = ucmd_open(s->e, name, O_RDWR);
	if (s->ctrl_fd < 0)
		return s->ctrl_fd;
	s->nsid = nsid ? nsid : 1;
	snprintf(name, sizeof(name), "ng0n%u", s->nsid);
	/*
	 * A namespace that is not attached has no device: commands that need
	 * one say so (lba_size stays 0); controller commands still work.
	 */
	s->ns_fd = ucmd_open(s->e, name, O_RDWR);
	if (s->ns_fd >= 0 && session_namespace_info(s, s->nsid))
		s->lba_size = 0;
	return 0;
}

int session_open_kernel(struct session *s, const char *path, uint32_t nsid)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	int ret;

	memset(s, 0, sizeof(*s));
	s->ctrl_fd = s->ns_fd = -1;
	s->dir = path;
	s->kernel = true;
	ret = ucmd_engine_create_kernel(&s->e);
	if (ret)
		return ret;
	s->kn = calloc(1, sizeof(*s->kn));
	if (!s->kn)
		return -ENOMEM;
	ret = ucmd_kernel_nvme_open(s->e, path, nsid, O_RDWR, s->kn);
	if (ret) {
		free(s->kn);
		s->kn = NULL;
		return ret;
	}
	s->ctrl_fd = s->kn->ctrl_fd;
	s->nsid = s->kn->nsid ? s->kn->nsid : 1;
	ret = ucmd_queue_init_engine(s->e, 64, &s->ring, &p);
	if (ret)
		return ret;
	if (s->kn->ns_fd >= 0) {
		s->ns_fd = s->kn->ns_fd;
		if (session_namespace_info(s, s->nsid))
			s->lba_size = 0;
	}
	return 0;
}

/*
 * The daemon's controllers: it owns the directory, the policy and the
 * audit trail; we are whoever the socket says we are. Commands that only
 * read open the devices read-only, as Linux's nvme_cmd_allowed() lets a
 * read-only descriptor do only what reads.
 */
int session_open_daemon(struct session *s, const char *sock, uint32_t nsid, bool only_reads)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	int flags = only_reads ? O_RDONLY : O_RDWR;
	char name[32];
	int ret;

	memset(s, 0, sizeof(*s));
	s->ctrl_fd = s->ns_fd = -1;
	s->dir = sock;
	s->daemon = true;
	ret = ucmd_engine_connect(sock, &s->e);
	if (ret) {
		fprintf(stderr, "ucmd: %s\n", ucmd_last_error());
		return ret;
	}
	ret = ucmd_queue_init_engine(s->e, 64, &s->ring, &p);
	if (ret)
		return ret;
	s->ctrl_fd = ucmd_open(s->e, "nvme0", flags);
	if (s->ctrl_fd < 0)
		return s->ctrl_fd;
	s->nsid = nsid ? nsid : 1;
	snprintf(name, sizeof(name), "ng0n%u", s->nsid);
	s->ns_fd = ucmd_open(s->e, name, flags);
	if (s->ns_fd >= 0 && session_namespace_info(s, s->nsid))
		s->lba_size = 0;
	return 0;
}

int session_close(struct session *s)
{
	int ret = 0;

	if (s->ring.ops || s->ring.ring_fd >= 0)
		ucmd_queue_exit(&s->ring);
	if (s->kn) {
		ucmd_kernel_nvme_close(s->e, s->kn);
		free(s->kn);
	} else {
		if (s->ns_fd >= 0)
			ucmd_close(s->e, s->ns_fd);
		if (s->ctrl_fd >= 0)
			ucmd_close(s->e, s->ctrl_fd);
	}
	if (s->host)
		ucmd_nvme_detach(s->host);
	if (s->subsys)
		ucmd_nvme_subsys_detach(s->subsys);
	if (s->ctrl)
		ret = ucmd_ctrl_destroy(s->ctrl);
	if (s->security)
		ucmd_security_teardown(s->e);
	if (s->e)
		ucmd_engine_free(s->e);
	memset(s, 0, sizeof(*s));
	s->ctrl_fd = s->ns_fd = -1;
	return ret;
}
