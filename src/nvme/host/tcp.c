/* SPDX-License-Identifier: MIT */
/*
 * The nvme-tcp role: one connection per queue, ICReq/ICResp on each, a
 * synchronous Connect before the queue carries anything else, then
 * CapsuleCmds from the submitters and a receiver thread per connection for
 * what the controller sends (CapsuleResp, C2HData, R2T, C2HTermReq).
 *
 * Data: a write small enough for the queue's in-capsule size (IOCCSZ on
 * I/O queues, 8 KiB on the admin queue) travels in the capsule; larger
 * writes wait for the controller's R2Ts and go as H2CData PDUs of at most
 * MAXH2CDATA bytes; reads come back as C2HData, the last one possibly with
 * the SUCCESS flag instead of a CapsuleResp. DPTR is one SGL descriptor:
 * Data Block/Offset for in-capsule data, Transport Data Block otherwise.
 *
 * The user's buffers are reached through the user memory accessor, via a
 * bounce buffer per direction and connection: a buffer unmapped while the
 * command runs fails the command with Data Transfer Error instead of
 * crashing, and the digests are computed over what is actually sent.
 *
 * A connection that fails (EOF, a malformed PDU, a digest mismatch in a
 * header, a TermReq) is closed; tcp_recovery.c then re-establishes the
 * association and the requests in flight are sent again, as Linux's error
 * recovery does (docs/nvme-tcp-host.md). With ctrl_loss_tmo=0 every request
 * in flight on it ends with -EIO instead.
 */
#include <endian.h>
#include <errno.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lib/error.h"
#include "tcp.h"
#include "uaccess/uaccess.h"

#define NVME_SC_XFER_ERR	(NVME_SC_DATA_XFER_ERROR)

atomic_uint nvme_tcp_poll_idle_ms = 100, nvme_tcp_wait_idle_ms = 10;

/* ---- socket I/O ------------------------------------------------------------- */

static int send_iov(int fd, struct iovec *iov, int n)
{
	while (n) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t r = sendmsg(fd, &m, MSG_NOSIGNAL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Wait until tq's connection has bytes to read: at once when there is no
 * deadline (the recv blocks), else poll until tq->rx_deadline_ms.
 */
static int rx_wait(struct nvme_tcp_queue *tq)
{
	struct pollfd pf = { .fd = tq->fd, .events = POLLIN };
	uint64_t now;
	int r;

	if (!tq->rx_deadline_ms)
		return 0;
	for (;;) {
		now = mono_ms();
		if (now >= tq->rx_deadline_ms)
			return -ETIMEDOUT;
		r = poll(&pf, 1, (int)(tq->rx_deadline_ms - now < INT32_MAX ?
				       tq->rx_deadline_ms - now : INT32_MAX));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * The next bytes of the stream, at most max: *p points at n of them in the
 * receive buffer, consumed. When it is empty, one recv refills it with as
 * much as the connection holds (up to NVME_TCP_RXQ), so the PDUs the
 * controller sent together are parsed from memory. -ECONNRESET at EOF,
 * -ETIMEDOUT when tq->rx_deadline_ms passes first (the whole read, however
 * the peer trickles it).
 */
static int rx_take(struct nvme_tcp_queue *tq, size_t max, const uint8_t **p, size_t *n)
{
	while (tq->rxq_off == tq->rxq_len) {
		ssize_t r;

		/* with a deadline: what is there at once, else wait for more (or the deadline) */
		if (tq->rx_deadline_ms && mono_ms() >= tq->rx_deadline_ms)
			return -ETIMEDOUT;
		r = recv(tq->fd, tq->rxq, NVME_TCP_RXQ, tq->rx_deadline_ms ? MSG_DONTWAIT : 0);
		if (r < 0) {
			int ret = errno == EAGAIN ? rx_wait(tq) : errno == EINTR ? 0 : -errno;

			if (ret)
				return ret;
			continue;
		}
		if (r == 0)
			return -ECONNRESET;
		tq->rxq_off = 0;
		tq->rxq_len = (uint32_t)r;
		tq->rx_short = (size_t)r < NVME_TCP_RXQ;
	}
	*n = tq->rxq_len - tq->rxq_off < max ? tq->rxq_len - tq->rxq_off : max;
	*p = tq->rxq + tq->rxq_off;
	tq->rxq_off += (uint32_t)*n;
	return 0;
}

/* Read len bytes of tq's connection into buf (rx_take's errors). */
static int recv_all(struct nvme_tcp_queue *tq, void *buf, size_t len)
{
	uint8_t *d = buf;

	while (len) {
		const uint8_t *p;
		size_t n;
		int ret = rx_take(tq, len, &p, &n);

		if (ret)
			return ret;
		memcpy(d, p, n);
		d += n;
		len -= n;
	}
	return 0;
}

/* A new connection: nothing of the old one's stream is left to parse. */
static void rx_reset(struct nvme_tcp_queue *tq)
{
	tq->rxq_off = tq->rxq_len = 0;
	tq->rx_drained = false;
}

/* Copy between a bounce buffer and the request's data at byte offset off. */
static int iter_copy(const struct iov_iter *it, size_t off, void *buf, size_t len, bool to_user)
{
	uint8_t *b = buf;

	for (unsigned i = 0; i < it->nr_segs && len; i++) {
		size_t seg = it->iov[i].iov_len;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		size_t n = seg - off < len ? seg - off : len;
		uint8_t *u = (uint8_t *)it->iov[i].iov_base + off;
		int ret = to_user ? copy_to_user(u, b, n) : copy_from_user(b, u, n);

		if (ret)
			return ret;
		b += n;
		len -= n;
		off = 0;
	}
	return len ? -EFAULT : 0;
}

/* ---- PDUs --------------------------------------------------------------------- */

/* Send what is staged in tx_buf, if anything. Send lock held. */
static int tcp_flush(struct nvme_tcp_queue *tq)
{
	struct iovec v = { tq->tx_buf, tq->tx_len };
	int ret;

	if (!tq->tx_len)
		return 0;
	tq->tx_len = 0;
	tq->tx_nr = 0;
	atomic_store_explicit(&tq->tx_deferred, false, memory_order_relaxed);
	ret = send_iov(tq->fd, &v, 1);
	return ret;
}

/* What is staged goes nowhere (the connection is gone). Send lock held. */
static void tcp_drop_staged(struct nvme_tcp_queue *tq)
{
	tq->tx_len = 0;
	tq->tx_nr = 0;
	atomic_store_explicit(&tq->tx_deferred, false, memory_order_relaxed);
}

/*
 * Send what a waiter owed, if anything (tx_deferred). A failed send closes
 * the socket: the receiver sees it and the requests are sent again or fail.
 */
static void tcp_send_deferred(struct nvme_tcp_queue *tq)
{
	int ret = 0;

	pthread_mutex_lock(&tq->send_lock);
	if (atomic_load_explicit(&tq->tx_deferred, memory_order_relaxed) && !atomic_load(&tq->dead))
		ret = tcp_flush(tq);
	pthread_mutex_unlock(&tq->send_lock);
	if (ret)
		shutdown(tq->fd, SHUT_RDWR);
}

/* Send a header (pre bytes in hdr) and optional data with its digest. Send lock held. */
static int tcp_send_pdu(struct nvme_tcp_queue *tq, void *hdr, uint32_t pre, void *data,
			uint32_t len)
{
	struct iovec iov[3];
	uint32_t ddgst = 0;
	int n = 0, ret = tcp_flush(tq);		/* in order after what is staged */

	if (ret)
		return ret;
	if (tq->hdgst && ((struct nvme_tcp_hdr *)hdr)->flags & NVME_TCP_F_HDGST)
		nvme_tcp_put_hdgst(hdr);
	iov[n++] = (struct iovec){ hdr, pre };
	if (len) {
		iov[n++] = (struct iovec){ data, len };
		if (tq->ddgst) {
			ddgst = htole32(nvme_tcp_crc32c(data, len));
			iov[n++] = (struct iovec){ &ddgst, sizeof(ddgst) };
		}
	}
	return send_iov(tq->fd, iov, n);
}

/*
 * Read one PDU header (common header, specific header, header digest) into
 * buf and check it. 0, -errno for the socket, or -EPROTO after sending an
 * H2CTermReq for what was wrong.
 */
static int tcp_recv_header(struct nvme_tcp_queue *tq, uint8_t *buf, uint32_t *hdr_len)
{
	uint32_t fei = 0;
	int fes, ret = recv_all(tq, buf, sizeof(struct nvme_tcp_hdr));

	if (ret)
		return ret;
	fes = nvme_tcp_check_ch((struct nvme_tcp_hdr *)buf, &tq->lim, hdr_len, &fei);
	if (!fes && *hdr_len > NVME_TCP_HDR_BUF)
		fes = -NVME_TCP_FES_INVALID_PDU_HDR;
	if (!fes) {
		ret = recv_all(tq, buf + sizeof(struct nvme_tcp_hdr),
			       *hdr_len - sizeof(struct nvme_tcp_hdr));
		if (ret)
			return ret;
		fes = nvme_tcp_check_header(buf, *hdr_len, &tq->lim, &fei);
		if (!fes)
			return 0;
	}
	/* Tell the controller why, as the specification asks, then give up. */
	uint8_t t[sizeof(struct nvme_tcp_term) + NVME_TCP_TERM_MAX_DATA];
	uint32_t tl = nvme_tcp_build_term((struct nvme_tcp_term *)t, sizeof(t), NVME_TCP_H2C_TERM,
					  (uint16_t)-fes, fei, buf, sizeof(struct nvme_tcp_hdr));
	struct iovec v = { t, tl };

	pthread_mutex_lock(&tq->send_lock);
	if (!tcp_flush(tq))
		send_iov(tq->fd, &v, 1);
	pthread_mutex_unlock(&tq->send_lock);
	return -EPROTO;
}

/* Read and drop n bytes (padding, or data nobody can take). */
static int tcp_skip(struct nvme_tcp_queue *tq, uint32_t len)
{
	while (len) {
		const uint8_t *p;
		size_t n;
		int ret = rx_take(tq, len, &p, &n);

		if (ret)
			return ret;
		len -= (uint32_t)n;
	}
	return 0;
}

/*
 * The H2CData PDUs an R2T asks for: [off, off + len) of the command's data
 * from it, in PDUs of at most MAXH2CDATA, as Linux sends them (one PDU
 * per R2T below that size: some targets check a data digest per command,
 * not per PDU). The data streams through the bounce buffer with the digest
 * computed as it goes. A user buffer that faults is sent as zeros (the
 * controller is owed the bytes) and *xfer_err is set.
 */
static int tcp_send_h2c(struct nvme_tcp_queue *tq, uint16_t cid, uint16_t ttag,
			const struct iov_iter *it, uint32_t off, uint32_t len, bool *xfer_err)
{
	int ret = 0;

	pthread_mutex_lock(&tq->send_lock);
	ret = tcp_flush(tq);	/* tx_buf is the bounce buffer below */
	while (len && !ret) {
		_Alignas(8) uint8_t hdr[NVME_TCP_HDR_BUF] = { 0 };
		struct nvme_tcp_data *d = (struct nvme_tcp_data *)hdr;
		uint32_t n = len < tq->maxh2cdata ? len : tq->maxh2cdata;
		uint32_t pre = nvme_tcp_build_ch(&d->hdr, NVME_TCP_H2C_DATA,
						 n == len ? NVME_TCP_F_DATA_LAST : 0, n, tq->hdgst,
						 tq->ddgst, tq->cpda);
		uint32_t crc = 0;

		d->cccid = htole16(cid);
		d->ttag = htole16(ttag);
		d->datao = htole32(off);
		d->datal = htole32(n);
		ret = tcp_send_pdu(tq, hdr, pre, NULL, 0);
		for (uint32_t done = 0; !ret && done < n;) {
			uint32_t c = n - done < NVME_TCP_BUF ? n - done : NVME_TCP_BUF;
			struct iovec v = { tq->tx_buf, c };

			if (iter_copy(it, off + done, tq->tx_buf, c, false)) {
				memset(tq->tx_buf, 0, c);
				*xfer_err = true;
			}
			if (tq->ddgst)
				crc = nvme_tcp_crc32c_update(crc, tq->tx_buf, c);
			ret = send_iov(tq->fd, &v, 1);
			done += c;
		}
		if (!ret && tq->ddgst) {
			uint32_t le = htole32(crc);
			struct iovec v = { &le, sizeof(le) };

			ret = send_iov(tq->fd, &v, 1);
		}
		off += n;
		len -= n;
	}
	pthread_mutex_unlock(&tq->send_lock);
	return ret;
}

/* Read a data PDU's payload (after its header) into it at off; digest checked. */
static int tcp_recv_data(struct nvme_tcp_queue *tq, const struct nvme_tcp_hdr *ch,
			 uint32_t hdr_len, const struct iov_iter *it, uint32_t off, uint32_t len,
			 bool *xfer_err)
{
	uint32_t crc = 0, got;
	int ret = tcp_skip(tq, ch->pdo - hdr_len);	/* padding up to pdo */

	/* straight from the receive buffer to the request's data: one copy */
	while (!ret && len) {
		const uint8_t *p;
		size_t n;

		ret = rx_take(tq, len, &p, &n);
		if (ret)
			break;
		if (tq->ddgst)
			crc = nvme_tcp_crc32c_update(crc, p, n);
		if (!*xfer_err && (!it || iter_copy(it, off, (void *)p, n, true)))
			*xfer_err = true;
		off += (uint32_t)n;
		len -= (uint32_t)n;
	}
	if (!ret && tq->ddgst) {
		ret = recv_all(tq, &got, sizeof(got));
		/* Linux: a data digest error fails the command, not the connection */
		if (!ret && le32toh(got) != crc)
			*xfer_err = true;
	}
	return ret;
}

/* ---- the receiver --------------------------------------------------------------- */

static void tcp_complete(struct nvme_tcp_queue *tq, struct ucmd_nvme_cqe *cqe)
{
	struct request *rq = nvme_find_rq(tq->nq, cqe->cid);

	tq->rx_completed++;

	if (rq && nvme_req_test_flag(nvme_req(rq), NVME_REQ_XFER_ERR) && !(cqe->status >> 1))
		cqe->status = (uint16_t)(NVME_SC_XFER_ERR << 1 | (cqe->status & 1));
	nvme_handle_cqe(tq->nq, cqe);
}

/*
 * A data PDU against its command's direction: a fatal protocol error for
 * the connection, which is torn down and recovered as after any other
 * (Linux's nvme-tcp does the same), never data moved the wrong way.
 */
static int tcp_wrong_dir(struct nvme_tcp_queue *tq, const char *pdu, struct nvme_request *req)
{
	nvme_tcp_set_why(nvme_tcp_ctrl(tq->nq->host), -EPROTO,
			 "nvme-tcp: the controller sent %s for command %#x (opcode %#x), whose data "
			 "goes the other way: connection closed", pdu, req->cmd.cid, req->cmd.opcode);
	return -EPROTO;
}

/* One PDU from the controller. 0, or an error that ends the connection. */
static int tcp_rx_one(struct nvme_tcp_queue *tq)
{
	_Alignas(8) uint8_t buf[NVME_TCP_HDR_BUF];
	struct nvme_tcp_hdr *ch = (struct nvme_tcp_hdr *)buf;
	uint32_t hdr_len;
	int ret = tcp_recv_header(tq, buf, &hdr_len);

	if (ret)
		return ret;
	switch (ch->type) {
	case NVME_TCP_RSP: {
		struct ucmd_nvme_cqe cqe = ((struct nvme_tcp_rsp *)buf)->cqe;

		tcp_complete(tq, &cqe);
		return 0;
	}
	case NVME_TCP_C2H_DATA: {
		struct nvme_tcp_data *d = (struct nvme_tcp_data *)buf;
		uint32_t off = le32toh(d->datao), len = le32toh(d->datal);
		struct request *rq = nvme_find_rq(tq->nq, le16toh(d->cccid));
		struct nvme_request *req = rq ? nvme_req(rq) : NULL;
		bool xfer_err = false;

		/* Data for no request, or out of its buffer: the stream cannot be trusted. */
		if (!req || !req->has_data || off > req->data.count ||
		    len > req->data.count - off)
			return -EPROTO;
		/* nor data for a command whose buffer holds what goes out (a write) */
		if (!(nvme_xfer_dir(&req->cmd) & NVME_XFER_C2H))
			return tcp_wrong_dir(tq, "C2HData", req);
		ret = tcp_recv_data(tq, ch, hdr_len, &req->data, off, len, &xfer_err);
		if (ret)
			return ret;
		if (xfer_err)
			nvme_req_set_flag(req, NVME_REQ_XFER_ERR);
		if ((ch->flags & NVME_TCP_F_DATA_SUCCESS) && (ch->flags & NVME_TCP_F_DATA_LAST)) {
			/* No CapsuleResp follows: the command succeeded (NVMe/TCP 3.6.2.7) */
			struct ucmd_nvme_cqe cqe = { .cid = d->cccid };

			tcp_complete(tq, &cqe);
		}
		return 0;
	}
	case NVME_TCP_R2T: {
		struct nvme_tcp_r2t *r = (struct nvme_tcp_r2t *)buf;
		uint32_t off = le32toh(r->r2to), len = le32toh(r->r2tl);
		struct request *rq = nvme_find_rq(tq->nq, le16toh(r->cccid));
		struct nvme_request *req = rq ? nvme_req(rq) : NULL;
		bool xfer_err = false;

		if (!req || !req->has_data || off > req->data.count ||
		    len > req->data.count - off)
			return -EPROTO;
		/* a read's buffer is the user's to fill, never the controller's to take */
		if (!(nvme_xfer_dir(&req->cmd) & NVME_XFER_H2C))
			return tcp_wrong_dir(tq, "R2T", req);
		ret = tcp_send_h2c(tq, req->cmd.cid, r->ttag, &req->data, off, len, &xfer_err);
		if (xfer_err)
			nvme_req_set_flag(req, NVME_REQ_XFER_ERR);
		return ret;
	}
	case NVME_TCP_C2H_TERM:
		return -ECONNABORTED;
	}
	return -EPROTO;		/* an ICResp now: the check lets none through */
}

/*
 * End the requests of tq with err: those sent (all: sent is NULL) and not
 * completed (the claim keeps a request that a CapsuleResp or the timeout
 * handler completed from ending twice), and those the timeout handler gave
 * up on, which wait for us (tcp_timeout).
 */
static void tcp_end_requests(struct nvme_tcp_queue *tq, bool sent_only, int err)
{
	struct blk_mq_hw_ctx *hctx = tq->nq->hctx;

	for (unsigned t = 0; hctx && t < hctx->depth; t++) {
		struct request *rq = hctx->rqs[t];

		if ((!sent_only || nvme_req_test_flag(nvme_req(rq), NVME_REQ_TCP_SENT)) &&
		    blk_mq_complete_request_claim(rq))
			blk_mq_end_request(rq, err);
		else
			nvme_end_abandoned(rq, err);
	}
}

void nvme_tcp_end_sent(struct nvme_tcp_queue *tq, int err)
{
	tcp_end_requests(tq, true, err);
}

/*
 * A request the lost connection took: in flight, sent on it, and not given
 * up on by the timeout handler (that one ends -EINTR, tcp_timeout). What a
 * multipath head fails over, or what goes out again after a reconnect.
 */
static bool tcp_req_lost(struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);

	return atomic_load(&rq->state) == MQ_RQ_IN_FLIGHT &&
	       nvme_req_test_flag(req, NVME_REQ_TCP_SENT) && atomic_load(&req->tstate) == NVME_TO_NONE;
}

void nvme_tcp_failover_sent(struct nvme_tcp_queue *tq)
{
	struct blk_mq_hw_ctx *hctx = tq->nq->hctx;

	for (unsigned t = 0; hctx && t < hctx->depth; t++) {
		struct request *rq = hctx->rqs[t];
		struct nvme_request *req = nvme_req(rq);

		if (!tcp_req_lost(rq) || !blk_mq_complete_request_claim(rq))
			continue;
		if (rq->cmd_flags & REQ_NVME_MPATH) {
			/* a path error: the head sends it on another path */
			blk_mq_end_request(rq, -ENOTCONN);
			continue;
		}
		/* the head's passthrough: Linux's nvme_cancel_request status, the caller's */
		req->status = (NVME_SCT_PATH << NVME_SCT_SHIFT) | NVME_SC_CMD_ABORTED_BY_HOST;
		blk_mq_end_request(rq, 0);
	}
}

/*
 * The connection is gone: no more sends. When the association will be
 * re-established (tcp_recovery.c), the requests in flight stay to be sent
 * again, except those the timeout handler gave up on (they end, -EINTR);
 * otherwise every request in flight on it ends with -EIO.
 */
static void tcp_fail_queue(struct nvme_tcp_queue *tq)
{
	struct blk_mq_hw_ctx *hctx = tq->nq->hctx;

	pthread_mutex_lock(&tq->send_lock);
	atomic_store(&tq->dead, true);
	pthread_mutex_unlock(&tq->send_lock);
	shutdown(tq->fd, SHUT_RDWR);
	/* a poller or waiter still parsing (it sees the socket end) is done before the requests are looked at */
	pthread_mutex_lock(&tq->rx_lock);
	pthread_mutex_unlock(&tq->rx_lock);
	if (!nvme_tcp_error_recovery(tq->nq->host)) {
		tcp_end_requests(tq, false, -EIO);
		return;
	}
	for (unsigned t = 0; hctx && t < hctx->depth; t++)
		nvme_end_abandoned(hctx->rqs[t], -EIO);
}

/*
 * A command the controller does not answer in time. An Abort (PCI's way)
 * may never be answered over a fabric, and the command would hold its
 * buffer forever: Linux's nvme-tcp tears the connection down instead
 * and reconnects (tcp_recovery.c). The request is marked
 * cancelled (it ends with -EINTR) and ends once the receiver is done with
 * it: when its CapsuleResp comes after all, or when the closed connection
 * fails it; never while the receiver may still be copying its data.
 */
static enum blk_eh_timer_return tcp_timeout(struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);
	struct nvme_tcp_queue *tq = req->nvmeq->priv;

	if (!nvme_timeout_begin(rq))
		return BLK_EH_DONE;	/* its CapsuleResp arrived meanwhile */
	nvme_tcp_set_why(nvme_tcp_ctrl(req->nvmeq->host), -ETIMEDOUT,
			 "nvme-tcp: command %#x (opcode %#x) on queue %u not answered within %u ms: "
			 "connection closed", req->cmd.cid, req->cmd.opcode, req->nvmeq->qid,
			 rq->timeout_ms);
	shutdown(tq->fd, SHUT_RDWR);
	if (!nvme_timeout_hand_off(rq))
		return BLK_EH_DONE;	/* its CapsuleResp came meanwhile */
	/*
	 * The receiver marks the connection dead before it looks for requests
	 * to fail: if it is dead now, its look may have come before ours was
	 * marked. Both try to take it back; one of us ends it.
	 */
	if (atomic_load(&tq->dead))
		nvme_end_abandoned(rq, 0);
	return BLK_EH_DONE;
}


/*
 * Every PDU the connection holds now, the last one finished if it has
 * begun: 0 once the socket has nothing more, else the error that ends
 * the connection. rx_lock held (a polled queue).
 *
 * "Nothing more" is known without another system call when this call's
 * last recv took less than the buffer holds: the socket was empty then.
 * Asking again found nothing in two passes of three (EAGAIN; a system
 * call costs about 1 us in this VM), and what comes after that recv wakes
 * the caller's poll anyway (the waiter's sleep, the receiver's watch).
 */
static int tcp_rx_avail(struct nvme_tcp_queue *tq)
{
	tq->rx_short = false;
	tq->rx_drained = false;
	for (;;) {
		if (tq->rxq_off == tq->rxq_len) {
			if (tq->rx_short) {
				tq->rx_drained = true;
				return 0;
			}

			ssize_t r = recv(tq->fd, tq->rxq, NVME_TCP_RXQ, MSG_DONTWAIT);

			if (r < 0) {
				if (errno == EINTR)
					continue;
				tq->rx_drained = errno == EAGAIN;
				return errno == EAGAIN ? 0 : -errno;
			}
			if (r == 0)
				return -ECONNRESET;
			tq->rxq_off = 0;
			tq->rxq_len = (uint32_t)r;
			tq->rx_short = (size_t)r < NVME_TCP_RXQ;
		}
		int ret = tcp_rx_one(tq);

		if (ret)
			return ret;
	}
}

/*
 * A ring's waiter sleeps on this queue's socket, or read it within
 * NVME_TCP_WAIT_IDLE_MS (tcp_wait_*); *left: how long to watch before
 * looking again.
 */
static bool tcp_waiter_recent(struct nvme_tcp_queue *tq, uint64_t now, uint64_t *left)
{
	uint64_t last, idle = NVME_TCP_WAIT_IDLE_MS;

	/* acquire: a sleeper that just left stored its claim's time before (tcp_wait_end) */
	if (atomic_load_explicit(&tq->wait_sleepers, memory_order_acquire)) {
		*left = idle;
		return true;
	}
	last = atomic_load_explicit(&tq->last_poll_ms, memory_order_relaxed);
	if (last + idle <= now)
		return false;
	*left = last + idle - now;
	return true;
}

/* Staged sends have waited for a waiter a claim period: the receiver sends them. */
static bool tcp_defer_expired(struct nvme_tcp_queue *tq, uint64_t now)
{
	return atomic_load_explicit(&tq->tx_defer_ms, memory_order_relaxed) + NVME_TCP_WAIT_IDLE_MS <= now;
}

/*
 * What one recv brings (the rest of a PDU it begins included), parsed:
 * 0 also when there was nothing, else the error that ends the connection.
 * rx_lock held.
 */
static int tcp_rx_batch(struct nvme_tcp_queue *tq)
{
	int ret = 0;

	tq->rx_drained = false;

	if (tq->rxq_off == tq->rxq_len) {
		ssize_t r = recv(tq->fd, tq->rxq, NVME_TCP_RXQ, MSG_DONTWAIT);

		if (r < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (r == 0)
			return -ECONNRESET;
		tq->rxq_off = 0;
		tq->rxq_len = (uint32_t)r;
	}
	while (!ret && tq->rxq_off != tq->rxq_len)
		ret = tcp_rx_one(tq);
	return ret;
}

/*
 * An I/O or admin queue's receiver. It reads the PDUs as they come (the
 * stream under rx_lock, never held while it sleeps) until a ring's waiter
 * reads the connection itself (tcp_wait_*: the completions then happen on
 * the waiting thread); while waiters come it only watches for the
 * connection's end, as a polled queue's receiver does, and it reads again
 * once none has come for NVME_TCP_WAIT_IDLE_MS, so that a ring that does
 * not wait (one read through its eventfd, or from memory) still gets its
 * completions.
 */
static void *tcp_rx_thread(void *arg)
{
	struct nvme_tcp_queue *tq = arg;
	uint64_t left = 0;
	int ret = 0;

	while (!ret && !atomic_load(&tq->dead)) {
		uint64_t now = mono_ms();
		bool watch = tcp_waiter_recent(tq, now, &left);

		if (watch) {
			/* sends may wait for a waiter: at most a claim period, then they go here */
			atomic_store(&tq->rx_watching, true);
			if (atomic_load_explicit(&tq->tx_deferred, memory_order_relaxed) &&
			    tcp_defer_expired(tq, now))
				tcp_send_deferred(tq);
		} else if (atomic_load_explicit(&tq->rx_watching, memory_order_relaxed) ||
			   atomic_load_explicit(&tq->tx_deferred, memory_order_relaxed)) {
			/*
			 * about to sleep untimed: nothing may wait for a waiter
			 * from now on, unless it kicks this thread first
			 */
			pthread_mutex_lock(&tq->send_lock);
			atomic_store(&tq->rx_watching, false);
			pthread_mutex_unlock(&tq->send_lock);
			tcp_send_deferred(tq);
		}
		struct pollfd pfs[2] = {
			{ .fd = tq->fd, .events = (short)(POLLRDHUP | (watch ? 0 : POLLIN)) },
			{ .fd = tq->kick_fd, .events = POLLIN },
		};
		struct pollfd pf = pfs[0];
		int r = poll(pfs, 2, watch ? (int)left : -1);

		if (r < 0 && errno != EINTR)
			ret = -errno;
		if (!ret)
			ret = atomic_load(&tq->rx_err);
		if (!ret && r > 0 && (pfs[1].revents & POLLIN)) {
			uint64_t v;

			/* a submitter left a send for a waiter: watch (above) */
			if (read(tq->kick_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				ret = -errno;
			atomic_store(&tq->rx_kicked, false);
		}
		pf = pfs[0];
		if (ret || r <= 0 || !pf.revents)
			continue;
		/* bytes a waiter that came meanwhile reads (it sleeps on the socket too) */
		if (pf.revents == POLLIN && tcp_waiter_recent(tq, mono_ms(), &left))
			continue;
		pthread_mutex_lock(&tq->rx_lock);
		if (!atomic_load(&tq->dead))
			ret = (pf.revents & ~POLLIN) ? tcp_rx_avail(tq) : tcp_rx_batch(tq);
		pthread_mutex_unlock(&tq->rx_lock);
		if (!ret)
			ret = atomic_load(&tq->rx_err);
	}
	tcp_fail_queue(tq);
	return NULL;
}

/*
 * A polled queue's receiver: while pollers come, it only watches the
 * connection for its end (POLLRDHUP and errors: no wake-up per PDU, no
 * thread switch per completion); when none has come for
 * NVME_TCP_POLL_IDLE_MS it reads the socket as any receiver, so that a
 * request nobody polls still completes, an R2T is still answered. A
 * poller's error (rx_err) ends it the same way as its own.
 */
static void *tcp_rx_thread_polled(void *arg)
{
	struct nvme_tcp_queue *tq = arg;
	int ret = 0;

	while (!ret && !atomic_load(&tq->dead)) {
		uint64_t last = atomic_load_explicit(&tq->last_poll_ms, memory_order_relaxed);
		uint64_t now = mono_ms(), idle = NVME_TCP_POLL_IDLE_MS;
		bool watch = last + idle > now;
		struct pollfd pf = { .fd = tq->fd, .events = (short)(POLLRDHUP | (watch ? 0 : POLLIN)) };
		int r = poll(&pf, 1, watch ? (int)(last + idle - now) : 1000);

		if (r < 0 && errno != EINTR)
			ret = -errno;
		if (!ret)
			ret = atomic_load(&tq->rx_err);
		if (ret || r <= 0 || !pf.revents)
			continue;
		pthread_mutex_lock(&tq->rx_lock);
		if (!atomic_load(&tq->dead))
			ret = tcp_rx_avail(tq);
		pthread_mutex_unlock(&tq->rx_lock);
		if (!ret)
			ret = atomic_load(&tq->rx_err);
	}
	tcp_fail_queue(tq);
	return NULL;
}

/* ---- submission ---------------------------------------------------------------- */

/*
 * Stage one CapsuleCmd for req, in-capsule data (and its digest) included,
 * in tx_buf: the submission's last request sends them all (tcp_flush).
 * Send lock held. -EFAULT when the in-capsule data cannot be read (nothing
 * staged, the request not sent), else 0 or a send error of the flush that
 * made room (the request then counts as sent on the failed connection).
 */
static int tcp_send_cmd(struct nvme_tcp_queue *tq, struct nvme_request *req)
{
	const struct nvme_tcp_sgl *sgl = (const void *)&req->cmd.dptr;
	uint32_t inline_len = sgl->type == NVME_TCP_SGL_INCAPSULE ? le32toh(sgl->length) : 0;
	struct nvme_tcp_cmd *c;
	uint32_t pre, need;
	uint8_t *at;

	/* the PDU's size does not depend on where it goes */
	{
		struct nvme_tcp_hdr ch;

		pre = nvme_tcp_build_ch(&ch, NVME_TCP_CMD, 0, inline_len, tq->hdgst, tq->ddgst,
					tq->cpda);
	}
	need = pre + inline_len + (tq->ddgst && inline_len ? NVME_TCP_DIGEST_LEN : 0);
	if (tq->tx_len + need > NVME_TCP_TXQ) {
		int ret = tcp_flush(tq);

		if (ret) {
			/* lost with the connection: sent again by its recovery, or failed */
			nvme_req_set_flag(req, NVME_REQ_TCP_SENT);
			return ret;
		}
	}
	at = tq->tx_buf + tq->tx_len;
	memset(at, 0, pre);
	c = (struct nvme_tcp_cmd *)at;
	nvme_tcp_build_ch(&c->hdr, NVME_TCP_CMD, 0, inline_len, tq->hdgst, tq->ddgst, tq->cpda);
	c->cmd = req->cmd;
	if (!req->has_data || !req->data.count) {
		/* Fabrics want SGLs on every command: a null Transport Data Block. */
		struct nvme_tcp_sgl *null = (struct nvme_tcp_sgl *)(void *)&c->cmd.dptr;

		c->cmd.flags = (uint8_t)((c->cmd.flags & ~UCMD_NVME_PSDT_MASK) | NVME_CMD_PSDT_SGL);
		memset(null, 0, sizeof(*null));
		null->type = NVME_TCP_SGL_TRANSPORT;
	}
	if (inline_len && iter_copy(&req->data, 0, at + pre, inline_len, false))
		return -EFAULT;
	if (tq->hdgst)
		nvme_tcp_put_hdgst(at);
	if (inline_len && tq->ddgst) {
		uint32_t dd = htole32(nvme_tcp_crc32c(at + pre, inline_len));

		memcpy(at + pre + inline_len, &dd, sizeof(dd));
	}
	tq->tx_len += need;
	tq->tx_nr++;
	nvme_req_set_flag(req, NVME_REQ_TCP_SENT);
	return 0;
}

/* A thread's identity for tq->waiter: the address of its own copy of this. */
static __thread char tcp_self;

/*
 * The staged capsules (the submission's last request req's among them)
 * may wait for the ring's waiter instead of leaving now: req's ring reads
 * tq (its waiter will flush them before it looks for their completions,
 * tcp_wait_reap), the submitting thread is that waiter (it comes back),
 * none sleeps on the socket meanwhile (it would not send them), and the
 * receiver watches (it sends them if the waiter does not come). Send lock
 * held.
 */
static bool tcp_may_defer(struct nvme_tcp_queue *tq, struct nvme_request *req)
{
	uint64_t left;

	if (!nvme_req_test_flag(req, NVME_REQ_TCP_WAITED) || tq->tx_nr >= NVME_TCP_DEFER_MAX ||
	    atomic_load_explicit(&tq->waiter, memory_order_relaxed) != &tcp_self ||
	    atomic_load_explicit(&tq->wait_sleepers, memory_order_relaxed) || atomic_load(&tq->dead))
		return false;
	if (atomic_load_explicit(&tq->rx_watching, memory_order_relaxed))
		return true;
	/*
	 * The receiver sleeps untimed (a waiter read the data under its
	 * nose): when this thread waited lately, it comes back; the receiver
	 * is woken once to watch meanwhile (one write per watch period).
	 */
	if (!tcp_waiter_recent(tq, mono_ms(), &left))
		return false;
	if (!atomic_load_explicit(&tq->rx_kicked, memory_order_relaxed)) {
		uint64_t one = 1;

		if (write(tq->kick_fd, &one, sizeof(one)) < 0)
			return false;
		atomic_store_explicit(&tq->rx_kicked, true, memory_order_relaxed);
	}
	return true;
}

static blk_status_t tcp_queue_rq(struct blk_mq_hw_ctx *hctx, const struct blk_mq_queue_data *bd)
{
	struct nvme_queue *q = hctx->driver_data;
	struct nvme_tcp_queue *tq = q->priv;
	struct nvme_request *req = nvme_req(bd->rq);
	/* the send lock, once the queue is up; a head's I/O does not wait for it */
	int ret = nvme_tcp_wait_live(tq, q->qid && q->host->ns_hidden);

	if (ret)
		return ret;
	ret = tcp_send_cmd(tq, req);
	/* the submission's last request (or commit_rqs) sends what is staged */
	if (!ret && bd->last && tcp_may_defer(tq, req)) {
		if (!atomic_load_explicit(&tq->tx_deferred, memory_order_relaxed)) {
			atomic_store_explicit(&tq->tx_defer_ms, mono_ms(), memory_order_relaxed);
			atomic_store_explicit(&tq->tx_deferred, true, memory_order_release);
		}
	} else if ((!ret || ret == -EFAULT) && bd->last) {
		int fret = tcp_flush(tq);

		if (fret)
			ret = fret;
	}
	pthread_mutex_unlock(&tq->send_lock);
	if (ret == -EFAULT && !nvme_req_test_flag(req, NVME_REQ_TCP_SENT))
		return -EFAULT;
	/* The receiver sees the closed socket; the request is sent again or fails. */
	if (ret)
		shutdown(tq->fd, SHUT_RDWR);
	return BLK_STS_OK;
}

/* The submission's last request failed before it sent what is staged: send it now. */
static void tcp_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct nvme_queue *q = hctx->driver_data;
	struct nvme_tcp_queue *tq = q->priv;
	int ret;

	pthread_mutex_lock(&tq->send_lock);
	/* a dead connection's staged requests are sent again by the recovery, or fail */
	if (atomic_load(&tq->dead)) {
		tcp_drop_staged(tq);
		ret = 0;
	} else {
		ret = tcp_flush(tq);
	}
	pthread_mutex_unlock(&tq->send_lock);
	if (ret)
		shutdown(tq->fd, SHUT_RDWR);
}

/*
 * After a reconnect: every request that went out on the lost connection
 * and has neither completed nor timed out goes out again, as Linux
 * requeues them. Send lock held, the receiver not yet running.
 */
void nvme_tcp_resend(struct nvme_tcp_queue *tq)
{
	struct blk_mq_hw_ctx *hctx = tq->nq->hctx;

	for (unsigned t = 0; hctx && t < hctx->depth; t++) {
		struct request *rq = hctx->rqs[t];
		struct nvme_request *req = nvme_req(rq);

		if (!tcp_req_lost(rq))
			continue;
		nvme_req_clear_flag(req, NVME_REQ_XFER_ERR);
		int ret = tcp_send_cmd(tq, req);

		if (ret == -EFAULT && blk_mq_complete_request_claim(rq)) {
			blk_mq_end_request(rq, -EFAULT);	/* unmapped meanwhile */
		} else if (ret) {
			shutdown(tq->fd, SHUT_RDWR);
			return;
		}
	}
	if (tcp_flush(tq))
		shutdown(tq->fd, SHUT_RDWR);
}

/* DPTR: one SGL descriptor, in-capsule data or data the transport moves. */
static int tcp_map_data(struct nvme_host *h, struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);
	struct nvme_tcp_sgl *sgl = (struct nvme_tcp_sgl *)(void *)&req->cmd.dptr;
	struct nvme_tcp_queue *tq = req->nvmeq->priv;
	uint32_t len = req->has_data ? (uint32_t)req->data.count : 0;

	(void)h;
	/* Fabrics have no separate metadata buffer (NVMe-oF: MPTR is reserved). */
	if (rq->meta_len)
		return -EINVAL;
	req->cmd.mptr = 0;
	req->cmd.flags = (uint8_t)((req->cmd.flags & ~UCMD_NVME_PSDT_MASK) | NVME_CMD_PSDT_SGL);
	memset(sgl, 0, sizeof(*sgl));
	sgl->length = htole32(len);
	if (len && (req->cmd.opcode & 1) && len <= tq->inline_max)
		sgl->type = NVME_TCP_SGL_INCAPSULE;	/* addr: offset 0 in the capsule */
	else
		sgl->type = NVME_TCP_SGL_TRANSPORT;
	return 0;
}

/*
 * An IOPOLL ring's waiter: on a polled queue, read what the connection
 * holds and complete it here, on the polling thread (Linux's
 * nvme_tcp_poll). Another poller or the receiver reading it already: 0,
 * they complete it. An error ends the connection through the receiver,
 * which recovers it as any other loss. Other queues: their receivers
 * complete everything.
 */
/*
 * Read and complete what tq's connection holds, on this thread, unless
 * another (the receiver, a poller) holds the stream: how many completed.
 * An error ends the connection through the receiver, which recovers it
 * as any other loss.
 */
static int tcp_read_avail(struct nvme_tcp_queue *tq, uint64_t now_ms, atomic_ulong *count,
			  bool sleeps)
{
	struct nvme_queue *q = tq->nq;
	unsigned before;
	int ret;

	if (atomic_load(&tq->dead) || atomic_load(&tq->rx_err) ||
	    pthread_mutex_trylock(&tq->rx_lock))
		return -EBUSY;
	if (atomic_load(&tq->dead)) {
		pthread_mutex_unlock(&tq->rx_lock);
		return -EBUSY;
	}
	/*
	 * Found empty at the last look and not polled since: a waiter that
	 * sleeps next leaves the look to its poll, which returns at once if
	 * something came (a recv that finds nothing, then the poll and
	 * another recv, was most passes' way into a sleep: 3 calls, now 2;
	 * when something did come, the poll is one call more)
	 */
	if (sleeps && tq->rx_drained) {
		pthread_mutex_unlock(&tq->rx_lock);
		return 0;
	}
	before = tq->rx_completed;
	/* a PDU that has begun is finished within the I/O timeout, never waited for longer */
	tq->rx_deadline_ms = now_ms + nvme_tcp_ctrl(q->host)->fabrics.opts.io_tmo_ms;
	blk_complete_batch_begin();
	ret = tcp_rx_avail(tq);
	blk_complete_batch_end();
	tq->rx_deadline_ms = 0;
	before = tq->rx_completed - before;
	pthread_mutex_unlock(&tq->rx_lock);
	if (before)
		atomic_fetch_add_explicit(count, before, memory_order_relaxed);
	if (ret) {
		int zero = 0;

		atomic_compare_exchange_strong(&tq->rx_err, &zero, ret);
		shutdown(tq->fd, SHUT_RDWR);	/* the receiver sees it and fails the queue */
		return ret;	/* the receiver ends the connection */
	}
	return (int)before;
}

static int tcp_poll(struct nvme_queue *q)
{
	struct nvme_tcp_queue *tq = q->priv;
	struct timespec ts;
	uint64_t ns, now;
	int ret;

	if (!tq || !tq->polled)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	now = ns / 1000000u;
	atomic_store_explicit(&tq->last_poll_ms, now, memory_order_relaxed);
	/*
	 * A ring polls once per request in flight: the connection found empty
	 * a moment ago is not asked again in the same pass (a system call each)
	 */
	if (ns - atomic_load_explicit(&tq->empty_ns, memory_order_relaxed) < NVME_TCP_POLL_RECHECK_NS)
		return 0;
	ret = tcp_read_avail(tq, now, &nvme_tcp_ctrl(q->host)->polled_cqes, false);
	if (!ret)
		atomic_store_explicit(&tq->empty_ns, ns, memory_order_relaxed);
	return ret > 0 ? ret : 0;
}

/* ---- a ring's waiter reads the connection (io_wait_src_ops) ------------------------ */

/*
 * The waiter of a ring whose requests went to tq: complete what the
 * connection holds here, on the waiting thread, with the ring's lock held
 * (its own requests complete at once, nothing crosses to another thread).
 * The receiver reading already (it holds the stream): 0, it completes them,
 * and, told by the claim, leaves the next batches to the waiters.
 */
static int tcp_wait_reap(void *arg, bool sleeps)
{
	struct nvme_tcp_queue *tq = arg;
	uint64_t now = mono_ms();

	int n;

	atomic_store_explicit(&tq->last_poll_ms, now, memory_order_relaxed);
	atomic_store_explicit(&tq->waiter, &tcp_self, memory_order_relaxed);
	/* what this ring's submissions left staged goes before their completions are looked for */
	if (atomic_load_explicit(&tq->tx_deferred, memory_order_relaxed))
		tcp_send_deferred(tq);
	n = tcp_read_avail(tq, now, &nvme_tcp_ctrl(tq->nq->host)->waited_cqes, sleeps);
	return n > 0 ? n : 0;
}

/* The waiter may sleep on the socket: it holds the stream (rx_lock) until tcp_wait_end. */
static bool tcp_wait_begin(void *arg)
{
	struct nvme_tcp_queue *tq = arg;

	if (atomic_load(&tq->dead) || atomic_load(&tq->rx_err) ||
	    pthread_mutex_trylock(&tq->rx_lock))
		return false;
	if (atomic_load(&tq->dead)) {
		pthread_mutex_unlock(&tq->rx_lock);
		return false;
	}
	atomic_store_explicit(&tq->last_poll_ms, mono_ms(), memory_order_relaxed);
	atomic_store_explicit(&tq->wait_sleepers, 1, memory_order_relaxed);
	return true;
}

/* Until the connection has bytes (or ends), the ring is woken (efd) or timeout_ms pass. */
static void tcp_wait_sleep(void *arg, int efd, int timeout_ms)
{
	struct nvme_tcp_queue *tq = arg;
	struct pollfd pf[2] = { { .fd = tq->fd, .events = POLLIN }, { .fd = efd, .events = POLLIN } };
	uint64_t v;

	int r = poll(pf, 2, timeout_ms);

	tq->rx_drained = false;		/* the next reap reads (rx_lock held since sleep_begin) */
	if (r > 0 && (pf[1].revents & POLLIN) && read(efd, &v, sizeof(v)) < 0)
		return;		/* EAGAIN: another waiter took the count */
}

static void tcp_wait_end(void *arg)
{
	struct nvme_tcp_queue *tq = arg;

	/* the claim runs from now: the receiver stays away while the waiter comes back */
	atomic_store_explicit(&tq->last_poll_ms, mono_ms(), memory_order_relaxed);
	atomic_store_explicit(&tq->wait_sleepers, 0, memory_order_release);
	pthread_mutex_unlock(&tq->rx_lock);
}

static const struct io_wait_src_ops tcp_wait_ops = {
	.reap = tcp_wait_reap,
	.sleep_begin = tcp_wait_begin,
	.sleep = tcp_wait_sleep,
	.sleep_end = tcp_wait_end,
};

/*
 * A passthrough command on an I/O queue: its ring's waiter reads the
 * connection. Not on polled queues (their IOPOLL pollers do) nor the admin
 * queue (the keep-alive and the asynchronous events are its receiver's).
 */
static void tcp_wait_src(struct nvme_queue *q, struct io_uring_cmd *ioucmd, struct request *rq)
{
	struct nvme_tcp_queue *tq = q->priv;

	if (tq && q->qid && !tq->polled && io_uring_cmd_set_wait_src(ioucmd, &tcp_wait_ops, tq))
		nvme_req_set_flag(nvme_req(rq), NVME_REQ_TCP_WAITED);
}

/* ---- connections ------------------------------------------------------------------ */

static int tcp_connect_socket(struct nvme_tcp_ctrl *c, int *fdp)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	int ret = getaddrinfo(c->fabrics.opts.traddr, c->fabrics.opts.trsvcid, &hints, &res), fd = -1;

	if (ret)
		return last_error_set(-EHOSTUNREACH, "nvme-tcp: %s:%s: %s", c->fabrics.opts.traddr, c->fabrics.opts.trsvcid,
				      gai_strerror(ret));
	ret = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return last_error_set(ret, "nvme-tcp: connecting to %s:%s: %s", c->fabrics.opts.traddr, c->fabrics.opts.trsvcid,
				      strerror(-ret));
	/* Capsules are small and latency-bound: no Nagle (Linux sets it too). */
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*fdp = fd;
	return 0;
}

/* ICReq/ICResp: PDU format version, digests, alignment, MAXH2CDATA. */
static int tcp_init_connection(struct nvme_tcp_ctrl *c, struct nvme_tcp_queue *tq)
{
	_Alignas(8) uint8_t buf[NVME_TCP_HDR_BUF] = { 0 };
	struct nvme_tcp_icreq *req = (struct nvme_tcp_icreq *)buf;
	const struct nvme_tcp_icresp *rsp = (const struct nvme_tcp_icresp *)buf;
	uint32_t pre, hdr_len;
	int ret;

	pre = nvme_tcp_build_ch(&req->hdr, NVME_TCP_ICREQ, 0, 0, false, false, 0);
	req->pfv = htole16(NVME_TCP_PFV_1_0);
	req->hpda = 0;		/* the controller may place data anywhere */
	req->digest = (uint8_t)((c->fabrics.opts.hdr_digest ? NVME_TCP_HDR_DIGEST_ENABLE : 0) |
				(c->fabrics.opts.data_digest ? NVME_TCP_DATA_DIGEST_ENABLE : 0));
	req->maxr2t = 0;	/* one R2T outstanding per command (0's based) */
	ret = tcp_send_pdu(tq, buf, pre, NULL, 0);
	if (ret)
		return last_error_set(ret, "nvme-tcp: sending ICReq: %s", strerror(-ret));
	memset(buf, 0, sizeof(buf));
	tq->rx_deadline_ms = mono_ms() + c->fabrics.opts.handshake_tmo_ms;
	ret = tcp_recv_header(tq, buf, &hdr_len);
	tq->rx_deadline_ms = 0;
	if (ret == -ETIMEDOUT)
		return last_error_set(ret, "nvme-tcp: no ICResp from %s:%s within %u ms "
				      "(icresp_timeout)", c->fabrics.opts.traddr, c->fabrics.opts.trsvcid, c->fabrics.opts.handshake_tmo_ms);
	if (ret)
		return last_error_set(ret == -EPROTO ? -EPROTO : ret,
				      "nvme-tcp: no valid ICResp from %s:%s", c->fabrics.opts.traddr, c->fabrics.opts.trsvcid);
	if (rsp->hdr.type != NVME_TCP_ICRESP)
		return last_error_set(-EPROTO, "nvme-tcp: PDU type %u instead of ICResp",
				      rsp->hdr.type);
	/* A controller may refuse a digest we asked for, never add one. */
	if ((rsp->digest & NVME_TCP_HDR_DIGEST_ENABLE && !c->fabrics.opts.hdr_digest) ||
	    (rsp->digest & NVME_TCP_DATA_DIGEST_ENABLE && !c->fabrics.opts.data_digest))
		return last_error_set(-EPROTO, "nvme-tcp: ICResp enables a digest not asked for");
	tq->hdgst = rsp->digest & NVME_TCP_HDR_DIGEST_ENABLE;
	tq->ddgst = rsp->digest & NVME_TCP_DATA_DIGEST_ENABLE;
	tq->cpda = rsp->cpda;
	tq->maxh2cdata = le32toh(rsp->maxh2cdata);
	tq->lim.ic_done = true;
	tq->lim.hdgst = tq->hdgst;
	tq->lim.ddgst = tq->ddgst;
	return 0;
}

/*
 * Connect, before the receiver runs: the capsule, its 1024 bytes in the
 * capsule when they fit (else by R2T/H2CData), and the CapsuleResp. The
 * result's dw0 holds the controller ID on the admin queue. *status: the
 * NVMe status of a refusal (then -ECONNREFUSED), else 0.
 */
static int tcp_connect_once(struct nvme_tcp_ctrl *c, struct nvme_tcp_queue *tq, uint16_t qid,
			    uint16_t sqsize, uint8_t cattr, uint16_t *status)
{
	struct nvmf_connect_data *data = aligned_alloc(4096, 4096);
	_Alignas(8) uint8_t hdr[NVME_TCP_HDR_BUF] = { 0 };
	struct nvme_tcp_cmd *cmd = (struct nvme_tcp_cmd *)hdr;
	struct nvme_tcp_sgl *sgl = (struct nvme_tcp_sgl *)(void *)&cmd->cmd.dptr;
	bool incap = tq->inline_max >= sizeof(*data), xfer_err = false;
	struct iov_iter it;
	uint32_t pre, hdr_len, tmo;
	int ret;

	if (!data)
		return -ENOMEM;
	*status = 0;
	nvmf_build_connect(&c->fabrics, qid, sqsize, cattr, &cmd->cmd, data);
	cmd->cmd.flags = NVME_CMD_PSDT_SGL;
	sgl->length = htole32(sizeof(*data));
	sgl->type = incap ? NVME_TCP_SGL_INCAPSULE : NVME_TCP_SGL_TRANSPORT;
	pre = nvme_tcp_build_ch(&cmd->hdr, NVME_TCP_CMD, 0, incap ? sizeof(*data) : 0, tq->hdgst,
				tq->ddgst, tq->cpda);
	ret = tcp_send_pdu(tq, hdr, pre, data, incap ? sizeof(*data) : 0);
	import_ubuf(UCMD_WRITE, (uint64_t)(uintptr_t)data, sizeof(*data), &it);
	/* Linux's Connect is an admin (or I/O) command with that queue's timeout */
	tmo = qid ? c->fabrics.opts.io_tmo_ms : c->fabrics.opts.admin_tmo_ms;
	tq->rx_deadline_ms = mono_ms() + tmo;
	for (; !ret;) {
		_Alignas(8) uint8_t rbuf[NVME_TCP_HDR_BUF];
		const struct nvme_tcp_hdr *ch = (const void *)rbuf;

		ret = tcp_recv_header(tq, rbuf, &hdr_len);
		if (ret)
			break;
		if (ch->type == NVME_TCP_R2T && !incap) {
			const struct nvme_tcp_r2t *r = (const void *)rbuf;
			uint32_t off = le32toh(r->r2to), len = le32toh(r->r2tl);

			if (off > sizeof(*data) || len > sizeof(*data) - off) {
				ret = -EPROTO;
				break;
			}
			ret = tcp_send_h2c(tq, cmd->cmd.cid, r->ttag, &it, off, len, &xfer_err);
			continue;
		}
		if (ch->type != NVME_TCP_RSP) {
			ret = -EPROTO;
			break;
		}
		const struct ucmd_nvme_cqe *cqe = &((const struct nvme_tcp_rsp *)rbuf)->cqe;
		uint16_t st = ucmd_nvme_cqe_status(cqe);

		*status = st;
		if (st) {
			ret = last_error_set(-ECONNREFUSED, "nvme-tcp: Connect (queue %u) to %s "
					     "refused: status %#x (dw0 %#x)", qid, c->fabrics.opts.subsysnqn, st,
					     le32toh(cqe->dw0));
		} else if (!qid) {
			c->fabrics.cntlid = (uint16_t)le32toh(cqe->dw0);
		}
		break;
	}
	tq->rx_deadline_ms = 0;
	iov_iter_release(&it);
	free(data);
	if (ret == -EPROTO)
		last_error_set(ret, "nvme-tcp: a malformed answer to Connect (queue %u)", qid);
	else if (ret == -ETIMEDOUT)
		last_error_set(ret, "nvme-tcp: no answer to Connect (queue %u) from %s:%s within "
			       "%u ms (%s)", qid, c->fabrics.opts.traddr, c->fabrics.opts.trsvcid, tmo,
			       qid ? "io_timeout" : "admin_timeout");
	return ret;
}

/*
 * Connect queue qid. An I/O queue asks for no SQ flow control first: the
 * host never reads SQHD (it holds no more commands than the queue has
 * entries), and the controller may then end a read that succeeds with its
 * C2HData alone (the SUCCESS flag), one PDU per read instead of two, as
 * Linux's nvme-tcp does with nvme-cli's --disable-sqflow. A controller that
 * cannot (Connect Invalid Parameters, or Invalid Field from one that reads
 * CATTR as reserved) is asked again on the same connection without it.
 */
static int tcp_connect_cmd(struct nvme_tcp_ctrl *c, struct nvme_tcp_queue *tq, uint16_t qid,
			   uint16_t sqsize)
{
	uint16_t st;
	int ret;

	if (!qid)
		return tcp_connect_once(c, tq, qid, sqsize, 0, &st);
	ret = tcp_connect_once(c, tq, qid, sqsize, NVMF_CONNECT_DISABLE_SQFLOW, &st);
	st &= 0x7ff;	/* SCT and SC */
	if (ret == -ECONNREFUSED &&
	    (st == (NVME_SCT_CMD_SPECIFIC << NVME_SCT_SHIFT | NVMF_SC_CONNECT_INVALID_PARAM) ||
	     st == NVME_SC_INVALID_FIELD))
		ret = tcp_connect_once(c, tq, qid, sqsize, 0, &st);
	return ret;
}

static int tcp_start_queue(struct nvme_host *h, struct nvme_queue *q, uint32_t inline_max)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);
	struct nvme_tcp_queue *tq = calloc(1, sizeof(*tq));
	int ret;

	if (!tq)
		return -ENOMEM;
	q->priv = tq;
	tq->nq = q;
	tq->fd = -1;
	tq->polled = q->polled;
	pthread_mutex_init(&tq->send_lock, NULL);
	pthread_mutex_init(&tq->rx_lock, NULL);
	tq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (tq->kick_fd < 0)
		return -errno;
	tq->rxq = malloc(NVME_TCP_RXQ);
	tq->tx_buf = malloc(NVME_TCP_TXQ);
	if (!tq->rxq || !tq->tx_buf)
		return -ENOMEM;
	tq->inline_max = inline_max < NVME_TCP_BUF ? inline_max : NVME_TCP_BUF;
	tq->lim.from_host = false;
	tq->lim.pda = 0;
	tq->lim.max_data = UINT32_MAX;
	ret = tcp_connect_socket(c, &tq->fd);
	if (!ret)
		ret = tcp_init_connection(c, tq);
	if (!ret)
		ret = tcp_connect_cmd(c, tq, q->qid, (uint16_t)(q->q_depth - 1));
	if (ret)
		return ret;
	ret = nvme_tcp_start_rx(tq);
	if (!ret)
		q->live = true;
	return ret;
}

int nvme_tcp_start_rx(struct nvme_tcp_queue *tq)
{
	int ret;

	atomic_store(&tq->rx_err, 0);	/* a new connection: the old one's error is past */
	ret = pthread_create(&tq->rx_thread, NULL, tq->polled ? tcp_rx_thread_polled : tcp_rx_thread,
			     tq);

	if (ret)
		return -ret;
	tq->rx_started = true;
	return 0;
}

void nvme_tcp_join_rx(struct nvme_tcp_queue *tq)
{
	if (tq->rx_started) {
		pthread_join(tq->rx_thread, NULL);
		tq->rx_started = false;
	}
}

/*
 * A new connection for a queue whose receiver is joined. It takes the old
 * socket's descriptor number (dup2), so a timeout handler's shutdown()
 * never reaches another socket that reused the number.
 */
int nvme_tcp_reconnect_queue(struct nvme_host *h, struct nvme_queue *q)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);
	struct nvme_tcp_queue *tq = q->priv;
	int fd, ret = tcp_connect_socket(c, &fd);

	if (ret)
		return ret;
	if (dup2(fd, tq->fd) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	close(fd);
	rx_reset(tq);
	/* what was staged for the lost connection is sent again by nvme_tcp_resend() */
	pthread_mutex_lock(&tq->send_lock);
	tcp_drop_staged(tq);
	atomic_store(&tq->rx_watching, false);	/* until the new receiver watches */
	pthread_mutex_unlock(&tq->send_lock);
	memset(&tq->lim, 0, sizeof(tq->lim));
	tq->lim.max_data = UINT32_MAX;
	tq->hdgst = tq->ddgst = false;
	tq->cpda = 0;
	ret = tcp_init_connection(c, tq);
	if (!ret)
		ret = tcp_connect_cmd(c, tq, q->qid, (uint16_t)(q->q_depth - 1));
	return ret;
}

/* A command without data and its CapsuleResp, before the receiver runs. */
int nvme_tcp_raw_cmd(struct nvme_tcp_queue *tq, struct ucmd_nvme_sqe *sqe, uint64_t *result)
{
	_Alignas(8) uint8_t hdr[NVME_TCP_HDR_BUF] = { 0 };
	struct nvme_tcp_cmd *cmd = (struct nvme_tcp_cmd *)hdr;
	struct nvme_tcp_sgl *sgl = (struct nvme_tcp_sgl *)(void *)&cmd->cmd.dptr;
	uint32_t pre, hdr_len;
	int ret;

	cmd->cmd = *sqe;
	cmd->cmd.flags = NVME_CMD_PSDT_SGL;
	memset(sgl, 0, sizeof(*sgl));
	sgl->type = NVME_TCP_SGL_TRANSPORT;
	pre = nvme_tcp_build_ch(&cmd->hdr, NVME_TCP_CMD, 0, 0, tq->hdgst, tq->ddgst, tq->cpda);
	ret = tcp_send_pdu(tq, hdr, pre, NULL, 0);
	tq->rx_deadline_ms = mono_ms() + nvme_tcp_ctrl(tq->nq->host)->fabrics.opts.admin_tmo_ms;
	if (!ret)
		ret = tcp_recv_header(tq, hdr, &hdr_len);
	tq->rx_deadline_ms = 0;
	if (ret)
		return ret;
	if (cmd->hdr.type != NVME_TCP_RSP)
		return -EPROTO;
	const struct ucmd_nvme_cqe *cqe = &((const struct nvme_tcp_rsp *)hdr)->cqe;

	if (result)
		*result = le32toh(cqe->dw0) | (uint64_t)le32toh(cqe->dw1) << 32;
	return ucmd_nvme_cqe_status(cqe) ? -EIO : 0;
}

static int tcp_setup_admin_queue(struct nvme_host *h)
{
	int ret;

	nvme_queue_init_common(h, &h->queues[0], 0, NVME_ADMIN_DEPTH, false);
	ret = tcp_start_queue(h, &h->queues[0], NVME_TCP_ADMIN_CCSZ);
	if (!ret)
		ret = nvmf_start_keep_alive(&nvme_tcp_ctrl(h)->fabrics);
	if (!ret)
		ret = nvme_tcp_recovery_start(h);
	return ret;
}

static int tcp_setup_io_queue(struct nvme_host *h, struct nvme_queue *q)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);

	/* IOCCSZ counts 16-byte units of the whole capsule, the SQE included. */
	if (!c->io_inline_max && h->id->ioccsz) {
		uint32_t ccsz = le32toh(h->id->ioccsz) * 16u;

		c->io_inline_max = ccsz > sizeof(struct ucmd_nvme_sqe) ?
				   ccsz - (uint32_t)sizeof(struct ucmd_nvme_sqe) : 0;
	}
	return tcp_start_queue(h, q, c->io_inline_max);
}

static void tcp_stop_queues(struct nvme_host *h)
{
	unsigned n = h->opts.nr_io_queues + h->opts.nr_poll_queues + 1;

	/* No reconnect from here on: waiting submitters fail, -EIO. */
	nvme_tcp_recovery_stop(h);
	/* Closing every connection first fails whatever the keep-alive waits for. */
	for (unsigned i = 0; i < n; i++) {
		struct nvme_tcp_queue *tq = h->queues[i].priv;

		h->queues[i].live = false;
		if (tq && tq->fd >= 0)
			shutdown(tq->fd, SHUT_RDWR);
	}
	for (unsigned i = 0; i < n; i++) {
		struct nvme_tcp_queue *tq = h->queues[i].priv;

		if (tq && tq->rx_started) {
			pthread_join(tq->rx_thread, NULL);
			tq->rx_started = false;
		}
	}
	nvmf_stop_keep_alive(&nvme_tcp_ctrl(h)->fabrics);
}

static void tcp_free_queue(struct nvme_queue *q)
{
	struct nvme_tcp_queue *tq = q->priv;

	if (!tq)
		return;
	if (tq->rx_started) {
		shutdown(tq->fd, SHUT_RDWR);
		pthread_join(tq->rx_thread, NULL);
	}
	if (tq->fd >= 0)
		close(tq->fd);
	if (tq->kick_fd >= 0)
		close(tq->kick_fd);
	pthread_mutex_destroy(&tq->send_lock);
	pthread_mutex_destroy(&tq->rx_lock);
	free(tq->rxq);
	free(tq->tx_buf);
	free(tq);
	q->priv = NULL;
}

static void tcp_free_ctrl(struct nvme_host *h)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);

	nvmf_stop_keep_alive(&c->fabrics);
	nvme_tcp_recovery_stop(h);
	nvme_tcp_state_destroy(c);
	free(c);
}

/*
 * Property Get/Set, refused while the association is being re-established
 * or lost: a detach must not wait ctrl_loss_tmo for its shutdown.
 */
static int tcp_reg_read32(struct nvme_host *h, uint32_t off, uint32_t *val)
{
	*val = 0;
	return nvme_tcp_unreachable(nvme_tcp_ctrl(h)) ? -ENOTCONN : nvmf_reg_read32(h, off, val);
}

static int tcp_reg_read64(struct nvme_host *h, uint32_t off, uint64_t *val)
{
	*val = 0;
	return nvme_tcp_unreachable(nvme_tcp_ctrl(h)) ? -ENOTCONN : nvmf_reg_read64(h, off, val);
}

static int tcp_reg_write32(struct nvme_host *h, uint32_t off, uint32_t val)
{
	return nvme_tcp_unreachable(nvme_tcp_ctrl(h)) ? -ENOTCONN : nvmf_reg_write32(h, off, val);
}

/* The association's state, as the multipath head weighs its paths. */
static int tcp_path_state(struct nvme_host *h)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);
	enum nvme_tcp_state st;

	pthread_mutex_lock(&c->state_lock);
	st = c->state;
	pthread_mutex_unlock(&c->state_lock);
	return st == NVME_TCP_LIVE ? NVME_PATH_LIVE :
	       st == NVME_TCP_RECONNECTING ? NVME_PATH_CONNECTING : NVME_PATH_GONE;
}

static const struct blk_mq_ops nvme_tcp_mq_ops = {
	.queue_rq = tcp_queue_rq,
	.commit_rqs = tcp_commit_rqs,
	.timeout = tcp_timeout,
	.init_hctx = nvme_init_hctx,
};

static const struct nvme_ctrl_ops nvme_tcp_ctrl_ops = {
	.name = "tcp",
	.reg_read32 = tcp_reg_read32,
	.reg_read64 = tcp_reg_read64,
	.reg_write32 = tcp_reg_write32,
	.setup_admin_queue = tcp_setup_admin_queue,
	.setup_io_queue = tcp_setup_io_queue,
	.stop_queues = tcp_stop_queues,
	.free_queue = tcp_free_queue,
	.free_ctrl = tcp_free_ctrl,
	.map_data = tcp_map_data,
	.poll = tcp_poll,
	.wait_src = tcp_wait_src,
	.path_state = tcp_path_state,
	.admin_mq_ops = &nvme_tcp_mq_ops,
	.mq_ops = &nvme_tcp_mq_ops,
};

int nvme_tcp_attach(struct ucmd_engine *e, const char *url,
		      const struct ucmd_nvme_host_opts *opts,
		      const struct ucmd_nvme_tcp_opts *topts, bool ns_hidden,
		      struct ucmd_nvme_host **out)
{
	struct nvmf_ctrl_options *o;
	struct nvme_tcp_ctrl *c;
	struct nvme_host *h;
	const char *why = NULL;
	int ret;

	last_error_clear();
	if (!e || !url || !out)
		return last_error_set(-EINVAL, "ucmd_nvme_attach_tcp: %s is NULL",
				      !e ? "the engine" : !url ? "the URL" : "out");
	c = calloc(1, sizeof(*c));
	if (!c)
		return last_error_set(-ENOMEM, "ucmd_nvme_attach_tcp: out of memory");
	h = &c->host;
	nvme_init_ctrl(h, e, &nvme_tcp_ctrl_ops, opts);
	nvme_tcp_state_init(c);
	c->fabrics.host = h;
	o = &c->fabrics.opts;
	o->reconnect_delay_ms = NVMF_DEFAULT_RECONNECT_MS;
	o->ctrl_loss_tmo_ms = NVMF_DEFAULT_CTRL_LOSS_MS;
	o->handshake_tmo_ms = NVME_TCP_DEFAULT_ICRESP_MS;
	o->admin_tmo_ms = NVMF_DEFAULT_ADMIN_MS;
	o->io_tmo_ms = NVMF_DEFAULT_IO_MS;
	if (topts && topts->reconnect_delay_ms)
		o->reconnect_delay_ms = topts->reconnect_delay_ms;
	if (topts && topts->ctrl_loss_tmo_ms)
		o->ctrl_loss_tmo_ms = topts->ctrl_loss_tmo_ms < 0 ? -1 : topts->ctrl_loss_tmo_ms;
	if (topts && topts->no_reconnect)
		o->ctrl_loss_tmo_ms = 0;
	ret = nvmf_parse_url(o, url, NVME_TCP_DEFAULT_PORT, &why);
	if (ret) {
		last_error_set(ret, "ucmd_nvme_attach_tcp: %s: %s", url, why);
		goto fail;
	}
	if (topts && topts->hdr_digest)
		o->hdr_digest = true;
	if (topts && topts->data_digest)
		o->data_digest = true;
	o->kato_ms = topts && topts->kato_ms ? topts->kato_ms : NVMF_DEFAULT_KATO_MS;
	h->admin_timeout_ms = o->admin_tmo_ms;
	h->io_timeout_ms = o->io_tmo_ms;
	ret = nvmf_host_identity(o, topts ? topts->hostnqn : NULL, topts ? topts->hostid : NULL);
	if (ret) {
		last_error_set(ret, "ucmd_nvme_attach_tcp: the host NQN or host ID is invalid");
		goto fail;
	}
	h->ns_hidden = ns_hidden;
	ret = nvme_host_start(h);
	if (ret) {
		/* a connection that failed under the attach: its receiver or timer said why */
		pthread_mutex_lock(&c->state_lock);
		if (c->why[0])
			ret = last_error_set(c->why_err, "%s", c->why);
		pthread_mutex_unlock(&c->state_lock);
		goto fail;
	}
	/* From here a lost connection is reconnected instead of failing the attach. */
	pthread_mutex_lock(&c->state_lock);
	if (c->state == NVME_TCP_NEW)
		c->state = NVME_TCP_LIVE;
	pthread_mutex_unlock(&c->state_lock);
	*out = (struct ucmd_nvme_host *)h;
	return 0;
fail:
	nvme_host_free(h);
	return last_error_default(ret, "ucmd_nvme_attach_tcp: bringing up the controller");
}

int ucmd_nvme_attach_tcp(struct ucmd_engine *e, const char *url,
			 const struct ucmd_nvme_host_opts *opts,
			 const struct ucmd_nvme_tcp_opts *topts, struct ucmd_nvme_host **out)
{
	return nvme_tcp_attach(e, url, opts, topts, false, out);
}

/*
 * The admin connection's local address, numeric and without its port (as
 * Linux's src_addr), while the association is live: the socket is not
 * replaced before a reconnect has left LIVE. "" otherwise.
 */
static void tcp_src_addr(struct nvme_tcp_ctrl *c, char *out, size_t len)
{
	struct nvme_tcp_queue *tq = c->host.queues ? c->host.queues[0].priv : NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const void *a = NULL;

	out[0] = 0;
	pthread_mutex_lock(&c->state_lock);
	if (c->state == NVME_TCP_LIVE && tq && tq->fd >= 0 &&
	    !getsockname(tq->fd, (struct sockaddr *)&ss, &sl)) {
		if (ss.ss_family == AF_INET)
			a = &((struct sockaddr_in *)&ss)->sin_addr;
		else if (ss.ss_family == AF_INET6)
			a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		if (!a || !inet_ntop(ss.ss_family, a, out, (socklen_t)len))
			out[0] = 0;
	}
	pthread_mutex_unlock(&c->state_lock);
}

int ucmd_nvme_tcp_info(struct ucmd_nvme_host *host, struct ucmd_nvme_tcp_info *info)
{
	struct nvme_host *h = (struct nvme_host *)host;
	struct nvme_tcp_ctrl *c;
	struct nvme_tcp_queue *tq;

	if (!h || !info || h->ops != &nvme_tcp_ctrl_ops)
		return -EINVAL;
	c = nvme_tcp_ctrl(h);
	tq = h->queues[0].priv;
	memset(info, 0, sizeof(*info));
	snprintf(info->hostnqn, sizeof(info->hostnqn), "%s", c->fabrics.opts.hostnqn);
	snprintf(info->subnqn, sizeof(info->subnqn), "%s", c->fabrics.opts.subsysnqn);
	info->cntlid = c->fabrics.cntlid;
	info->nr_queues = h->nr_queues;
	info->hdr_digest = tq && tq->hdgst;
	info->data_digest = tq && tq->ddgst;
	info->io_inline_max = c->io_inline_max;
	info->keep_alives = atomic_load(&c->fabrics.ka_sent);
	info->reconnects = atomic_load(&c->reconnects);
	info->polled_completions = atomic_load(&c->polled_cqes);
	info->waited_completions = atomic_load(&c->waited_cqes);
	snprintf(info->traddr, sizeof(info->traddr), "%s", c->fabrics.opts.traddr);
	snprintf(info->trsvcid, sizeof(info->trsvcid), "%s", c->fabrics.opts.trsvcid);
	tcp_src_addr(c, info->src_addr, sizeof(info->src_addr));
	const uint8_t *u = c->fabrics.opts.hostid;

	snprintf(info->hostid, sizeof(info->hostid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
	return 0;
}
