/* SPDX-License-Identifier: MIT */
/*
 * The daemon backend's engine: a connection to ucmdd. Devices, their fd
 * table and the security policy are the daemon's; every engine call here is
 * one control message (conn.c), and the daemon judges it as the peer the
 * socket says we are, never as anything we claim.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client/client.h"
#include "core/backend.h"
#include "lib/error.h"
#include "ucmd/daemon.h"

static struct dclient *to_dc(struct ucmd_engine *e)
{
	return backend_engine_priv(e);
}

static int name_req(struct ucmdd_name *n, const char *name)
{
	size_t len = strlen(name);

	if (!len)
		return -EINVAL;
	if (len >= sizeof(n->name))
		return -ENAMETOOLONG;
	memset(n, 0, sizeof(*n));
	memcpy(n->name, name, len);
	return 0;
}

/* UCMDD_OPEN: flags as the daemon takes them (UCMDD_OPEN_FIXED with fd, or 0). */
static int open_req(struct ucmd_engine *e, const char *name, int flags, int fd)
{
	struct ucmdd_open req = { .flags = flags, .fd = fd };
	size_t len = strlen(name);

	if (!len)
		return -EINVAL;
	if (len >= sizeof(req.name))
		return -ENAMETOOLONG;
	memcpy(req.name, name, len);
	return dc_call(to_dc(e), UCMDD_OPEN, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL, 0);
}

static int dc_open(struct ucmd_engine *e, const char *name, int flags)
{
	return open_req(e, name, flags, 0);
}

int dc_open_fixed(struct ucmd_engine *e, const char *name, int flags, int fd)
{
	if (!ucmd_engine_is_daemon(e))
		return -EOPNOTSUPP;
	return open_req(e, name, (flags & O_ACCMODE) | UCMDD_OPEN_FIXED, fd);
}

int dc_adopt(struct ucmd_engine *e, int pidfd)
{
	if (!ucmd_engine_is_daemon(e))
		return -EOPNOTSUPP;
	return dc_call(to_dc(e), UCMDD_ADOPT, NULL, 0, &pidfd, 1, NULL, 0, NULL, NULL, 0);
}

static int dc_close(struct ucmd_engine *e, int fd)
{
	struct ucmdd_fd req = { .fd = fd };

	return dc_call(to_dc(e), UCMDD_CLOSE, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL, 0);
}

/* The daemon reads *arg from our memory and writes back what Linux writes back. */
static int dc_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg)
{
	struct ucmdd_ioctl req = { .fd = fd, .cmd = cmd, .arg = (uint64_t)(uintptr_t)arg };

	return dc_call(to_dc(e), UCMDD_IOCTL, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL, 0);
}

/*
 * The names live in one buffer of the engine's, replaced by the next call
 * (as the kernel backend's list is): the pointers handed out stay valid
 * until then.
 */
static int dc_device_names(struct ucmd_engine *e, const char **names, unsigned max)
{
	struct dclient *dc = to_dc(e);
	size_t len = 0;
	char *buf = malloc(UCMDD_MSG_MAX);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = dc_call(dc, UCMDD_DEVICE_NAMES, NULL, 0, NULL, 0, buf, UCMDD_MSG_MAX, &len, NULL, 0);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	/* result names back to back, each NUL-terminated, inside the payload */
	unsigned n = 0;
	for (size_t off = 0; off < len && n < (unsigned)ret; n++) {
		const char *end = memchr(buf + off, 0, len - off);

		if (!end)
			break;
		off = (size_t)(end - buf) + 1;
	}
	if (n != (unsigned)ret) {
		free(buf);
		dc_kill(dc);
		return -EPROTO;
	}
	pthread_mutex_lock(&dc->names_lock);
	free(dc->names);
	dc->names = buf;
	const char *p = buf;
	for (unsigned i = 0; i < n && i < max; i++) {
		names[i] = p;
		p += strlen(p) + 1;
	}
	pthread_mutex_unlock(&dc->names_lock);
	return ret;
}

static int dc_disk_stat(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out)
{
	struct ucmdd_name req;
	struct ucmd_disk_stat st;
	size_t len = 0;
	int ret = name_req(&req, name);

	if (ret)
		return ret;
	ret = dc_call(to_dc(e), UCMDD_DISK_STAT, &req, sizeof(req), NULL, 0, &st, sizeof(st),
		      &len, NULL, 0);
	if (ret < 0)
		return ret;
	if (len != sizeof(st)) {
		dc_kill(to_dc(e));
		return -EPROTO;
	}
	*out = st;
	return 0;
}

/*
 * Shared buffers: a memfd sealed so that neither side can shrink or grow
 * it (a shrunk memfd would make the daemon's mapping fault), mapped here
 * and by the daemon (UCMDD_REGION_ADD), so I/O on it needs no copy.
 */
static void *dc_buf_alloc(struct ucmd_engine *e, size_t len)
{
	struct dclient *dc = to_dc(e);
	size_t plen = (len + 4095) & ~(size_t)4095;
	struct dc_buf *b;
	void *p = MAP_FAILED;
	int fd, ret;

	if (!len || plen < len) {
		errno = EINVAL;
		return NULL;
	}
	b = malloc(sizeof(*b));
	fd = memfd_create("ucmd-buf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (!b || fd < 0) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	if (ftruncate(fd, (off_t)plen) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		ret = -errno;
		goto fail;
	}
	p = mmap(NULL, plen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	struct ucmdd_region req = { .addr = (uint64_t)(uintptr_t)p, .len = plen };
	ret = dc_call(dc, UCMDD_REGION_ADD, &req, sizeof(req), &fd, 1, NULL, 0, NULL, NULL, 0);
	if (ret < 0)
		goto fail;
	close(fd);
	b->addr = p;
	b->len = plen;
	pthread_mutex_lock(&dc->bufs_lock);
	b->next = dc->bufs;
	dc->bufs = b;
	dc_shared_add(&dc->shared, p, plen);
	pthread_mutex_unlock(&dc->bufs_lock);
	return p;
fail:
	if (p != MAP_FAILED)
		munmap(p, plen);
	if (fd >= 0)
		close(fd);
	free(b);
	errno = -ret;
	return NULL;
}

static void dc_buf_free(struct ucmd_engine *e, void *p)
{
	struct dclient *dc = to_dc(e);
	struct dc_buf **pp, *b = NULL;

	pthread_mutex_lock(&dc->bufs_lock);
	for (pp = &dc->bufs; *pp; pp = &(*pp)->next) {
		if ((*pp)->addr == p) {
			b = *pp;
			*pp = b->next;
			/* before the daemon forgets it: our I/O into it is recorded again */
			dc_shared_del(&dc->shared, p);
			break;
		}
	}
	pthread_mutex_unlock(&dc->bufs_lock);
	if (!b)
		return;
	struct ucmdd_region req = { .addr = (uint64_t)(uintptr_t)p, .len = b->len };
	/* the daemon keeps its own mapping until we are gone: ours can go now */
	dc_call(dc, UCMDD_REGION_DEL, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL, 0);
	munmap(b->addr, b->len);
	free(b);
}

static void dc_free(struct dclient *dc)
{
	if (dc->sock >= 0)
		close(dc->sock);
	while (dc->bufs) {
		struct dc_buf *b = dc->bufs;

		dc->bufs = b->next;
		munmap(b->addr, b->len);
		free(b);
	}
	free(dc->names);
	pthread_mutex_destroy(&dc->lock);
	pthread_mutex_destroy(&dc->names_lock);
	pthread_mutex_destroy(&dc->bufs_lock);
	free(dc);
}

static void dc_engine_free(struct ucmd_engine *e)
{
	/* closing the socket is the goodbye: the daemon frees what we held */
	dc_free(to_dc(e));
	backend_engine_release(e);
}

static int dc_regs_read(struct ucmd_engine *e, int fd, uint32_t off, void *buf, size_t len)
{
	struct ucmdd_regs_read req = { .fd = fd, .off = off, .len = (uint32_t)len };
	size_t got = 0;
	int ret;

	ret = dc_call(to_dc(e), UCMDD_REGS_READ, &req, sizeof(req), NULL, 0, buf, len, &got, NULL,
		      0);
	if (ret < 0)
		return ret;
	return got == len ? 0 : -EPROTO;
}

const struct ucmd_backend daemon_backend = {
	.name = "daemon",
	.engine_free = dc_engine_free,
	.open = dc_open,
	.close = dc_close,
	.device_names = dc_device_names,
	.disk_stat = dc_disk_stat,
	.ioctl = dc_ioctl,
	.regs_read = dc_regs_read,
	.buf_alloc = dc_buf_alloc,
	.buf_free = dc_buf_free,
	.queue_init = dc_queue_init,
	.queue_exit = dc_queue_exit,
	.enter = dc_enter,
	.register_files = dc_register_files,
	.unregister_files = dc_unregister_files,
	.register_buffers = dc_register_buffers,
	.unregister_buffers = dc_unregister_buffers,
	.register_personality = dc_register_personality,
	.unregister_personality = dc_unregister_personality,
	.register_ring_fd = dc_register_ring_fd,
	.unregister_ring_fd = dc_unregister_ring_fd,
	.register_files_update = dc_register_files_update,
	.register_files_sparse = dc_register_files_sparse,
	.register_buffers_sparse = dc_register_buffers_sparse,
	.register_eventfd = dc_register_eventfd,
	.unregister_eventfd = dc_unregister_eventfd,
	.get_probe_ring = dc_get_probe_ring,
	.enter_timeout = dc_enter_timeout,
};

static struct dclient *dc_new(int sock)
{
	struct dclient *dc = calloc(1, sizeof(*dc));

	if (!dc)
		return NULL;
	dc->sock = sock;
	pthread_mutex_init(&dc->lock, NULL);
	pthread_mutex_init(&dc->names_lock, NULL);
	pthread_mutex_init(&dc->bufs_lock, NULL);
	atomic_init(&dc->dead, false);
	return dc;
}

int ucmd_engine_connect_fd(int sock, struct ucmd_engine **out)
{
	struct ucmdd_hello hello = { .version = UCMDD_VERSION }, rep = { 0 };
	struct dclient *dc;
	size_t len = 0;
	int ret;

	if (!out || sock < 0)
		return last_error_set(-EINVAL, "ucmd_engine_connect: %s",
				      out ? "no socket" : "out is NULL");
	dc = dc_new(sock);
	if (!dc) {
		close(sock);
		return last_error_set(-ENOMEM, "ucmd_engine_connect: out of memory");
	}
	ret = dc_call(dc, UCMDD_HELLO, &hello, sizeof(hello), NULL, 0, &rep, sizeof(rep), &len,
		      NULL, 0);
	if (ret >= 0 && (len != sizeof(rep) || rep.version != UCMDD_VERSION))
		ret = -EPROTO;
	if (ret < 0) {
		dc_free(dc);
		if (ret == -EPROTO)
			return last_error_set(ret, "ucmd_engine_connect: the daemon speaks another "
					      "protocol (ours is version %u, it answered %u)",
					      UCMDD_VERSION, rep.version);
		return last_error_set(ret, "ucmd_engine_connect: the daemon refused us: %s%s",
				      strerror(-ret),
				      ret == -EDQUOT ? " (this user holds as many connections as "
						       "ucmdd's per-user quota allows)"
				      : ret == -EUSERS ? " (the connections left are kept for root)"
				      : "");
	}
	dc->hello = rep;
	*out = backend_engine_alloc(&daemon_backend, dc);
	if (!*out) {
		dc_free(dc);
		return last_error_set(-ENOMEM, "ucmd_engine_connect: out of memory");
	}
	return 0;
}

int ucmd_engine_connect(const char *path, struct ucmd_engine **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock;

	if (!out)
		return last_error_set(-EINVAL, "ucmd_engine_connect: out is NULL");
	if (!path)
		path = getenv("UCMD_DAEMON");
	if (!path || !*path)
		return last_error_set(-EINVAL, "ucmd_engine_connect: no socket path, and "
				      "$UCMD_DAEMON is not set");
	if (strlen(path) >= sizeof(sa.sun_path))
		return last_error_set(-ENAMETOOLONG, "ucmd_engine_connect: socket path too long "
				      "(%zu bytes, at most %zu): %s", strlen(path),
				      sizeof(sa.sun_path) - 1, path);
	memcpy(sa.sun_path, path, strlen(path));
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return last_error_set(-errno, "ucmd_engine_connect: socket: %s", strerror(errno));
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(sock);
		return last_error_set(-err, "ucmd_engine_connect: %s: %s%s", path, strerror(err),
				      err == ENOENT || err == ECONNREFUSED
					      ? " (is ucmdd running on this socket?)" : "");
	}
	return ucmd_engine_connect_fd(sock, out);
}

bool ucmd_engine_is_daemon(const struct ucmd_engine *e)
{
	return e && backend_engine_ops(e) == &daemon_backend;
}

int ucmd_daemon_port_state(struct ucmd_engine *e, unsigned port, unsigned state)
{
	struct ucmdd_port_state req = { .port = port, .state = state };

	if (!ucmd_engine_is_daemon(e))
		return -EOPNOTSUPP;
	if (state > UCMD_PORT_DOWN)
		return -EINVAL;
	return dc_call(to_dc(e), UCMDD_PORT_STATE, &req, sizeof(req), NULL, 0, NULL, 0, NULL,
		       NULL, 0);
}

int ucmd_daemon_ctrl_ana_state(struct ucmd_engine *e, const char *name, unsigned grpid,
			       unsigned state)
{
	struct ucmdd_ctrl_ana_state req = { .grpid = grpid, .state = state };

	if (!ucmd_engine_is_daemon(e))
		return -EOPNOTSUPP;
	if (!name || strlen(name) >= sizeof(req.name))
		return -EINVAL;
	strcpy(req.name, name);
	return dc_call(to_dc(e), UCMDD_CTRL_ANA_STATE, &req, sizeof(req), NULL, 0, NULL, 0, NULL,
		       NULL, 0);
}

int ucmd_daemon_ana_state(struct ucmd_engine *e, unsigned port, unsigned grpid, unsigned state)
{
	struct ucmdd_ana_state req = { .port = port, .grpid = grpid, .state = state };

	if (!ucmd_engine_is_daemon(e))
		return -EOPNOTSUPP;
	return dc_call(to_dc(e), UCMDD_ANA_STATE, &req, sizeof(req), NULL, 0, NULL, 0, NULL,
		       NULL, 0);
}
