// SPDX-License-Identifier: MIT
/*
 * One NVMe/TCP connection of the target: the receive thread reads PDUs
 * (ICReq, CapsuleCmd with in-capsule data, H2CData, H2CTermReq), checks
 * each header with pdu.c before trusting a byte of it, and starts each
 * command once its data fits the connection's memory bound: R2T for what
 * the host is to send, then the target's own answer or a submission to
 * the engine (target_io.c). Responses are queued and go out together in
 * one sendmsg whenever the receiver has parsed all it received.
 * A PDU that breaks the rules gets a C2HTermReq and the connection is
 * closed; nothing of it reaches another connection.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nvme/target/tcp.h"

/* ---- sending ---------------------------------------------------------- */

/*
 * Send all of iov, within the send timeout counted from the start: a peer
 * that reads a little now and then cannot make each partial send restart
 * it. -ETIMEDOUT when it passes (the peer stopped reading, or reads too
 * slowly to take what it asked for), else 0 or -errno.
 */
static int send_all(struct nvmet_tcp_conn *c, struct iovec *iov, int n)
{
	uint64_t end = nvmet_tcp_now_ms() + c->t->lim.send_ms;

	while (n) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(c->sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0) {
			struct pollfd pf = { .fd = c->sock, .events = POLLOUT };
			uint64_t now = nvmet_tcp_now_ms();

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			if (now >= end) {
				/*
				 * what is queued would still trickle out after the
				 * close: a reset ends it now
				 */
				struct linger lg = { .l_onoff = 1, .l_linger = 0 };

				setsockopt(c->sock, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				return -ETIMEDOUT;
			}
			if (poll(&pf, 1, (int)(end - now)) < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		while (n && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* The iovecs of one PDU (header + padding, data, data digest) at iov; their count. */
static int pdu_iov(void *hdr, const void *data, uint32_t data_len, uint32_t *ddgst,
		   struct iovec *iov)
{
	struct nvme_tcp_hdr *ch = hdr;
	uint32_t pre;
	int n = 0;

	if (ch->flags & NVME_TCP_F_HDGST)
		nvme_tcp_put_hdgst(hdr);
	pre = data_len ? ch->pdo : ch->hlen + (ch->flags & NVME_TCP_F_HDGST ? NVME_TCP_DIGEST_LEN : 0);
	iov[n++] = (struct iovec){ hdr, pre };
	if (data_len) {
		iov[n++] = (struct iovec){ (void *)data, data_len };
		if (ch->flags & NVME_TCP_F_DDGST) {
			*ddgst = htole32(nvme_tcp_crc32c(data, data_len));
			iov[n++] = (struct iovec){ ddgst, sizeof(*ddgst) };
		}
	}
	return n;
}

/*
 * A PDU now (ICResp), after any queued ones (so that PDUs leave in the
 * order they were made); 0 or -errno.
 */
static int send_pdu(struct nvmet_tcp_conn *c, void *hdr, const void *data, uint32_t data_len)
{
	struct iovec iov[3];
	uint32_t ddgst = 0;
	int n, ret;

	nvmet_tcp_conn_flush_out(c);
	n = pdu_iov(hdr, data, data_len, &ddgst, iov);
	if (atomic_load(&c->dead))
		return -EPIPE;
	ret = send_all(c, iov, n);
	if (ret)
		nvmet_tcp_conn_fail(c, 0, 0, NULL, 0);
	return ret;
}

/*
 * Queue one or two PDUs of slot s (headers in s->hdr) for the next flush;
 * release: the slot goes back once they are sent (its response).
 */
static void queue_pdus(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, void *hdr, const void *data,
		       uint32_t data_len, void *hdr2, bool release)
{
	unsigned n;

	if (c->out_nslot == NVMET_TCP_OUT_MAX)
		nvmet_tcp_conn_flush_out(c);
	n = c->out_niov;
	n += (unsigned)pdu_iov(hdr, data, data_len, &s->ddgst, c->out_iov + n);
	if (hdr2)
		n += (unsigned)pdu_iov(hdr2, NULL, 0, NULL, c->out_iov + n);
	c->out_niov = n;
	c->out_release[c->out_nslot] = release;
	c->out_slot[c->out_nslot++] = s;
}

/* A slot whose response is sent (or never will be): its memory and itself go back. */
static void slot_release(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s)
{
	nvmet_tcp_buf_put(s);
	c->mem_used -= s->mem;
	s->mem = 0;
	s->state = SLOT_FREE;
}

static void dispatch(struct nvmet_tcp_conn *c);

void nvmet_tcp_conn_flush_out(struct nvmet_tcp_conn *c)
{
	struct nvmet_tcp_slot *done[NVMET_TCP_OUT_MAX];
	bool release[NVMET_TCP_OUT_MAX];
	unsigned n;
	int ret = 0;

	n = c->out_nslot;
	if (n && !atomic_load(&c->dead))
		ret = send_all(c, c->out_iov, (int)c->out_niov);
	/* copied: the slots' release may queue more (dispatch) */
	memcpy(done, c->out_slot, n * sizeof(done[0]));
	memcpy(release, c->out_release, n * sizeof(release[0]));
	c->out_nslot = 0;
	c->out_niov = 0;
	if (!n)
		return;
	/* a failed send has failed the connection: the slots go back all the same */
	if (ret == -ETIMEDOUT && c->t->log)
		c->t->log("nvme-tcp: %s (%s) took not what was sent in %u ms: closed", c->peer,
			  c->owner, c->t->lim.send_ms);
	if (ret)
		nvmet_tcp_conn_fail(c, 0, 0, NULL, 0);
	for (unsigned i = 0; i < n; i++)
		if (release[i])
			slot_release(c, done[i]);
	dispatch(c);	/* the memory they held may start the next waiting commands */
}

static void build_rsp(struct nvmet_tcp_conn *c, uint8_t *buf, const struct ucmd_nvme_cqe *cqe)
{
	struct nvme_tcp_rsp *r = (void *)buf;

	memset(buf, 0, NVME_TCP_HDR_BUF);
	nvme_tcp_build_ch(&r->hdr, NVME_TCP_RSP, 0, 0, c->hdgst, c->ddgst, c->hpda);
	r->cqe = *cqe;
}


/*
 * A read's data (one C2HData, the last) and its CapsuleResp; or, when the
 * host disabled SQ flow control and the completion says nothing but
 * success (status and result 0: what the host assumes), the C2HData alone
 * with SUCCESS set, which completes the command (NVMe/TCP 1.0 section
 * 3.6.2.7; Linux's nvmet-tcp does the same).
 */
static void queue_c2h_rsp(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, uint32_t len,
			  const struct ucmd_nvme_cqe *cqe)
{
	struct nvme_tcp_data *d = (void *)s->hdr[0];
	bool success = c->sqflow_off && !cqe->status && !cqe->dw0 && !cqe->dw1;

	memset(s->hdr[0], 0, sizeof(s->hdr[0]));
	nvme_tcp_build_ch(&d->hdr, NVME_TCP_C2H_DATA,
			  NVME_TCP_F_DATA_LAST | (success ? NVME_TCP_F_DATA_SUCCESS : 0), len,
			  c->hdgst, c->ddgst, c->hpda);
	d->cccid = s->sqe.cid;
	d->datao = 0;
	d->datal = htole32(len);
	if (len >= s->len)
		s->unsent = false;	/* all it filled goes to the host */
	if (success) {
		queue_pdus(c, s, s->hdr[0], s->buf, len, NULL, true);
		return;
	}
	build_rsp(c, s->hdr[1], cqe);
	queue_pdus(c, s, s->hdr[0], s->buf, len, s->hdr[1], true);
}

/*
 * R2T for all of a write's data, queued: the host sends nothing before it
 * has it, so s->hdr[0] is free again by the time the response needs it.
 */
static void queue_r2t(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, uint16_t ttag, uint32_t len)
{
	struct nvme_tcp_r2t *r = (void *)s->hdr[0];

	memset(s->hdr[0], 0, sizeof(s->hdr[0]));
	nvme_tcp_build_ch(&r->hdr, NVME_TCP_R2T, 0, 0, c->hdgst, c->ddgst, c->hpda);
	r->cccid = s->sqe.cid;
	r->ttag = htole16(ttag);
	r->r2to = 0;
	r->r2tl = htole32(len);
	queue_pdus(c, s, s->hdr[0], NULL, 0, NULL, false);
}

void nvmet_tcp_conn_fail(struct nvmet_tcp_conn *c, uint16_t fes, uint32_t fei, const void *hdr,
		    size_t hdr_len)
{
	if (fes && !atomic_load(&c->dead)) {
		uint8_t buf[sizeof(struct nvme_tcp_term) + NVME_TCP_TERM_MAX_DATA];
		struct iovec iov;
		uint32_t n = nvme_tcp_build_term((void *)buf, sizeof(buf), NVME_TCP_C2H_TERM, fes,
						 fei, hdr, hdr_len);

		iov = (struct iovec){ buf, n };
		send_all(c, &iov, 1);	/* best effort: the connection ends anyway */
	}
	atomic_store(&c->dead, true);
	/* the receiver sees its socket end */
	shutdown(c->sock, SHUT_RDWR);
}

/* ---- receiving -------------------------------------------------------- */

/* Whether the connection must end now: stopping, failed, its controller gone or silent. */
static bool must_end(struct nvmet_tcp_conn *c)
{
	struct nvmet_tcp_ctrl *ctrl = c->ctrl;

	if (atomic_load(&c->dead) || atomic_load(&c->t->stopping))
		return true;
	if (!ctrl) {
		/* a peer that holds a connection without using it: ICReq, then Connect, in time */
		uint64_t age = nvmet_tcp_now_ms() - c->accepted_ms;
		const char *what = !c->ic_done && age > c->t->lim.icreq_ms ? "ICReq" :
				   age > c->t->lim.connect_ms ? "Connect" : NULL;

		if (what && c->t->log)
			c->t->log("nvme-tcp: %s (%s): no %s within %u ms: closed", c->peer, c->owner,
				  what, what[0] == 'I' ? c->t->lim.icreq_ms : c->t->lim.connect_ms);
		return what != NULL;
	}
	if (atomic_load(&ctrl->dead))
		return true;
	/*
	 * Keep Alive Timeout: the admin queue owns the timer; any command on
	 * it counts, as with Traffic Based Keep Alive. Twice KATO before
	 * giving up, as Linux's target allows a grace on top of it.
	 */
	if (c->qid == 0 && ctrl->kato_ms && nvmet_tcp_now_ms() - c->last_ka > 2ull * ctrl->kato_ms) {
		atomic_store(&ctrl->dead, true);
		return true;
	}
	return false;
}

/*
 * Nothing to read: sleep until the socket, the ring (a late completion)
 * or the target's stop says something, or a second passes (keep-alive,
 * the ICReq and Connect deadlines).
 */
static int rx_wait(struct nvmet_tcp_conn *c)
{
	struct pollfd pf[3] = {
		{ .fd = c->sock, .events = POLLIN },
		{ .fd = c->t->stop_fd, .events = POLLIN },
	};
	int ret = 0;

	/* a change of the port's ANA state is told here, within a second of it */
	nvmet_tcp_ana_notice(c);
	nvmet_tcp_io_wait_begin(c, &pf[2]);
	if (pf[2].fd != -2 && poll(pf, 3, 1000) < 0 && errno != EINTR)
		ret = -errno;
	nvmet_tcp_io_wait_end(c, &pf[2]);
	if (!ret && pf[1].revents)
		ret = -ECONNABORTED;
	return ret;
}

/*
 * Read exactly len bytes; 0, or -errno when the connection must end. They
 * come from the receive buffer, which one recv fills with as much as there
 * is; before each recv, the commands parsed so far are submitted and what
 * completed is answered (nvmet_tcp_io_flush), so one system call each way
 * serves all the capsules one receive brought.
 *
 * A recv that took less than it asked for emptied the socket: the next
 * one would find nothing (EAGAIN, a system call of about 1 us here, at the
 * end of nearly every pass), so the thread goes straight to its poll,
 * which returns at once when more came meanwhile. What the host sends
 * later, the rest of a PDU cut in two included, wakes that poll.
 *
 * With nothing in flight in the engine (ucmdd's inline controllers
 * complete a command inside its submission: nearly always), no
 * completion can come while the thread sleeps, so it sleeps in the recv
 * itself: one system call per pass instead of a recv and a poll (and,
 * before a sleep, the recv that found nothing). The socket's receive
 * timeout (a second) bounds that sleep as the poll's did, for the
 * keep-alive and the ICReq and Connect deadlines, and the port's stop
 * and take-down shut the socket, which ends the recv.
 */
static int recv_full(struct nvmet_tcp_conn *c, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		bool idle;
		int flags = MSG_DONTWAIT;
		ssize_t r;

		if (c->rx_off < c->rx_len) {
			size_t n = c->rx_len - c->rx_off;

			if (n > len)
				n = len;
			memcpy(p, c->rxbuf + c->rx_off, n);
			c->rx_off += (uint32_t)n;
			p += n;
			len -= n;
			continue;
		}
		nvmet_tcp_io_flush(c);
		if (must_end(c))
			return -ECONNABORTED;
		idle = nvmet_tcp_io_idle(c);
		if (idle) {
			/* what rx_wait does before it sleeps: an ANA change, told now */
			nvmet_tcp_ana_notice(c);
			nvmet_tcp_conn_flush_out(c);
			flags = 0;
		} else if (c->rx_short) {
			/* then round again: a late completion may have woken it, to be flushed */
			c->rx_short = false;
			r = rx_wait(c);
			if (r)
				return (int)r;
			continue;
		}
		if (len >= NVMET_TCP_RXBUF / 2) {
			/* a large remainder of data goes straight to its place */
			r = recv(c->sock, p, len, flags);
			if (r > 0) {
				c->rx_short = (size_t)r < len;
				p += r;
				len -= (size_t)r;
				continue;
			}
		} else {
			r = recv(c->sock, c->rxbuf, NVMET_TCP_RXBUF, flags);
			if (r > 0) {
				c->rx_short = (size_t)r < NVMET_TCP_RXBUF;
				c->rx_off = 0;
				c->rx_len = (uint32_t)r;
				continue;
			}
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		if (idle)
			continue;	/* the receive timeout: the deadlines are looked at again */
		r = rx_wait(c);
		if (r)
			return (int)r;
	}
	return 0;
}

static int skip(struct nvmet_tcp_conn *c, size_t len)
{
	uint8_t junk[256];

	while (len) {
		size_t n = len < sizeof(junk) ? len : sizeof(junk);
		int ret = recv_full(c, junk, n);

		if (ret)
			return ret;
		len -= n;
	}
	return 0;
}

/* Read a PDU's data (after the header and its padding up to pdo) and check its digest. */
static int recv_data(struct nvmet_tcp_conn *c, const struct nvme_tcp_hdr *ch, uint32_t hdr_len,
		     void *dst, uint32_t len)
{
	uint32_t dd, want;
	int ret;

	ret = skip(c, ch->pdo - hdr_len);
	if (!ret)
		ret = recv_full(c, dst, len);
	if (ret || !(ch->flags & NVME_TCP_F_DDGST))
		return ret;
	ret = recv_full(c, &dd, sizeof(dd));
	if (ret)
		return ret;
	want = nvme_tcp_crc32c(dst, len);
	/*
	 * NVMe/TCP has no TermReq status for a data digest error: the
	 * connection is closed (the host reconnects and retries).
	 */
	return le32toh(dd) == want ? 0 : -EBADMSG;
}

static int icreq(struct nvmet_tcp_conn *c)
{
	struct nvme_tcp_rx_limits lim = { .from_host = true, .max_data = 0 };
	_Alignas(8) uint8_t buf[NVME_TCP_HDR_BUF] = { 0 };
	struct nvme_tcp_icreq *req = (void *)buf;
	struct nvme_tcp_icresp *rsp;
	uint32_t hdr_len, fei;
	int ret;

	ret = recv_full(c, buf, sizeof(struct nvme_tcp_hdr));
	if (ret)
		return ret;
	ret = nvme_tcp_check_ch(&req->hdr, &lim, &hdr_len, &fei);
	if (!ret)
		ret = recv_full(c, buf + sizeof(struct nvme_tcp_hdr),
				hdr_len - sizeof(struct nvme_tcp_hdr));
	if (ret == -ECONNRESET || ret == -ECONNABORTED)
		return ret;
	if (!ret)
		ret = nvme_tcp_check_header(buf, hdr_len, &lim, &fei);
	if (ret) {
		nvmet_tcp_conn_fail(c, (uint16_t)-ret, fei, buf, sizeof(*req));
		return ret;
	}
	c->hdgst = req->digest & NVME_TCP_HDR_DIGEST_ENABLE;
	c->ddgst = req->digest & NVME_TCP_DATA_DIGEST_ENABLE;
	c->hpda = req->hpda;
	rsp = calloc(1, NVME_TCP_HDR_BUF);
	if (!rsp)
		return -ENOMEM;
	nvme_tcp_build_ch(&rsp->hdr, NVME_TCP_ICRESP, 0, 0, false, false, 0);
	rsp->pfv = htole16(NVME_TCP_PFV_1_0);
	rsp->cpda = 0;	/* the host's data may start right after its header */
	rsp->digest = req->digest;	/* we do both digests: accept what is asked */
	rsp->maxh2cdata = htole32(NVMET_TCP_MAXH2CDATA);
	ret = send_pdu(c, rsp, NULL, 0);
	free(rsp);
	c->ic_done = true;
	return ret;
}

static unsigned nr_slots(const struct nvmet_tcp_conn *c)
{
	unsigned n = c->ctrl ? c->sqsize + 1u : 1u;

	return n > NVMET_TCP_QUEUE_SIZE ? NVMET_TCP_QUEUE_SIZE : n;
}

/* A command refused before it runs: its response, queued as any other. */
static int reject(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, uint16_t status)
{
	struct ucmd_nvme_cqe cqe = { 0 };

	cqe.status = htole16((uint16_t)(status << 1));
	/* nothing is held yet: no buffer of its own, no memory */
	if (!s->icd)
		s->buf = NULL;
	s->mem = 0;
	nvmet_tcp_conn_respond(c, s, &cqe, 0);
	return 0;
}

/* ---- a command's way: memory, data, execution, response ------------------ */

void nvmet_tcp_conn_respond(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, struct ucmd_nvme_cqe *cqe,
		       uint32_t out_len)
{
	cqe->cid = s->sqe.cid;
	cqe->sq_id = htole16(c->qid);
	/*
	 * Without SQ flow control SQHD is reserved (0), except in the Connect
	 * response that agrees to it: FFFFh says so (TP 8005, as nvmet does).
	 */
	if (!c->sqflow_off)
		cqe->sq_head = htole16((uint16_t)(++c->sqhd % (c->sqsize + 1u)));
	else if (s->sqe.opcode == NVMF_OPC_FABRICS && !cqe->status &&
		 ((const struct nvmf_common_sqe *)&s->sqe)->fctype == NVMF_FCTYPE_CONNECT)
		cqe->sq_head = htole16(0xffff);
	else
		cqe->sq_head = 0;
	if (out_len && !cqe->status) {
		queue_c2h_rsp(c, s, out_len, cqe);
	} else {
		build_rsp(c, s->hdr[1], cqe);
		queue_pdus(c, s, s->hdr[1], NULL, 0, NULL, true);
	}
	if (c->disconnecting) {
		/* the host ends this queue: its response goes first */
		nvmet_tcp_conn_flush_out(c);
		nvmet_tcp_conn_fail(c, 0, 0, NULL, 0);
	}
}

/* Execute a command whose data is all there: answered now or by its completion. */
static void exec_slot(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s)
{
	struct ucmd_nvme_cqe cqe = { 0 };
	uint32_t out_len = 0;

	if (nvmet_tcp_cmd_exec(c, s, &cqe, &out_len) == -EINPROGRESS)
		return;
	nvmet_tcp_conn_respond(c, s, &cqe, out_len);
}

/* Memory granted: the command's buffer, then an R2T for its data or its execution. */
static void start_slot(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s)
{
	if (s->mem) {
		/* the command's buffer (the slot's kept one), back when it completes */
		if (nvmet_tcp_buf_get(c, s)) {
			s->buf = NULL;
			struct ucmd_nvme_cqe cqe = { 0 };

			cqe.status = htole16(NVMET_TCP_SC(0, NVME_SC_INTERNAL, 0) << 1);
			nvmet_tcp_conn_respond(c, s, &cqe, 0);
			return;
		}
	}
	if (s->h2c && !s->icd && s->len) {
		s->state = SLOT_WAIT_DATA;	/* on_h2c executes it once all is there */
		s->received = 0;
		/* a failed send fails the connection: the teardown frees s->buf */
		queue_r2t(c, s, (uint16_t)(s - c->slots), s->len);
		return;
	}
	s->state = SLOT_RUNNING;
	exec_slot(c, s);
}

/*
 * Start the commands waiting for memory, in arrival order, while their
 * data fits NVMET_TCP_CONN_MEM. Not nested: a command started here may
 * complete and free memory (nvmet_tcp_conn_flush_out calls back), and the
 * outer loop, which looks again after each command it starts, takes it.
 */
static void dispatch(struct nvmet_tcp_conn *c)
{
	struct nvmet_tcp_slot *s;

	if (c->dispatching)
		return;
	c->dispatching = true;
	while ((s = c->q_head) && !atomic_load(&c->dead) &&
	       s->mem <= NVMET_TCP_CONN_MEM - c->mem_used) {
		c->q_head = s->next;
		if (!c->q_head)
			c->q_tail = NULL;
		c->mem_used += s->mem;
		s->state = SLOT_RUNNING;
		start_slot(c, s);
	}
	c->dispatching = false;
}

static int on_cmd(struct nvmet_tcp_conn *c, const uint8_t *hdr, uint32_t hdr_len)
{
	const struct nvme_tcp_cmd *pdu = (const void *)hdr;
	const struct nvme_tcp_hdr *ch = &pdu->hdr;
	uint32_t icd = nvme_tcp_data_len(ch, c->ddgst);
	struct nvmet_tcp_slot *s = NULL;
	struct nvme_tcp_sgl sgl;
	uint32_t off, len;
	unsigned dir, n = nr_slots(c);
	int ret;

	if (icd > NVMET_TCP_ICD_LEN) {
		nvmet_tcp_conn_fail(c, NVME_TCP_FES_DATA_LIMIT_EXCEEDED, 4, hdr, hdr_len);
		return -EPROTO;
	}
	for (unsigned i = 0; i < n; i++) {
		if (c->slots[i].state == SLOT_FREE) {
			s = &c->slots[i];
			s->state = SLOT_RUNNING;
			break;
		}
	}
	if (!s) {	/* more commands than the queue holds */
		nvmet_tcp_conn_fail(c, NVME_TCP_FES_PDU_SEQ_ERR, 0, hdr, hdr_len);
		return -EPROTO;
	}
	s->sqe = pdu->cmd;
	s->buf = NULL;
	s->len = 0;
	s->received = 0;
	s->icd = false;
	s->h2c = false;
	s->mem = 0;
	if (icd) {
		ret = recv_data(c, ch, hdr_len, s->icd_data, icd);
		if (ret) {
			nvmet_tcp_conn_fail(c, 0, 0, NULL, 0);
			return ret;
		}
	}
	if (c->qid == 0 && c->ctrl)
		c->last_ka = nvmet_tcp_now_ms();

	/* SGL descriptor 1: in-capsule (offset) or transport data block */
	memcpy(&sgl, pdu->cmd.dptr.sgl1, sizeof(sgl));
	len = le32toh(sgl.length);
	dir = nvme_xfer_dir(&s->sqe);
	if (sgl.type == NVME_TCP_SGL_INCAPSULE) {
		off = (uint32_t)le64toh(sgl.addr);
		if (off > icd)
			return reject(c, s, NVMET_TCP_SC(0, NVME_SC_SGL_INVALID_OFFSET, 1));
		if (len > icd - off)
			return reject(c, s, NVMET_TCP_SC(0, NVME_SC_SGL_INVALID_DATA, 1));
		if (dir != 1 && len)	/* in-capsule data only goes to the controller */
			return reject(c, s, NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1));
		s->buf = s->icd_data + off;
		s->len = len;
		s->icd = true;
		s->h2c = true;
	} else if (sgl.type == NVME_TCP_SGL_TRANSPORT) {
		if (icd)	/* data in the capsule the SGL does not describe */
			return reject(c, s, NVMET_TCP_SC(0, NVME_SC_SGL_INVALID_TYPE, 1));
		if (len > NVMET_TCP_MAX_XFER)
			return reject(c, s, NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1));
		if (len && dir != 1 && dir != 2)
			return reject(c, s, NVMET_TCP_SC(0, NVME_SC_INVALID_FIELD, 1));
		s->len = len;
		s->h2c = dir == 1;
	} else if (sgl.type == 0 && !len && !icd) {
		/* a zeroed descriptor: no data, as a null transport SGL says it */
	} else {
		return reject(c, s, NVMET_TCP_SC(0, NVME_SC_SGL_INVALID_TYPE, 1));
	}
	if (!c->ctrl && !(s->sqe.opcode == NVMF_OPC_FABRICS &&
			  ((const struct nvmf_common_sqe *)&s->sqe)->fctype == NVMF_FCTYPE_CONNECT))
		return reject(c, s, NVMET_TCP_SC(0, NVME_SC_CMD_SEQ_ERROR, 1));

	/* its data, unless it came in the capsule, counts against NVMET_TCP_CONN_MEM */
	s->mem = s->len && !s->icd ? s->len : 0;
	if (c->ctrl && nvmet_tcp_cmd_parks(c, &s->sqe)) {
		s->state = SLOT_PARKED;	/* an AER: answered only by events */
		return 0;
	}
	s->state = SLOT_WAIT_MEM;
	s->next = NULL;
	if (c->q_tail)
		c->q_tail->next = s;
	else
		c->q_head = s;
	c->q_tail = s;
	dispatch(c);
	return 0;
}

static int on_h2c(struct nvmet_tcp_conn *c, const uint8_t *hdr, uint32_t hdr_len)
{
	const struct nvme_tcp_data *d = (const void *)hdr;
	uint32_t datao = le32toh(d->datao), datal = le32toh(d->datal);
	uint16_t ttag = le16toh(d->ttag);
	struct nvmet_tcp_slot *s;
	bool done;
	int ret;

	if (ttag >= nr_slots(c)) {
		nvmet_tcp_conn_fail(c, NVME_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvme_tcp_data, ttag),
			       hdr, hdr_len);
		return -EPROTO;
	}
	s = &c->slots[ttag];
	ret = s->state == SLOT_WAIT_DATA && s->sqe.cid == d->cccid ? 0 : -EPROTO;
	if (ret) {
		nvmet_tcp_conn_fail(c, NVME_TCP_FES_PDU_SEQ_ERR, 0, hdr, hdr_len);
		return ret;
	}
	/* in order, within what the R2T asked, at most MAXH2CDATA at a time */
	if (datao != s->received || datal > s->len - s->received) {
		nvmet_tcp_conn_fail(c, NVME_TCP_FES_DATA_OUT_OF_RANGE, offsetof(struct nvme_tcp_data, datao),
			       hdr, hdr_len);
		return -EPROTO;
	}
	if (datal > NVMET_TCP_MAXH2CDATA) {
		nvmet_tcp_conn_fail(c, NVME_TCP_FES_DATA_LIMIT_EXCEEDED,
			       offsetof(struct nvme_tcp_data, datal), hdr, hdr_len);
		return -EPROTO;
	}
	done = s->received + datal == s->len;
	if (done != !!(d->hdr.flags & NVME_TCP_F_DATA_LAST)) {
		nvmet_tcp_conn_fail(c, NVME_TCP_FES_INVALID_PDU_HDR, 1, hdr, hdr_len);
		return -EPROTO;
	}
	ret = recv_data(c, &d->hdr, hdr_len, s->buf + datao, datal);
	if (ret) {
		nvmet_tcp_conn_fail(c, 0, 0, NULL, 0);
		return ret;
	}
	s->received += datal;
	if (done)
		s->state = SLOT_RUNNING;
	if (done)
		exec_slot(c, s);
	return 0;
}

/* One PDU after ICReq/ICResp: 0, or negative when the connection ends. */
static int recv_pdu(struct nvmet_tcp_conn *c)
{
	struct nvme_tcp_rx_limits lim = {
		.hdgst = c->hdgst, .ddgst = c->ddgst, .ic_done = true, .from_host = true,
		.pda = 0, .max_data = NVMET_TCP_MAXH2CDATA,
	};
	_Alignas(8) uint8_t buf[NVME_TCP_HDR_BUF];
	struct nvme_tcp_hdr *ch = (void *)buf;
	uint32_t hdr_len, fei;
	int ret;

	ret = recv_full(c, buf, sizeof(*ch));
	if (ret)
		return ret;
	ret = nvme_tcp_check_ch(ch, &lim, &hdr_len, &fei);
	if (ret) {
		nvmet_tcp_conn_fail(c, (uint16_t)-ret, fei, buf, sizeof(*ch));
		return ret;
	}
	ret = recv_full(c, buf + sizeof(*ch), hdr_len - sizeof(*ch));
	if (ret)
		return ret;
	ret = nvme_tcp_check_header(buf, hdr_len, &lim, &fei);
	if (ret) {
		nvmet_tcp_conn_fail(c, (uint16_t)-ret, fei, buf, ch->hlen);
		return ret;
	}
	switch (ch->type) {
	case NVME_TCP_CMD:
		return on_cmd(c, buf, hdr_len);
	case NVME_TCP_H2C_DATA:
		return on_h2c(c, buf, hdr_len);
	case NVME_TCP_H2C_TERM:
		/* the host gives up on the connection: nothing to answer */
		return -ECONNRESET;
	}
	nvmet_tcp_conn_fail(c, NVME_TCP_FES_INVALID_PDU_HDR, 0, buf, ch->hlen);
	return -EPROTO;
}

/* ---- the connection's life -------------------------------------------- */

static void conn_free(struct nvmet_tcp_conn *c)
{
	struct nvmet_tcp_port *t = c->t;

	pthread_mutex_lock(&t->lock);
	for (struct nvmet_tcp_conn **pp = &t->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	t->nr_conns--;
	pthread_cond_broadcast(&t->gone);
	pthread_mutex_unlock(&t->lock);
	close(c->sock);
	nvmet_tcp_buf_drain(c);
	free(c->slots);
	free(c->rxbuf);
	free(c);
}

static void *rx_main(void *arg)
{
	struct nvmet_tcp_conn *c = arg;
	int ret;

	/* it acts as the connection: Connect's opens and ring are the connection's */
	cred_override_set(&c->cred);
	ret = icreq(c);
	while (!ret)
		ret = recv_pdu(c);
	nvmet_tcp_conn_fail(c, 0, 0, NULL, 0);
	/* every command submitted completes before the buffers go */
	nvmet_tcp_io_stop(c);
	nvmet_tcp_conn_flush_out(c);	/* dead: sends nothing, gives the slots back */
	/* the admin queue going away ends its controller, and so its I/O queues */
	nvmet_tcp_cmd_conn_close(c);
	cred_override_set(NULL);
	if (c->ctrl) {
		if (c->qid == 0)
			atomic_store(&c->ctrl->dead, true);
		nvmet_tcp_ctrl_put(c->ctrl);
	}
	conn_free(c);
	return NULL;
}

/*
 * Who is at the other end: a process on this host is judged by its uid,
 * gid and groups (target_peer.c says what is and is not known); anyone
 * else, and Linux's own nvme-tcp host (a kernel socket, no process), is a
 * remote identity: no uid or gid anyone holds (-1), no groups, no
 * CAP_SYS_ADMIN, pid 0. The host NQN and host ID from Connect are added to
 * either. A socket of this host whose holder cannot be told is refused
 * (-EACCES). The quota's key: the uid of a local peer, else the address.
 */
static int peer_identity(struct nvmet_tcp_conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	enum nvmet_tcp_peer kind;
	uid_t maker = (uid_t)-1;

	memset(&c->cred, 0, sizeof(c->cred));
	c->cred.uid = c->cred.euid = (uid_t)-1;
	c->cred.gid = c->cred.egid = (gid_t)-1;
	snprintf(c->peer, sizeof(c->peer), "?");
	if (!getpeername(c->sock, (struct sockaddr *)&ss, &sl)) {
		char a[INET6_ADDRSTRLEN] = "";

		if (ss.ss_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
		else if (ss.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
		snprintf(c->peer, sizeof(c->peer), "%s", a);
	}
	kind = nvmet_tcp_peer_identify(c->sock, &c->cred, &maker);
	c->local = kind == NVMET_TCP_PEER_LOCAL;
	c->root = (c->local && c->cred.euid == 0) || kind == NVMET_TCP_PEER_KERNEL;
	if (c->local)
		snprintf(c->owner, sizeof(c->owner), "uid %u", (unsigned)c->cred.euid);
	else
		snprintf(c->owner, sizeof(c->owner), "address %s", c->peer);
	if (kind != NVMET_TCP_PEER_UNKNOWN)
		return 0;
	if (c->t->log)
		c->t->log("nvme-tcp: refused %s: its socket (made by uid %u) is held by no process "
			  "of that uid that ucmdd can see, or by several that differ",
			  c->peer, (unsigned)maker);
	return -EACCES;
}

/*
 * Whether c may join t's connections: everyone but root within max_conns,
 * each uid or address within conns_per_peer; root within NVMET_TCP_ROOT_CONNS
 * more. Under t->lock.
 */
static bool conn_quota_ok(struct nvmet_tcp_port *t, const struct nvmet_tcp_conn *c)
{
	unsigned all = 0, mine = 0;

	for (const struct nvmet_tcp_conn *o = t->conns; o; o = o->next) {
		if (o->root)
			continue;
		all++;
		mine += !strcmp(o->owner, c->owner);
	}
	if (c->root)
		return t->nr_conns < NVMET_TCP_MAX_CONNS + NVMET_TCP_ROOT_CONNS;
	if (all < t->lim.max_conns && mine < t->lim.peer_conns)
		return true;
	if (t->log)
		t->log("nvme-tcp: refused %s (%s): %s reached", c->peer, c->owner,
		       mine >= t->lim.peer_conns ? "conns_per_peer" : "max_conns");
	return false;
}

int nvmet_tcp_conn_start(struct nvmet_tcp_port *t, int sock)
{
	struct nvmet_tcp_conn *c;
	pthread_attr_t attr;
	int one = 1, ret;

	c = calloc(1, sizeof(*c));
	if (c) {
		c->slots = calloc(NVMET_TCP_QUEUE_SIZE, sizeof(*c->slots));
		c->rxbuf = malloc(NVMET_TCP_RXBUF);
	}
	if (!c || !c->slots || !c->rxbuf) {
		if (c) {
			free(c->slots);
			free(c->rxbuf);
			free(c);
		}
		return -ENOMEM;
	}
	c->t = t;
	c->sock = sock;
	c->efd = -1;
	c->ring_efd = -1;
	c->accepted_ms = nvmet_tcp_now_ms();
	for (unsigned i = 0; i < sizeof(c->ns_fd) / sizeof(c->ns_fd[0]); i++)
		c->ns_fd[i] = -1;
	atomic_init(&c->dead, false);
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* a recv that sleeps (recv_full) wakes within a second, as rx_wait's poll */
	{
		struct timeval tv = { .tv_sec = 1 };

		if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
			free(c->slots);
			free(c->rxbuf);
			free(c);
			return -errno;
		}
	}
	ret = peer_identity(c);

	pthread_mutex_lock(&t->lock);
	if (!ret && !conn_quota_ok(t, c))
		ret = -EDQUOT;
	if (!ret) {
		t->nr_conns++;
		c->next = t->conns;
		t->conns = c;
	}
	pthread_mutex_unlock(&t->lock);
	if (ret) {
		c->sock = -1;	/* the caller closes it */
		free(c->slots);
		free(c->rxbuf);
		free(c);
		return ret;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&c->rx, &attr, rx_main, c);
	pthread_attr_destroy(&attr);
	if (ret) {
		c->sock = -1;
		conn_free(c);	/* takes it off the list and back from nr_conns */
	}
	return ret;
}
