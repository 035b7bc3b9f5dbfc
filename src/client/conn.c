/* SPDX-License-Identifier: MIT */
/*
 * The control channel to ucmdd: one request, exactly one reply carrying its
 * seq (src/daemon/proto.h). Requests from several threads are serialized
 * by dc->lock, so replies cannot cross. The daemon going away is never a
 * hang or a signal: sends use MSG_NOSIGNAL (no SIGPIPE), a reply that is
 * EOF or an error marks the connection dead, and every call from then on
 * answers -ENOTCONN at once. A reply that breaks the protocol (wrong magic,
 * op or seq, a truncated payload, unexpected fds) is -EPROTO and kills the
 * connection too: the channel is out of step and no later reply could be
 * matched to its request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "client/client.h"

void dc_kill(struct dclient *dc)
{
	atomic_store(&dc->dead, true);
}

static int send_req(struct dclient *dc, const struct ucmdd_hdr *h, const void *req,
		    size_t req_len, const int *fds, unsigned nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * UCMDD_MAX_FDS_PER_MSG)];
	} cbuf;
	struct iovec iov[2] = {
		{ .iov_base = (void *)h, .iov_len = sizeof(*h) },
		{ .iov_base = (void *)req, .iov_len = req_len },
	};
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = req_len ? 2 : 1 };
	ssize_t n;

	if (nfds) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(dc->sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		/* a bad fd of the caller's is its error; anything else loses the daemon */
		if (errno == EBADF && nfds)
			return -EBADF;
		if (errno == ENOMEM || errno == ENOBUFS)
			return -errno;
		dc_kill(dc);
		return -ENOTCONN;
	}
	if ((size_t)n != sizeof(*h) + req_len) {
		dc_kill(dc);
		return -EPROTO;
	}
	return 0;
}

/*
 * A daemon that refused the connection sends one message, op and seq 0,
 * carrying why, and hangs up: its errno, or err when that is not there.
 */
static int refusal(struct dclient *dc, int err)
{
	struct ucmdd_hdr h;

	if (recv(dc->sock, &h, sizeof(h), MSG_DONTWAIT) == (ssize_t)sizeof(h) &&
	    h.magic == UCMDD_MAGIC && !h.op && !h.seq && h.result < 0 && h.result >= -4095)
		return h.result;
	return err;
}

/* Close every fd an SCM_RIGHTS message brought that nobody takes. */
static void close_fds(const int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int dc_call(struct dclient *dc, uint16_t op, const void *req, size_t req_len, const int *fds,
	    unsigned nfds, void *rep, size_t rep_max, size_t *rep_len, int *rfds,
	    unsigned nrfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * UCMDD_MAX_FDS_PER_MSG)];
	} cbuf;
	struct ucmdd_hdr h = { .magic = UCMDD_MAGIC, .op = op, .len = (uint32_t)req_len };
	struct ucmdd_hdr r;
	struct iovec iov[2] = {
		{ .iov_base = &r, .iov_len = sizeof(r) },
		{ .iov_base = rep, .iov_len = rep_max },
	};
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = rep_max ? 2 : 1,
			    .msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf) };
	int got[UCMDD_MAX_FDS_PER_MSG];
	unsigned ngot = 0;
	ssize_t n;
	int ret;

	if (nfds > UCMDD_MAX_FDS_PER_MSG || nrfds > UCMDD_MAX_FDS_PER_MSG ||
	    sizeof(h) + req_len > UCMDD_MSG_MAX)
		return -EINVAL;
	pthread_mutex_lock(&dc->lock);
	if (atomic_load(&dc->dead)) {
		ret = -ENOTCONN;
		goto out;
	}
	h.seq = ++dc->seq;
	ret = send_req(dc, &h, req, req_len, fds, nfds);
	if (ret == -ENOTCONN)
		ret = refusal(dc, ret);
	if (ret)
		goto out;
	do
		n = recvmsg(dc->sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	/*
	 * A daemon that hung up on our unread request reports ECONNRESET
	 * first (once); a refusal it sent before is still queued behind it.
	 */
	if (n < 0 && errno == ECONNRESET)
		n = recvmsg(dc->sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		unsigned k = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (unsigned i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (ngot < UCMDD_MAX_FDS_PER_MSG)
				got[ngot++] = fd;
			else
				close(fd);
		}
	}
	if (n <= 0) {
		/* 0: EOF, the daemon closed; < 0: reset or the like */
		dc_kill(dc);
		ret = -ENOTCONN;
		goto bad;
	}
	/* a refused connection (refusal() above), its message read here */
	if ((size_t)n == sizeof(r) && r.magic == UCMDD_MAGIC && !r.op && !r.seq &&
	    r.result < 0 && r.result >= -4095) {
		dc_kill(dc);
		ret = r.result;
		goto bad;
	}
	if ((size_t)n < sizeof(r) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    r.magic != UCMDD_MAGIC || r.op != op || r.seq != h.seq ||
	    r.len != (size_t)n - sizeof(r) || (r.result >= 0 && ngot != nrfds) ||
	    r.result < -4095) {
		dc_kill(dc);
		ret = -EPROTO;
		goto bad;
	}
	ret = r.result;
	if (ret < 0)
		goto bad;	/* an error brings no fds: close any it did */
	if (rep_len)
		*rep_len = r.len;
	for (unsigned i = 0; i < nrfds; i++)
		rfds[i] = got[i];
	ngot = 0;
bad:
	close_fds(got, ngot);
out:
	pthread_mutex_unlock(&dc->lock);
	return ret;
}
