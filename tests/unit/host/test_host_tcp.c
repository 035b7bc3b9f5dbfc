/* SPDX-License-Identifier: MIT */
/*
 * The NVMe/TCP host transport against a scripted fake target on loopback:
 * a RAM namespace behind ICReq/ICResp, Connect, Property Get/Set, Identify,
 * Get Log Page, Set Features, Keep Alive, Read (C2HData, with and without
 * the SUCCESS flag) and Write (in-capsule, or R2T + H2CData split at
 * MAXH2CDATA). The fake checks every PDU the host sends with the shared
 * validator (src/tcp/pdu.c, the target's side), so a header, flag, length,
 * alignment or digest the host gets wrong fails the test. Scripted faults:
 * a corrupt header digest, a refused Connect, a controller that cannot
 * disable SQ flow control.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tcp.h>	/* tcp_info with tcpi_data_segs_in */
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include <nvme/types.h>
#include "tcp/pdu.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define NS_BLOCKS	256
#define MAXH2C		8192
#define SUBNQN		"nqn.2026-12.test:fake"
#define CNTLID		7
#define SILENT_LBA	200
/* the host's NVME_TCP_POLL_IDLE_MS and NVME_TCP_WAIT_IDLE_MS (src/nvme/host/tcp.h) */
#define NVME_TCP_POLL_IDLE_MS_TEST	100u
#define NVME_TCP_WAIT_IDLE_MS_TEST	10u
/*
 * ...as variables (tcp.h), widened where a test counts which thread
 * completed what: a thread that loses its CPU for longer than a claim
 * period (TSan, a loaded machine) hands the reading to the receiver
 */
extern atomic_uint nvme_tcp_poll_idle_ms, nvme_tcp_wait_idle_ms;
#define CLAIM_WIDE_MS	5000u
#define WRONG_DIR_LBA	210	/* scripted: a write gets C2HData, a read an R2T */

struct fake {
	int lfd;
	uint16_t port;
	pthread_t thr;
	uint8_t ram[NS_BLOCKS * 512];
	/*
	 * The scripted faults and the counters are set by the test and read
	 * by the connection threads, or the other way round, with nothing
	 * else ordering them (a poll loop, a flag flipped while a reply is
	 * being sent): atomics. Connect's record is under the lock.
	 */
	pthread_mutex_t lock;
	atomic_uint cc;
	unsigned connects, io_connects;
	atomic_uint keep_alives, r2ts, h2c_pdus, incapsule_writes;
	atomic_bool success_flag;	/* reads end with C2HData SUCCESS, no CapsuleResp */
	atomic_bool whole_pdus;		/* each PDU in one send (else header, data, digest apart) */
	atomic_uint split_at;		/* whole PDUs: sent as [0, split_at), a pause, the rest */
	atomic_bool refuse_connect;
	/*
	 * An I/O queue's Connect that asks for no SQ flow control is refused
	 * with: 1 Connect Invalid Parameters, 2 Invalid Field, 3 Connect
	 * Invalid Host (a refusal of something else)
	 */
	unsigned refuse_sqflow;
	unsigned sqflow_asked, sqflow_refused;	/* I/O Connects with CATTR SQFCD; refused */
	atomic_uint read_delay_ms;	/* reads answered this late */
	atomic_bool corrupt_rsp_hdgst;	/* the next CapsuleResp on an I/O queue has a bad digest */
	atomic_bool bad_pdu_seen;	/* the validator rejected a PDU from the host */
	atomic_uint wrong_dir_pdus;	/* scripted C2HData for a write, R2T for a read, sent */
	atomic_uint wrong_dir_h2c;	/* H2CData the host sent for a read's R2T */
	char hostnqn[256];
	atomic_int live_conns;		/* fake_stop waits for them to see EOF */
	uint16_t io_cntlid;
	uint8_t hostid[16];
	int io_fds[4];			/* the fake's side of the I/O connections */
	unsigned nr_io_fds;
};

struct conn {
	struct fake *f;
	int fd;
	bool hdgst, ddgst;
	uint16_t qid;
	struct nvme_tcp_rx_limits lim;
};

/* Cmocka's asserts belong to the main thread: the fake only records what is wrong. */
#define FCHECK(cond) do { if (!(cond)) c->f->bad_pdu_seen = true; } while (0)

static int rd(int fd, void *b, size_t n)
{
	uint8_t *p = b;

	while (n) {
		ssize_t r = recv(fd, p, n, 0);

		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int wr(int fd, const void *b, size_t n)
{
	return send(fd, b, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* One PDU from the host, checked as the target checks it; data (if any) in *data. */
static int rd_pdu(struct conn *c, uint8_t *hdr, uint8_t **data, uint32_t *dlen)
{
	uint32_t hl, fei;
	struct nvme_tcp_hdr *ch = (void *)hdr;

	*data = NULL;
	*dlen = 0;
	if (rd(c->fd, hdr, 8))
		return -1;
	if (nvme_tcp_check_ch(ch, &c->lim, &hl, &fei) || rd(c->fd, hdr + 8, hl - 8) ||
	    nvme_tcp_check_header(hdr, hl, &c->lim, &fei)) {
		c->f->bad_pdu_seen = true;
		return -1;
	}
	*dlen = nvme_tcp_data_len(ch, c->lim.ddgst);
	if (*dlen) {
		uint8_t pad[256];
		uint32_t crc;

		if (rd(c->fd, pad, ch->pdo - hl))
			return -1;
		*data = malloc(*dlen);
		if (rd(c->fd, *data, *dlen))
			return -1;
		if (c->lim.ddgst) {
			if (rd(c->fd, &crc, 4))
				return -1;
			if (le32toh(crc) != nvme_tcp_crc32c(*data, *dlen)) {
				c->f->bad_pdu_seen = true;
				return -1;
			}
		}
	}
	return 0;
}

static int wr_pdu(struct conn *c, uint8_t *hdr, uint8_t type, uint8_t flags, const void *data,
		  uint32_t len)
{
	uint32_t pre = nvme_tcp_build_ch((void *)hdr, type, flags, len, c->hdgst, c->ddgst, 0);
	uint32_t crc = htole32(len ? nvme_tcp_crc32c(data, len) : 0);

	if (c->hdgst)
		nvme_tcp_put_hdgst(hdr);
	if (atomic_load(&c->f->whole_pdus) && pre + len + 4 <= 8192) {
		uint8_t whole[8192];
		uint32_t n = pre + len + (len && c->ddgst ? 4 : 0), cut = atomic_load(&c->f->split_at);

		memcpy(whole, hdr, pre);
		if (len)
			memcpy(whole + pre, data, len);
		memcpy(whole + pre + len, &crc, n - pre - len);
		if (!cut || cut >= n)
			return wr(c->fd, whole, n);
		/*
		 * the pause lets the host's recv end at the cut; no Nagle, or
		 * the second piece waits for the host's delayed ACK of the first
		 */
		int one = 1;

		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (wr(c->fd, whole, cut))
			return -1;
		usleep(200);
		return wr(c->fd, whole + cut, n - cut);
	}
	if (wr(c->fd, hdr, pre) || (len && wr(c->fd, data, len)) ||
	    (len && c->ddgst && wr(c->fd, &crc, 4)))
		return -1;
	return 0;
}

static int send_rsp(struct conn *c, uint16_t cid, uint16_t status, uint64_t result)
{
	uint8_t h[256] = { 0 };
	struct nvme_tcp_rsp *r = (void *)h;

	r->cqe.cid = cid;
	r->cqe.status = (uint16_t)(status << 1);
	r->cqe.dw0 = (uint32_t)result;
	r->cqe.dw1 = (uint32_t)(result >> 32);
	/* taken, not only read: one corrupt CapsuleResp per request of the test */
	if (c->qid && c->hdgst && atomic_exchange(&c->f->corrupt_rsp_hdgst, false)) {
		uint32_t pre = nvme_tcp_build_ch((void *)h, NVME_TCP_RSP, 0, 0, true, false, 0);

		nvme_tcp_put_hdgst(h);
		h[24] ^= 0xff;	/* the header digest no longer matches */
		return wr(c->fd, h, pre);
	}
	return wr_pdu(c, h, NVME_TCP_RSP, 0, NULL, 0);
}

/* C2HData in 4 KiB pieces; the SUCCESS flag ends the command when scripted. */
static int send_c2h(struct conn *c, uint16_t cid, const uint8_t *buf, uint32_t len)
{
	/*
	 * Read once: the host may complete on the SUCCESS flag and the test
	 * turn it off before we would look again, and a CapsuleResp for a
	 * command already ended would follow.
	 */
	bool success = atomic_load(&c->f->success_flag);

	for (uint32_t off = 0; off < len; off += 4096) {
		uint8_t h[256] = { 0 };
		struct nvme_tcp_data *d = (void *)h;
		uint32_t n = len - off < 4096 ? len - off : 4096;
		bool last = off + n == len;

		d->cccid = cid;
		d->datao = htole32(off);
		d->datal = htole32(n);
		if (wr_pdu(c, h, NVME_TCP_C2H_DATA,
			   last ? (uint8_t)(NVME_TCP_F_DATA_LAST |
					    (success ? NVME_TCP_F_DATA_SUCCESS : 0)) : 0,
			   buf + off, n))
			return -1;
	}
	return success ? 0 : send_rsp(c, cid, 0, 0);
}

/* The host's data for a command: in the capsule, or asked for with one R2T. */
static uint8_t *get_data(struct conn *c, const struct ucmd_nvme_sqe *sqe, uint8_t *incap,
			 uint32_t inlen)
{
	const struct nvme_tcp_sgl *sgl = (const void *)&sqe->dptr;
	uint32_t len = le32toh(sgl->length), got = 0;
	uint8_t *buf;

	if (sgl->type == NVME_TCP_SGL_INCAPSULE) {
		FCHECK((inlen) == (len));
		if (c->qid)
			c->f->incapsule_writes++;
		return incap;
	}
	FCHECK((sgl->type) == (NVME_TCP_SGL_TRANSPORT));
	buf = malloc(len);
	uint8_t h[256] = { 0 };
	struct nvme_tcp_r2t *r = (void *)h;
	r->cccid = sqe->cid;
	r->ttag = 0x55;
	r->r2tl = htole32(len);
	wr_pdu(c, h, NVME_TCP_R2T, 0, NULL, 0);
	c->f->r2ts++;
	while (got < len) {
		uint8_t ph[256];
		uint8_t *d;
		uint32_t dl;

		if (rd_pdu(c, ph, &d, &dl))
			break;
		struct nvme_tcp_data *hd = (void *)ph;
		FCHECK((hd->hdr.type) == (NVME_TCP_H2C_DATA));
		FCHECK((hd->ttag) == (0x55));
		FCHECK((le32toh(hd->datao)) == (got));
		FCHECK(dl <= MAXH2C);
		if (got + dl > len) {
			c->f->bad_pdu_seen = true;
			free(d);
			break;
		}
		memcpy(buf + got, d, dl);
		got += dl;
		FCHECK((!!(hd->hdr.flags & NVME_TCP_F_DATA_LAST)) == (got == len));
		c->f->h2c_pdus++;
		free(d);
	}
	free(incap);
	return buf;
}

/*
 * Namespace 1 zoned (CSI 02h, 64-block zones) when 1; 2: zoned, and the ZNS
 * Identify Controller (CNS 06h) refused with Invalid Field
 */
static int fake_zoned;
/* fake_start's refuse_sqflow */
static unsigned fake_refuse_sqflow;

static void admin_cmd(struct conn *c, struct ucmd_nvme_sqe *s, uint8_t *data, uint32_t dlen)
{
	struct fake *f = c->f;
	uint8_t buf[4096] = { 0 };

	switch (s->opcode) {
	case nvme_admin_identify:
		if ((s->cdw10 & 0xff) == NVME_IDENTIFY_CNS_CTRL) {
			struct nvme_id_ctrl *id = (void *)buf;

			memcpy(id->sn, "FAKE0001            ", 20);
			id->mdts = 5;
			id->cntlid = htole16(CNTLID);
			id->sgls = htole32(1);
			id->ioccsz = htole32((64 + 4096) / 16);
			id->iorcsz = htole32(1);
			id->nn = htole32(1);
			snprintf(id->subnqn, sizeof(id->subnqn), "%s", SUBNQN);
		} else if ((s->cdw10 & 0xff) == NVME_IDENTIFY_CNS_NS_ACTIVE_LIST) {
			buf[0] = 1;
		} else if ((s->cdw10 & 0xff) == NVME_IDENTIFY_CNS_NS && s->nsid == 1) {
			struct nvme_id_ns *ns = (void *)buf;

			ns->nsze = ns->ncap = ns->nuse = htole64(NS_BLOCKS);
			ns->lbaf[0].ds = 9;
		} else if ((s->cdw10 & 0xff) == NVME_IDENTIFY_CNS_NS_DESC_LIST && fake_zoned) {
			buf[0] = NVME_NIDT_CSI;
			buf[1] = NVME_NIDT_CSI_LEN;
			buf[4] = NVME_CSI_ZNS;
		} else if ((s->cdw10 & 0xff) == NVME_IDENTIFY_CNS_CSI_NS && fake_zoned) {
			struct nvme_zns_id_ns *z = (void *)buf;

			z->mor = z->mar = htole32(0xffffffffu);
			z->lbafe[0].zsze = htole64(64);
		} else if ((s->cdw10 & 0xff) == NVME_IDENTIFY_CNS_CSI_CTRL && fake_zoned == 2) {
			send_rsp(c, s->cid, NVME_SC_INVALID_FIELD | NVME_SC_DNR, 0);
			break;
		}
		send_c2h(c, s->cid, buf, 4096);
		break;
	case nvme_admin_get_log_page: {
		uint32_t numd = ((s->cdw10 >> 16) | (s->cdw11 & 0xffff) << 16) + 1;
		uint8_t *log = calloc(1, numd * 4);

		send_c2h(c, s->cid, log, numd * 4);
		free(log);
		break;
	}
	case nvme_admin_set_features:
		send_rsp(c, s->cid, 0, (s->cdw10 & 0xff) == NVME_FEAT_FID_NUM_QUEUES ? s->cdw11 : 0);
		break;
	case nvme_admin_keep_alive:
		f->keep_alives++;
		send_rsp(c, s->cid, 0, 0);
		break;
	default:
		send_rsp(c, s->cid, NVME_SC_INVALID_OPCODE, 0);
	}
	free(data);
	(void)dlen;
}

static void fabrics_cmd(struct conn *c, struct ucmd_nvme_sqe *s, uint8_t *data, uint32_t dlen)
{
	struct fake *f = c->f;
	struct nvmf_prop_sqe *p = (void *)s;
	uint64_t r = 0;

	switch (p->fctype) {
	case NVMF_FCTYPE_CONNECT: {
		struct nvmf_connect_sqe *cs = (void *)s;
		struct nvmf_connect_data *cd = (void *)get_data(c, s, data, dlen);

		c->qid = le16toh(cs->qid);
		pthread_mutex_lock(&f->lock);
		f->connects++;
		if (c->qid) {
			f->io_connects++;
			f->io_cntlid = le16toh(cd->cntlid);
			if (f->nr_io_fds < 4)
				f->io_fds[f->nr_io_fds++] = c->fd;
		} else {
			FCHECK((le16toh(cd->cntlid)) == (0xffff));
			FCHECK(le32toh(cs->kato) > 0);
			snprintf(f->hostnqn, sizeof(f->hostnqn), "%s", cd->hostnqn);
			memcpy(f->hostid, cd->hostid, 16);
		}
		pthread_mutex_unlock(&f->lock);
		FCHECK(!strcmp(cd->subsysnqn, SUBNQN));
		/* SQ flow control is the I/O queues' to disable; the admin queue keeps it */
		FCHECK(c->qid || !(cs->cattr & NVMF_CONNECT_DISABLE_SQFLOW));
		if (c->qid && (cs->cattr & NVMF_CONNECT_DISABLE_SQFLOW)) {
			static const uint16_t why[] = { 0, 1 << 8 | NVMF_SC_CONNECT_INVALID_PARAM,
							NVME_SC_INVALID_FIELD,
							1 << 8 | NVMF_SC_CONNECT_INVALID_HOST };

			pthread_mutex_lock(&f->lock);
			f->sqflow_asked++;
			f->sqflow_refused += f->refuse_sqflow != 0;
			pthread_mutex_unlock(&f->lock);
			if (f->refuse_sqflow) {
				/* the connection stays: the host may ask again on it */
				send_rsp(c, s->cid, (uint16_t)(why[f->refuse_sqflow] | NVME_SC_DNR), 0);
				free(cd);
				return;
			}
		}
		send_rsp(c, s->cid, f->refuse_connect ? (1 << 8 | NVMF_SC_CONNECT_INVALID_HOST) : 0,
			 c->qid ? 0 : CNTLID);
		free(cd);
		return;
	}
	case NVMF_FCTYPE_PROP_GET:
		switch (le32toh(p->offset)) {
		case NVMF_PROP_CAP:
			r = 127 | 1ull << 24 | 1ull << 37;	/* MQES, TO 500 ms, NVM set */
			break;
		case NVMF_PROP_VS:
			r = 0x20000;
			break;
		case NVMF_PROP_CC:
			r = f->cc;
			break;
		case NVMF_PROP_CSTS: {
			uint32_t cc = f->cc;	/* RDY and SHST of one CC */

			r = (cc & 1) | ((cc >> 14) & 3 ? 2u << 2 : 0);
			break;
		}
		}
		break;
	case NVMF_FCTYPE_PROP_SET:
		if (le32toh(p->offset) == NVMF_PROP_CC)
			f->cc = (uint32_t)le64toh(p->value);
		break;
	}
	free(data);
	send_rsp(c, s->cid, 0, r);
}

static void io_cmd(struct conn *c, struct ucmd_nvme_sqe *s, uint8_t *data, uint32_t dlen)
{
	struct fake *f = c->f;
	uint64_t slba = s->cdw10 | (uint64_t)s->cdw11 << 32;
	uint32_t nlb = (s->cdw12 & 0xffff) + 1;
	const struct nvme_tcp_sgl *sgl = (const void *)&s->dptr;

	FCHECK((s->flags & 0xc0) == (NVME_CMD_PSDT_SGL));
	if ((s->opcode == nvme_cmd_read || s->opcode == nvme_cmd_write) &&
	    (slba + nlb > NS_BLOCKS || le32toh(sgl->length) != nlb * 512)) {
		free(data);
		send_rsp(c, s->cid, NVME_SC_LBA_RANGE, 0);
		return;
	}
	if (slba == WRONG_DIR_LBA && s->opcode == nvme_cmd_write) {
		/* data for the host's write buffer: it must not land there */
		uint8_t junk[512];

		memset(junk, 0xee, sizeof(junk));
		c->f->wrong_dir_pdus++;
		send_c2h(c, s->cid, junk, sizeof(junk));
		free(data);
		return;
	}
	if (slba == WRONG_DIR_LBA && s->opcode == nvme_cmd_read) {
		/* an R2T for a read: the host must not send its buffer */
		uint8_t h[256] = { 0 }, *d;
		struct nvme_tcp_r2t *r = (void *)h;
		uint32_t dl;

		r->cccid = s->cid;
		r->r2tl = htole32(nlb * 512);
		c->f->wrong_dir_pdus++;
		wr_pdu(c, h, NVME_TCP_R2T, 0, NULL, 0);
		if (!rd_pdu(c, h, &d, &dl) && ((struct nvme_tcp_hdr *)h)->type == NVME_TCP_H2C_DATA)
			c->f->wrong_dir_h2c++;
		free(d);
		free(data);
		return;
	}
	switch (s->opcode) {
	case nvme_cmd_write: {
		uint8_t *b = get_data(c, s, data, dlen);

		memcpy(f->ram + slba * 512, b, nlb * 512);
		free(b);
		send_rsp(c, s->cid, 0, 0);
		return;
	}
	case nvme_cmd_read:
		if (slba == SILENT_LBA)
			break;	/* scripted: a command the target never answers */
		if (atomic_load(&f->read_delay_ms))
			usleep(atomic_load(&f->read_delay_ms) * 1000u);
		send_c2h(c, s->cid, f->ram + slba * 512, nlb * 512);
		break;
	case nvme_cmd_flush:
		send_rsp(c, s->cid, 0, 0);
		break;
	default:
		send_rsp(c, s->cid, NVME_SC_INVALID_OPCODE, 0);
	}
	free(data);
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	uint8_t h[256] = { 0 };
	struct nvme_tcp_icreq *req = (void *)h;
	struct nvme_tcp_icresp *rsp = (void *)h;
	uint8_t *data;
	uint32_t dlen;

	c->lim.from_host = true;
	c->lim.max_data = 1 << 20;
	if (rd_pdu(c, h, &data, &dlen) || req->hdr.type != NVME_TCP_ICREQ)
		goto out;
	c->hdgst = req->digest & NVME_TCP_HDR_DIGEST_ENABLE;
	c->ddgst = req->digest & NVME_TCP_DATA_DIGEST_ENABLE;
	memset(h, 0, sizeof(h));
	nvme_tcp_build_ch(&rsp->hdr, NVME_TCP_ICRESP, 0, 0, false, false, 0);
	rsp->digest = (uint8_t)((c->hdgst ? 1 : 0) | (c->ddgst ? 2 : 0));
	rsp->maxh2cdata = htole32(MAXH2C);
	if (wr(c->fd, h, 128))
		goto out;
	c->lim.ic_done = true;
	c->lim.hdgst = c->hdgst;
	c->lim.ddgst = c->ddgst;
	for (;;) {
		struct nvme_tcp_cmd *cmd = (void *)h;

		if (rd_pdu(c, h, &data, &dlen))
			break;
		FCHECK((cmd->hdr.type) == (NVME_TCP_CMD));
		if (cmd->cmd.opcode == NVMF_OPC_FABRICS)
			fabrics_cmd(c, &cmd->cmd, data, dlen);
		else if (c->qid == 0)
			admin_cmd(c, &cmd->cmd, data, dlen);
		else
			io_cmd(c, &cmd->cmd, data, dlen);
	}
out:
	close(c->fd);
	atomic_fetch_sub(&c->f->live_conns, 1);
	free(c);
	return NULL;
}

static void *accept_thread(void *arg)
{
	struct fake *f = arg;

	for (;;) {
		int fd = accept(f->lfd, NULL, NULL);
		pthread_t t;

		if (fd < 0)
			return NULL;
		struct conn *c = calloc(1, sizeof(*c));
		c->f = f;
		c->fd = fd;
		atomic_fetch_add(&f->live_conns, 1);
		pthread_create(&t, NULL, conn_thread, c);
		pthread_detach(t);
	}
}

static struct fake *fake_start(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	pthread_mutex_init(&f->lock, NULL);
	f->refuse_sqflow = fake_refuse_sqflow;
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(f->lfd, (void *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 16), 0);
	getsockname(f->lfd, (void *)&a, &al);
	f->port = ntohs(a.sin_port);
	pthread_create(&f->thr, NULL, accept_thread, f);
	return f;
}

/* Every connection thread of f ended (the host closed its sockets), 10 s at most. */
static void fake_wait_idle(struct fake *f)
{
	for (int i = 0; i < 10000 && atomic_load(&f->live_conns); i++)
		usleep(1000);
	assert_int_equal(atomic_load(&f->live_conns), 0);
}

static void fake_stop(struct fake *f)
{
	shutdown(f->lfd, SHUT_RDWR);
	pthread_join(f->thr, NULL);
	close(f->lfd);
	/* connection threads end when the host has closed its sockets (detach) */
	while (atomic_load(&f->live_conns))
		usleep(1000);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* ---- the host side ---- */

struct rig {
	struct fake *f;
	struct ucmd_engine *e;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng, ctrl;
};

/*
 * polled: one interrupt-driven I/O queue and one polled queue, the ring
 * IOPOLL (its I/O goes to the polled queue)
 */
static int rig_up_polled(struct rig *r, const char *opts, const struct ucmd_nvme_tcp_opts *to,
			 bool polled)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 |
					      (polled ? IORING_SETUP_IOPOLL : 0) };
	struct ucmd_nvme_host_opts ho = { .nr_io_queues = polled ? 1 : 2,
					  .nr_poll_queues = polled ? 1 : 0, .queue_depth = 16 };
	char url[256];
	int ret;

	memset(r, 0, sizeof(*r));
	r->f = fake_start();
	snprintf(url, sizeof(url), "nvme-tcp://127.0.0.1:%u/%s%s", r->f->port, SUBNQN, opts);
	assert_int_equal(ucmd_engine_create(&r->e), 0);
	ret = ucmd_nvme_attach_tcp(r->e, url, &ho, to, &r->host);
	if (ret)
		return ret;
	assert_int_equal(ucmd_queue_init_engine(r->e, 64, &r->ring, &p), 0);
	r->ng = ucmd_open(r->e, "ng0n1", O_RDWR);
	r->ctrl = ucmd_open(r->e, "nvme0", O_RDWR);
	assert_true(r->ng >= 0 && r->ctrl >= 0);
	return 0;
}

static int rig_up(struct rig *r, const char *opts, const struct ucmd_nvme_tcp_opts *to)
{
	return rig_up_polled(r, opts, to, false);
}

static void rig_detach(struct rig *r)
{
	if (r->host) {
		ucmd_queue_exit(&r->ring);
		ucmd_close(r->e, r->ng);
		ucmd_close(r->e, r->ctrl);
		ucmd_nvme_detach(r->host);
		r->host = NULL;
	}
}

static void rig_down(struct rig *r)
{
	rig_detach(r);
	ucmd_engine_free(r->e);
	fake_stop(r->f);
}

static int pt_to(struct rig *r, bool admin, uint8_t opcode, void *buf, uint32_t len,
		 uint32_t cdw10, uint32_t cdw12, uint32_t timeout_ms)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .nsid = 1, .addr = (uintptr_t)buf,
				    .data_len = len, .cdw10 = cdw10, .cdw12 = cdw12,
				    .timeout_ms = timeout_ms };
	struct io_uring_sqe *sqe = ucmd_get_sqe(&r->ring);
	struct io_uring_cqe *cqe;
	int ret;

	ucmd_prep_nvme_cmd(sqe, admin ? r->ctrl : r->ng,
			   admin ? NVME_URING_CMD_ADMIN : NVME_URING_CMD_IO, &c);
	assert_int_equal(ucmd_submit_and_wait(&r->ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&r->ring, &cqe), 0);
	ret = cqe->res;
	ucmd_cqe_seen(&r->ring, cqe);
	return ret;
}

static int pt(struct rig *r, bool admin, uint8_t opcode, void *buf, uint32_t len, uint32_t cdw10,
	      uint32_t cdw12)
{
	return pt_to(r, admin, opcode, buf, len, cdw10, cdw12, 0);
}

static void write_read_compare(struct rig *r, uint32_t blocks, uint32_t slba, uint8_t seed)
{
	uint32_t len = blocks * 512;
	uint8_t *w = malloc(len), *rb = calloc(1, len);

	for (uint32_t i = 0; i < len; i++)
		w[i] = (uint8_t)(i * 7 + seed);
	assert_int_equal(pt(r, false, nvme_cmd_write, w, len, slba, blocks - 1), 0);
	assert_memory_equal(r->f->ram + slba * 512, w, len);
	assert_int_equal(pt(r, false, nvme_cmd_read, rb, len, slba, blocks - 1), 0);
	assert_memory_equal(rb, w, len);
	free(w);
	free(rb);
}

static void test_attach_identify(void **state)
{
	struct rig r;
	struct ucmd_nvme_tcp_info info;
	struct nvme_id_ctrl *id = aligned_alloc(4096, 4096);
	struct ucmd_nvme_tcp_opts to = { .hostnqn = "nqn.2014-08.org.nvmexpress:uuid:"
						    "0f0e0d0c-0b0a-0908-0706-050403020100" };

	(void)state;
	assert_int_equal(rig_up(&r, "", &to), 0);
	/* admin Connect + 2 I/O Connects, each with the admin queue's cntlid */
	assert_int_equal(r.f->connects, 3);
	assert_int_equal(r.f->io_connects, 2);
	assert_int_equal(r.f->io_cntlid, CNTLID);
	assert_string_equal(r.f->hostnqn, to.hostnqn);
	/* the host ID is the NQN's UUID, as nvme-cli derives it */
	assert_int_equal(r.f->hostid[0], 0x0f);
	assert_int_equal(r.f->hostid[15], 0x00);
	assert_int_equal(r.f->cc & 1, 1);	/* enabled by Property Set */
	assert_int_equal(ucmd_nvme_tcp_info(r.host, &info), 0);
	assert_int_equal(info.cntlid, CNTLID);
	assert_int_equal(info.nr_queues, 3);
	assert_int_equal(info.io_inline_max, 4096);
	assert_false(info.hdr_digest);
	assert_string_equal(info.subnqn, SUBNQN);
	assert_int_equal(pt(&r, true, nvme_admin_identify, id, 4096, NVME_IDENTIFY_CNS_CTRL, 0), 0);
	assert_memory_equal(id->sn, "FAKE0001", 8);
	assert_string_equal(id->subnqn, SUBNQN);
	/* an opcode the target does not know: its NVMe status, positive */
	assert_int_equal(pt(&r, false, 0x7e, NULL, 0, 0, 0), NVME_SC_INVALID_OPCODE);
	assert_false(r.f->bad_pdu_seen);
	rig_detach(&r);
	/* detach shut the controller down: CC.SHN normal, then disabled */
	assert_int_equal(r.f->cc & 1, 0);
	rig_down(&r);
	free(id);
}

static void test_io_paths(void **state)
{
	struct rig r;

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	write_read_compare(&r, 1, 0, 1);	/* in-capsule */
	assert_int_equal(r.f->incapsule_writes, 1);
	assert_int_equal(r.f->r2ts, 0);
	write_read_compare(&r, 8, 8, 2);	/* 4 KiB: still in-capsule (IOCCSZ) */
	assert_int_equal(r.f->incapsule_writes, 2);
	write_read_compare(&r, 64, 32, 3);	/* 32 KiB: R2T, 4 H2CData of 8 KiB */
	assert_int_equal(r.f->r2ts, 1);
	assert_int_equal(r.f->h2c_pdus, 4);
	r.f->success_flag = true;		/* reads without a CapsuleResp */
	write_read_compare(&r, 17, 100, 4);
	r.f->success_flag = false;
	/* out of range: the target's status comes back */
	uint8_t b[512];
	assert_int_equal(pt(&r, false, nvme_cmd_read, b, 512, NS_BLOCKS, 0), NVME_SC_LBA_RANGE);
	assert_int_equal(pt(&r, false, nvme_cmd_flush, NULL, 0, 0, 0), 0);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
}

/* Segments with data the fake's I/O connections have received from the host. */
static uint64_t io_data_segs(struct fake *f)
{
	uint64_t n = 0;

	pthread_mutex_lock(&f->lock);
	for (unsigned i = 0; i < f->nr_io_fds; i++) {
		struct tcp_info ti;
		socklen_t l = sizeof(ti);

		memset(&ti, 0, sizeof(ti));
		assert_int_equal(getsockopt(f->io_fds[i], IPPROTO_TCP, TCP_INFO, &ti, &l), 0);
		n += ti.tcpi_data_segs_in;
	}
	pthread_mutex_unlock(&f->lock);
	return n;
}

/*
 * The CapsuleCmds of one submission leave in one sendmsg (Linux's nvme-tcp
 * sends with MSG_MORE until the last): eight reads submitted together reach
 * the controller as one TCP segment, and each gets its own data back.
 */
static void test_batched_capsules(void **state)
{
	struct rig r;
	uint8_t *b = aligned_alloc(4096, 8 * 512);
	struct io_uring_cqe *cqe;
	uint64_t segs0, segs1;

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	for (unsigned i = 0; i < 8 * 512; i++)
		r.f->ram[i] = (uint8_t)(i / 512 + 1);
	memset(b, 0, 8 * 512);
	pt(&r, false, nvme_cmd_flush, NULL, 0, 0, 0);	/* both I/O connections known */
	segs0 = io_data_segs(r.f);
	for (unsigned i = 0; i < 8; i++) {
		struct nvme_uring_cmd c = { .opcode = nvme_cmd_read, .nsid = 1,
					    .addr = (uintptr_t)(b + i * 512), .data_len = 512,
					    .cdw10 = i };
		struct io_uring_sqe *sqe = ucmd_get_sqe(&r.ring);

		ucmd_prep_nvme_cmd(sqe, r.ng, NVME_URING_CMD_IO, &c);
		sqe->user_data = i;
	}
	assert_int_equal(ucmd_submit_and_wait(&r.ring, 8), 8);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(ucmd_wait_cqe(&r.ring, &cqe), 0);
		assert_int_equal(cqe->res, 0);
		ucmd_cqe_seen(&r.ring, cqe);
	}
	segs1 = io_data_segs(r.f);
	assert_int_equal(segs1 - segs0, 1);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(b[i * 512], i + 1);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
	free(b);
}

/*
 * At one SQE per submit, the capsules of consecutive submissions from the
 * thread that waits on the queue stay staged until it waits again, and
 * leave in one sendmsg then: with a read in flight (answered late, so
 * that this thread's wait reads the queue and times out), eight reads,
 * each submitted by its own enter, reach the controller as one TCP
 * segment (eight before). On a loaded machine a try may lose its CPU for
 * a claim period at the wrong moment: one of several must show it.
 */
static void test_deferred_sends(void **state)
{
	struct rig r;
	uint8_t *b = aligned_alloc(4096, 8192);	/* 9 blocks */
	uint64_t segs = 0;

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	for (unsigned i = 0; i < 9 * 512; i++)
		r.f->ram[i] = (uint8_t)(i / 512 + 1);
	for (unsigned t = 0; t < 10 && segs != 1; t++) {
		struct __kernel_timespec ts = { .tv_nsec = 2000000 };
		struct io_uring_cqe *cqe;
		uint64_t segs0;

		memset(b, 0, 9 * 512);
		segs0 = io_data_segs(r.f);
		r.f->read_delay_ms = 50;
		for (unsigned i = 0; i < 9; i++) {
			struct nvme_uring_cmd c = { .opcode = nvme_cmd_read, .nsid = 1,
						    .addr = (uintptr_t)(b + i * 512),
						    .data_len = 512, .cdw10 = i };
			struct io_uring_sqe *sqe = ucmd_get_sqe(&r.ring);

			ucmd_prep_nvme_cmd(sqe, r.ng, NVME_URING_CMD_IO, &c);
			sqe->user_data = i;
			assert_int_equal(ucmd_submit(&r.ring), 1);
			if (i)
				continue;
			/* the first one is late: this wait reads the queue and gives up */
			assert_int_equal(ucmd_wait_cqe_timeout(&r.ring, &cqe, &ts), -ETIME);
			r.f->read_delay_ms = 0;
		}
		for (unsigned i = 0; i < 9; i++) {
			assert_int_equal(ucmd_wait_cqe(&r.ring, &cqe), 0);
			assert_int_equal(cqe->res, 0);
			ucmd_cqe_seen(&r.ring, cqe);
		}
		/* the first read's capsule, then the eight together */
		segs = io_data_segs(r.f) - segs0 - 1;
		for (unsigned i = 0; i < 9; i++)
			assert_int_equal(b[i * 512], i + 1);
	}
	assert_int_equal(segs, 1);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
	free(b);
}

/*
 * A send left for a waiter that never comes back (the ring only peeks
 * after it, as an event loop does): the receiver sends it once it has
 * waited a claim period, and the read completes all the same.
 */
static void test_deferred_unwaited(void **state)
{
	struct rig r;
	uint8_t *b = aligned_alloc(4096, 4096);	/* 2 blocks */
	bool deferred = false;

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	for (unsigned i = 0; i < 2 * 512; i++)
		r.f->ram[i] = (uint8_t)(i / 512 + 1);
	for (unsigned t = 0; t < 10 && !deferred; t++) {
		struct __kernel_timespec ts = { .tv_nsec = 2000000 };
		struct io_uring_cqe *cqe;
		uint64_t segs0 = io_data_segs(r.f);
		unsigned seen = 0;
		int ret = 0;

		memset(b, 0, 2 * 512);
		r.f->read_delay_ms = 50;
		for (unsigned i = 0; i < 2; i++) {
			struct nvme_uring_cmd c = { .opcode = nvme_cmd_read, .nsid = 1,
						    .addr = (uintptr_t)(b + i * 512),
						    .data_len = 512, .cdw10 = i };

			ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &c);
			assert_int_equal(ucmd_submit(&r.ring), 1);
			if (!i)
				assert_int_equal(ucmd_wait_cqe_timeout(&r.ring, &cqe, &ts), -ETIME);
		}
		r.f->read_delay_ms = 0;
		/* the second capsule stayed staged (a loaded machine may have sent it: try again) */
		deferred = io_data_segs(r.f) - segs0 == 1;
		/* peeks only, never a wait: up to 2 s for both */
		for (unsigned i = 0; i < 2000 && seen < 2; i++) {
			ret = ucmd_peek_cqe(&r.ring, &cqe);
			if (ret == -EAGAIN) {
				usleep(1000);
				continue;
			}
			assert_int_equal(ret, 0);
			assert_int_equal(cqe->res, 0);
			ucmd_cqe_seen(&r.ring, cqe);
			seen++;
		}
		assert_int_equal(seen, 2);
		assert_int_equal(b[0], 1);
		assert_int_equal(b[512], 2);
	}
	assert_true(deferred);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
	free(b);
}

/*
 * A submission of NVME_TCP_DEFER_MAX (8) reads by the ring's waiter is not
 * held for it: deferral is for one-SQE submissions, and a batch held back
 * waits for a waiter that may have its CQEs already (peeked, never
 * entering). The claim period is widened to 5 s, so a held batch would
 * reach the target only when the receiver gives up on the waiter.
 */
static void test_deferred_batch_sent(void **state)
{
	struct rig r;
	uint8_t *b = aligned_alloc(4096, 8 * 512);
	struct io_uring_cqe *cqe;
	uint64_t segs0;
	unsigned i;

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	write_read_compare(&r, 1, 0, 31);	/* this thread is the queue's waiter */
	atomic_store(&nvme_tcp_wait_idle_ms, CLAIM_WIDE_MS);
	segs0 = io_data_segs(r.f);
	for (i = 0; i < 8; i++) {
		struct nvme_uring_cmd c = { .opcode = nvme_cmd_read, .nsid = 1,
					    .addr = (uintptr_t)(b + i * 512), .data_len = 512,
					    .cdw10 = i };

		ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &c);
	}
	assert_int_equal(ucmd_submit(&r.ring), 8);
	/* without waiting: the capsules reach the target (2 s, well inside the 5 s claim) */
	for (i = 0; i < 2000 && io_data_segs(r.f) == segs0; i++)
		usleep(1000);
	assert_true(io_data_segs(r.f) > segs0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(ucmd_wait_cqe(&r.ring, &cqe), 0);
		assert_int_equal(cqe->res, 0);
		ucmd_cqe_seen(&r.ring, cqe);
	}
	atomic_store(&nvme_tcp_wait_idle_ms, NVME_TCP_WAIT_IDLE_MS_TEST);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
	free(b);
}

static void test_digests(void **state)
{
	struct rig r;
	struct ucmd_nvme_tcp_info info;

	(void)state;
	assert_int_equal(rig_up(&r, "?hdgst&ddgst", NULL), 0);
	assert_int_equal(ucmd_nvme_tcp_info(r.host, &info), 0);
	assert_true(info.hdr_digest);
	assert_true(info.data_digest);
	write_read_compare(&r, 1, 0, 5);
	write_read_compare(&r, 40, 60, 6);
	assert_false(r.f->bad_pdu_seen);
	/*
	 * A CapsuleResp whose header digest is wrong: the connection ends,
	 * and with reconnection off (ctrl_loss_tmo=0) the command fails.
	 */
	uint8_t b[512] = { 0 };
	rig_down(&r);
	assert_int_equal(rig_up(&r, "?hdgst&ddgst&ctrl_loss_tmo=0", NULL), 0);
	r.f->corrupt_rsp_hdgst = true;
	assert_int_equal(pt(&r, false, nvme_cmd_write, b, 512, 0, 0), -EIO);
	rig_down(&r);
	/* With it on, as Linux: a new association, the command sent again there. */
	assert_int_equal(rig_up(&r, "?hdgst&ddgst&reconnect_delay=1", NULL), 0);
	r.f->corrupt_rsp_hdgst = true;
	memset(b, 0x5a, sizeof(b));
	assert_int_equal(pt(&r, false, nvme_cmd_write, b, 512, 0, 0), 0);
	assert_memory_equal(r.f->ram, b, sizeof(b));
	assert_int_equal(ucmd_nvme_tcp_info(r.host, &info), 0);
	assert_int_equal(info.reconnects, 1);
	write_read_compare(&r, 40, 60, 7);
	rig_down(&r);
}

static void test_keep_alive(void **state)
{
	struct rig r;
	struct ucmd_nvme_tcp_opts to = { .kato_ms = 20 };
	struct ucmd_nvme_tcp_info info;

	(void)state;
	assert_int_equal(rig_up(&r, "", &to), 0);
	/*
	 * KATO/2 = 10 ms: wait for three, whatever the scheduling; the host
	 * counts one once its answer is back, after the target counted it
	 */
	memset(&info, 0, sizeof(info));
	for (int i = 0; i < 10000 && (r.f->keep_alives < 3 || info.keep_alives < 3); i++) {
		usleep(1000);
		assert_int_equal(ucmd_nvme_tcp_info(r.host, &info), 0);
	}
	assert_true(r.f->keep_alives >= 3);
	assert_true(info.keep_alives >= 3);
	rig_down(&r);
}

/* A command never answered: cancelled (-EINTR) by its timeout, not left hanging. */
static void test_timeout(void **state)
{
	struct rig r;
	uint8_t b[512];

	(void)state;
	assert_int_equal(rig_up(&r, "?reconnect_delay=1", NULL), 0);
	assert_int_equal(pt_to(&r, false, nvme_cmd_read, b, 512, SILENT_LBA, 0, 50), -EINTR);
	/* the closed connection is made again (Linux's error recovery): the queues work */
	write_read_compare(&r, 1, 3, 9);
	struct nvme_id_ctrl *id = aligned_alloc(4096, 4096);
	assert_int_equal(pt(&r, true, nvme_admin_identify, id, 4096, NVME_IDENTIFY_CNS_CTRL, 0), 0);
	free(id);
	rig_down(&r);
}

/*
 * Data PDUs against their command's direction: C2HData for a write (it
 * would overwrite the caller's data) and an R2T for a read (the caller's
 * buffer would go to the target) fail the connection, and so the command,
 * with nothing moved.
 */
static void test_wrong_direction(void **state)
{
	struct rig r;
	uint8_t w[512], rb[512];

	(void)state;
	assert_int_equal(rig_up(&r, "?ctrl_loss_tmo=0&io_timeout=5", NULL), 0);
	memset(w, 0x5a, sizeof(w));
	assert_int_equal(pt(&r, false, nvme_cmd_write, w, 512, WRONG_DIR_LBA, 0), -EIO);
	for (unsigned i = 0; i < sizeof(w); i++)
		assert_int_equal(w[i], 0x5a);
	/* the fake's counts are final once its connection threads are gone */
	rig_detach(&r);
	fake_wait_idle(r.f);
	assert_int_equal(r.f->wrong_dir_pdus, 1);
	rig_down(&r);
	/* a new association: the read reaches the target on a live connection */
	assert_int_equal(rig_up(&r, "?ctrl_loss_tmo=0&io_timeout=5", NULL), 0);
	memset(rb, 0x77, sizeof(rb));
	assert_int_equal(pt(&r, false, nvme_cmd_read, rb, 512, WRONG_DIR_LBA, 0), -EIO);
	rig_detach(&r);
	fake_wait_idle(r.f);
	assert_int_equal(r.f->wrong_dir_pdus, 1);
	assert_int_equal(r.f->wrong_dir_h2c, 0);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
}

/*
 * A zoned namespace gets its block device only when the controller answers
 * the ZNS Identify Controller, as Linux (which reads the zone append limit
 * there first); the generic device is there either way
 */
static void test_zoned_needs_id_ctrl(void **state)
{
	struct rig r;
	int fd;

	(void)state;
	fake_zoned = 1;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	fd = ucmd_open(r.e, "nvme0n1", O_RDONLY);
	assert_true(fd >= 0);
	ucmd_close(r.e, fd);
	rig_down(&r);
	fake_zoned = 2;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	assert_int_equal(ucmd_open(r.e, "nvme0n1", O_RDONLY), -ENOENT);
	rig_down(&r);
	fake_zoned = 0;
}

static unsigned long polled_cqes(struct rig *r)
{
	struct ucmd_nvme_tcp_info info;

	assert_int_equal(ucmd_nvme_tcp_info(r->host, &info), 0);
	return info.polled_completions;
}

/*
 * A polled queue (nr_poll_queues) under an IOPOLL ring: the waiting
 * thread reads the connection and completes the I/O itself, without the
 * receiver thread. The receiver may take the first (it reads until a
 * poll comes); the rest are the poller's. Data both ways intact. An
 * interrupt-driven queue's completions are never counted as polled.
 */
static void test_polled_queue(void **state)
{
	struct rig r;
	uint8_t b[512];

	(void)state;
	assert_int_equal(rig_up_polled(&r, "", NULL, true), 0);
	assert_int_equal(r.f->io_connects, 2);
	write_read_compare(&r, 1, 0, 11);	/* in-capsule */
	write_read_compare(&r, 64, 32, 12);	/* R2T answered by the poller */
	assert_int_equal(r.f->r2ts, 1);
	unsigned long p0 = polled_cqes(&r);
	atomic_store(&nvme_tcp_poll_idle_ms, CLAIM_WIDE_MS);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(pt(&r, false, nvme_cmd_read, b, 512, i, 0), 0);
	atomic_store(&nvme_tcp_poll_idle_ms, NVME_TCP_POLL_IDLE_MS_TEST);
	/* a busy poller keeps the receiver off the socket: nearly all were polled */
	assert_true(polled_cqes(&r) - p0 >= 48);
	r.f->success_flag = true;		/* C2HData SUCCESS completes on the poller too */
	write_read_compare(&r, 17, 100, 13);
	r.f->success_flag = false;
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);

	assert_int_equal(rig_up_polled(&r, "", NULL, false), 0);
	write_read_compare(&r, 8, 0, 14);
	assert_int_equal(polled_cqes(&r), 0);
	rig_down(&r);
}

static unsigned long waited_cqes(struct rig *r)
{
	struct ucmd_nvme_tcp_info info;

	assert_int_equal(ucmd_nvme_tcp_info(r->host, &info), 0);
	return info.waited_completions;
}

/*
 * An I/O queue under an ordinary ring: the thread waiting for the CQE
 * reads the connection and completes the I/O itself; the receiver only
 * takes the first (it reads until a waiter comes). R2T answered and
 * C2HData SUCCESS handled on the waiter; data both ways intact. A reply
 * that comes late (several of the waiter's sleeps) is still the waiter's:
 * its claim stays fresh while it sleeps on the socket.
 */
static void test_waiter_reads(void **state)
{
	struct rig r;
	uint8_t b[512];
	unsigned long w0;

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	write_read_compare(&r, 1, 0, 21);	/* in-capsule */
	write_read_compare(&r, 64, 32, 22);	/* R2T answered by the waiter */
	assert_int_equal(r.f->r2ts, 1);
	w0 = waited_cqes(&r);
	atomic_store(&nvme_tcp_wait_idle_ms, CLAIM_WIDE_MS);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(pt(&r, false, nvme_cmd_read, b, 512, i, 0), 0);
	/* the receiver only where the waiter was away for a claim period */
	assert_true(waited_cqes(&r) - w0 >= 32);
	r.f->success_flag = true;
	write_read_compare(&r, 17, 100, 23);
	r.f->success_flag = false;
	/*
	 * answered 3 claim periods late: the waiter sleeps on the socket all
	 * along (the receiver only if the waiter lost its CPU for longer than
	 * a claim period at the wrong moment: one of four is enough)
	 */
	atomic_store(&nvme_tcp_wait_idle_ms, 100u);
	r.f->read_delay_ms = 3 * 100u;
	w0 = waited_cqes(&r);
	for (unsigned i = 0; i < 4; i++) {
		memset(b, 0, sizeof(b));
		assert_int_equal(pt(&r, false, nvme_cmd_read, b, 512, i, 0), 0);
		assert_memory_equal(b, r.f->ram + i * 512, 512);
	}
	assert_true(waited_cqes(&r) - w0 >= 1);
	r.f->read_delay_ms = 0;
	atomic_store(&nvme_tcp_wait_idle_ms, CLAIM_WIDE_MS);
	/* a DEFER_TASKRUN ring (fio's and ucmd bench's choice) reads the queue the same way */
	struct io_uring_params dp = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 |
					       IORING_SETUP_SINGLE_ISSUER |
					       IORING_SETUP_DEFER_TASKRUN };
	struct ucmd_ring dr;

	assert_int_equal(ucmd_queue_init_engine(r.e, 64, &dr, &dp), 0);
	w0 = waited_cqes(&r);
	for (unsigned i = 0; i < 64; i++) {
		struct nvme_uring_cmd c = { .opcode = nvme_cmd_read, .nsid = 1,
					    .addr = (uintptr_t)b, .data_len = 512, .cdw10 = i };
		struct io_uring_cqe *cqe;

		ucmd_prep_nvme_cmd(ucmd_get_sqe(&dr), r.ng, NVME_URING_CMD_IO, &c);
		assert_int_equal(ucmd_submit_and_wait(&dr, 1), 1);
		assert_int_equal(ucmd_wait_cqe(&dr, &cqe), 0);
		assert_int_equal(cqe->res, 0);
		ucmd_cqe_seen(&dr, cqe);
		assert_memory_equal(b, r.f->ram + i * 512, 512);
	}
	assert_true(waited_cqes(&r) - w0 >= 32);
	atomic_store(&nvme_tcp_wait_idle_ms, NVME_TCP_WAIT_IDLE_MS_TEST);
	ucmd_queue_exit(&dr);
	/* the admin queue stays its receiver's (the keep-alive, the events) */
	uint8_t *id = aligned_alloc(4096, 4096);

	w0 = waited_cqes(&r);
	assert_int_equal(pt(&r, true, nvme_admin_identify, id, 4096, NVME_IDENTIFY_CNS_CTRL, 0), 0);
	assert_int_equal(waited_cqes(&r), w0);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
	free(id);
}

/*
 * After a waiter, a ring that does not wait (it only peeks, never waiting
 * in the engine): the receiver takes the reading back once no waiter has
 * come for a while, so the I/O completes all the same.
 */
static void test_waiter_gone(void **state)
{
	struct rig r;
	uint8_t *b = aligned_alloc(4096, 4096);
	struct io_uring_cqe *cqe = NULL;
	unsigned long w0;
	int ret = -EAGAIN;

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	for (unsigned i = 0; i < 8; i++)
		write_read_compare(&r, 1, i, 24);	/* a waiter reads the queue */
	memset(b, 0, 512);
	w0 = waited_cqes(&r);
	struct nvme_uring_cmd c = { .opcode = nvme_cmd_read, .nsid = 1, .addr = (uintptr_t)b,
				    .data_len = 512, .cdw10 = 3 };
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &c);
	assert_int_equal(ucmd_submit(&r.ring), 1);
	/* peeks only, as an event loop does: up to 2 s */
	for (unsigned i = 0; i < 2000 && ret == -EAGAIN; i++) {
		ret = ucmd_peek_cqe(&r.ring, &cqe);
		if (ret == -EAGAIN)
			usleep(1000);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(cqe->res, 0);
	ucmd_cqe_seen(&r.ring, cqe);
	assert_int_equal(waited_cqes(&r), w0);
	assert_memory_equal(b, r.f->ram + 3 * 512, 512);
	rig_down(&r);
	free(b);
}

/*
 * Nobody polls a polled queue for a while (the ring's owner is busy
 * elsewhere): the receiver completes its I/O all the same, so that the
 * request is done when the owner looks, with nothing left to poll.
 */
static void test_polled_idle(void **state)
{
	struct rig r;
	uint8_t *b = aligned_alloc(4096, 4096);
	struct io_uring_cqe *cqe;
	unsigned long p0;

	(void)state;
	assert_int_equal(rig_up_polled(&r, "", NULL, true), 0);
	write_read_compare(&r, 1, 0, 15);
	memset(b, 0, 512);
	/* answered after the submission's own poll, which finds nothing */
	r.f->read_delay_ms = 20;
	p0 = polled_cqes(&r);
	struct nvme_uring_cmd c = { .opcode = nvme_cmd_read, .nsid = 1, .addr = (uintptr_t)b,
				    .data_len = 512, .cdw10 = 0 };
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &c);
	assert_int_equal(ucmd_submit(&r.ring), 1);
	/* no poll for several idle periods: the receiver reads the socket */
	usleep(8 * NVME_TCP_POLL_IDLE_MS_TEST * 1000);
	assert_int_equal(ucmd_wait_cqe(&r.ring, &cqe), 0);
	assert_int_equal(cqe->res, 0);
	ucmd_cqe_seen(&r.ring, cqe);
	assert_int_equal(polled_cqes(&r), p0);
	assert_memory_equal(b, r.f->ram, 512);
	r.f->read_delay_ms = 0;
	rig_down(&r);
	free(b);
}

/*
 * A polled queue's connection breaks under the poller (a CapsuleResp
 * with a bad header digest): the association is made again and the
 * command sent again, as on any queue; and a command never answered
 * times out (-EINTR) and the queue works after the reconnect.
 */
static void test_polled_recovery(void **state)
{
	struct rig r;
	struct ucmd_nvme_tcp_info info;
	uint8_t b[512];

	(void)state;
	assert_int_equal(rig_up_polled(&r, "?hdgst&ddgst&reconnect_delay=1", NULL, true), 0);
	write_read_compare(&r, 1, 0, 16);
	r.f->corrupt_rsp_hdgst = true;
	memset(b, 0x3c, sizeof(b));
	assert_int_equal(pt(&r, false, nvme_cmd_write, b, 512, 0, 0), 0);
	assert_memory_equal(r.f->ram, b, sizeof(b));
	assert_int_equal(ucmd_nvme_tcp_info(r.host, &info), 0);
	assert_int_equal(info.reconnects, 1);
	write_read_compare(&r, 40, 60, 17);
	assert_int_equal(pt_to(&r, false, nvme_cmd_read, b, 512, SILENT_LBA, 0, 50), -EINTR);
	write_read_compare(&r, 1, 3, 18);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
}

static void test_refused(void **state)
{
	struct fake *f = fake_start();
	struct ucmd_engine *e;
	struct ucmd_nvme_host *h = NULL;
	char url[128];

	(void)state;
	f->refuse_connect = true;
	snprintf(url, sizeof(url), "nvme-tcp://127.0.0.1:%u/%s", f->port, SUBNQN);
	assert_int_equal(ucmd_engine_create(&e), 0);
	assert_int_equal(ucmd_nvme_attach_tcp(e, url, NULL, NULL, &h), -ECONNREFUSED);
	assert_non_null(strstr(ucmd_last_error(), "refused"));
	assert_int_equal(ucmd_nvme_attach_tcp(e, "nvme-tcp://127.0.0.1:1", NULL, NULL, &h),
			 -EINVAL);
	assert_int_equal(ucmd_nvme_attach_tcp(e, "tcp://x/y", NULL, NULL, &h), -EINVAL);
	assert_int_equal(ucmd_nvme_attach_tcp(e, "nvme-tcp://127.0.0.1:1/q?bogus", NULL, NULL,
					      &h), -EINVAL);
	/* the reconnect and deadline options: seconds in range, else a clear refusal */
	static const char *const bad[] = {
		"reconnect_delay=0", "reconnect_delay=", "reconnect_delay=1x",
		"reconnect_delay=86401", "ctrl_loss_tmo=-2", "ctrl_loss_tmo=abc",
		"ctrl_loss_tmo=99999999999999999999", "reconnect_delay",
		"icresp_timeout=0", "admin_timeout=86401", "io_timeout=x", "io_timeout=",
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(url, sizeof(url), "nvme-tcp://127.0.0.1:%u/%s?%s", f->port, SUBNQN, bad[i]);
		assert_int_equal(ucmd_nvme_attach_tcp(e, url, NULL, NULL, &h), -EINVAL);
		assert_true(strstr(ucmd_last_error(), "seconds") ||
			    strstr(ucmd_last_error(), "unknown URL option"));
	}
	assert_null(h);
	ucmd_engine_free(e);
	fake_stop(f);
}

/*
 * I/O queues ask for no SQ flow control, so that a read that succeeds is
 * one C2HData (SUCCESS) PDU; a controller that refuses that (Connect
 * Invalid Parameters, or Invalid Field) is asked again without it on the
 * same connection, and a refusal for another reason is not retried.
 */
static void test_sqflow(void **state)
{
	static const uint16_t retried[] = { 1, 2 };
	struct rig r;

	(void)state;
	fake_refuse_sqflow = 0;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	pthread_mutex_lock(&r.f->lock);
	/* both I/O queues asked, none was refused, nothing was connected twice */
	assert_int_equal(r.f->sqflow_asked, 2);
	assert_int_equal(r.f->io_connects, 2);
	pthread_mutex_unlock(&r.f->lock);
	r.f->success_flag = true;	/* reads end with their C2HData alone */
	write_read_compare(&r, 8, 16, 0x31);
	r.f->success_flag = false;
	write_read_compare(&r, 8, 24, 0x32);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);

	for (unsigned i = 0; i < sizeof(retried) / sizeof(retried[0]); i++) {
		fake_refuse_sqflow = retried[i];
		assert_int_equal(rig_up(&r, "", NULL), 0);
		pthread_mutex_lock(&r.f->lock);
		/* each queue: refused with the flag, connected without it */
		assert_int_equal(r.f->sqflow_asked, 2);
		assert_int_equal(r.f->sqflow_refused, 2);
		assert_int_equal(r.f->io_connects, 4);
		pthread_mutex_unlock(&r.f->lock);
		write_read_compare(&r, 4, 40, (uint8_t)(0x40 + i));
		assert_false(r.f->bad_pdu_seen);
		rig_down(&r);
	}

	/* refused for something else: the attach fails, nothing is asked twice */
	fake_refuse_sqflow = 3;
	assert_int_equal(rig_up(&r, "", NULL), -ECONNREFUSED);
	assert_non_null(strstr(ucmd_last_error(), "refused"));
	pthread_mutex_lock(&r.f->lock);
	assert_int_equal(r.f->io_connects, r.f->sqflow_asked);
	assert_true(r.f->io_connects >= 1 && r.f->io_connects <= 2);
	pthread_mutex_unlock(&r.f->lock);
	fake_refuse_sqflow = 0;
	ucmd_engine_free(r.e);
	fake_stop(r.f);
}

/*
 * The host's system calls on its sockets, seen from inside: this binary
 * links the host statically, so these definitions take its calls (and the
 * fake's) before libc's. Per thread: the fd of the last recv that returned
 * less than it asked for, forgotten at any send or poll of that thread;
 * a recv on that fd that then finds nothing (EAGAIN) asked a question the
 * short recv had answered. Not under TSan, whose own interceptors of these
 * calls it would displace.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#if !defined(__SANITIZE_THREAD__) && !defined(UNDER_TSAN)
#define COUNTS_SYSCALLS 1
static __thread int short_fd = -1;
static atomic_uint needless_recvs;
/* the test's thread: its recvs that found nothing, other than right after a poll */
static __thread bool count_unpolled, after_poll;
static atomic_uint unpolled_empty_recvs;

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	long r = syscall(SYS_recvfrom, fd, buf, n, flags, NULL, NULL);

	if (r < 0 && errno == EAGAIN && fd == short_fd)
		atomic_fetch_add(&needless_recvs, 1);
	if (r < 0 && errno == EAGAIN && count_unpolled && !after_poll)
		atomic_fetch_add(&unpolled_empty_recvs, 1);
	short_fd = r > 0 && (size_t)r < n ? fd : -1;
	after_poll = false;
	return r;
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	short_fd = -1;
	after_poll = false;
	return syscall(SYS_sendmsg, fd, m, flags);
}

int poll(struct pollfd *pfs, nfds_t n, int timeout)
{
	short_fd = -1;
	after_poll = true;
	return (int)syscall(SYS_poll, pfs, n, timeout);
}
#endif

/*
 * A waiter's pass ends after the recv that took less than the buffer
 * holds: that recv emptied the socket, and what comes later wakes the
 * waiter's poll. It used to ask once more, and found nothing (a system
 * call per pass; the old host made at least one such recv per read here,
 * each read being a pass that ends on its one short recv).
 */
static void test_no_recv_after_drain(void **state)
{
#ifdef COUNTS_SYSCALLS
	struct rig r;
	uint8_t b[512];
	unsigned before;

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	r.f->whole_pdus = true;		/* no PDU ends up split over two recvs */
	r.f->success_flag = true;	/* one PDU per read */
	atomic_store(&nvme_tcp_wait_idle_ms, CLAIM_WIDE_MS);
	assert_int_equal(pt(&r, false, nvme_cmd_read, b, 512, 0, 0), 0);
	before = atomic_load(&needless_recvs);
	for (unsigned i = 0; i < 32; i++) {
		assert_int_equal(pt(&r, false, nvme_cmd_read, b, 512, i, 0), 0);
		assert_memory_equal(b, r.f->ram + i * 512, 512);
	}
	printf("recvs after a draining one: %u in 32 reads\n", atomic_load(&needless_recvs) - before);
	assert_int_equal(atomic_load(&needless_recvs) - before, 0);
	atomic_store(&nvme_tcp_wait_idle_ms, NVME_TCP_WAIT_IDLE_MS_TEST);
	r.f->success_flag = false;
	write_read_compare(&r, 17, 100, 31);	/* C2HData then CapsuleResp, whole */
	r.f->whole_pdus = false;
	write_read_compare(&r, 17, 100, 32);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
#else
	(void)state;
	skip();
#endif
}

/*
 * A waiter whose last read found the connection empty, and that will
 * sleep on it if it finds nothing, leaves the look to its poll (which
 * returns at once when something came): it used to recv first, find
 * nothing, then poll and recv again. 32 reads one at a time, each
 * answered 1 ms late: no recv of the waiting thread finds nothing except
 * right after a poll, two at most (on the old code one per read). A wait whose time
 * is up still reads what is there: a read answered at once is found by
 * a wait with a deadline that has passed.
 */
static void test_no_recv_before_sleep(void **state)
{
	struct rig r;
	uint8_t b[512];

	(void)state;
	assert_int_equal(rig_up(&r, "", NULL), 0);
	atomic_store(&nvme_tcp_wait_idle_ms, CLAIM_WIDE_MS);
	r.f->whole_pdus = true;		/* no PDU ends up split over two recvs */
	r.f->success_flag = true;	/* one PDU per read */
	/*
	 * The first read's answer may be read by the receiver (no waiter had
	 * come yet); from the second on this thread's claim keeps it away
	 */
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(pt(&r, false, nvme_cmd_read, b, 512, 0, 0), 0);
#ifdef COUNTS_SYSCALLS
	unsigned before;

	r.f->read_delay_ms = 1;
	count_unpolled = true;
	before = atomic_load(&unpolled_empty_recvs);
	for (unsigned i = 0; i < 32; i++) {
		assert_int_equal(pt(&r, false, nvme_cmd_read, b, 512, i, 0), 0);
		assert_memory_equal(b, r.f->ram + i * 512, 512);
	}
	count_unpolled = false;
	printf("recvs that found nothing, not after a poll: %u in 32 reads\n",
	       atomic_load(&unpolled_empty_recvs) - before);
	/*
	 * 0 in nearly every run; 1 was seen in 2 runs of 20 on a loaded
	 * machine (which path makes it was not found: no backtrace caught
	 * it). The old code makes one per read.
	 */
	assert_true(atomic_load(&unpolled_empty_recvs) - before <= 2);
	r.f->read_delay_ms = 0;
#endif
	r.f->success_flag = false;
	r.f->whole_pdus = false;

	/* submitted, answered meanwhile, then a wait whose time is up: it reads the socket */
	{
		struct nvme_uring_cmd c = { .opcode = nvme_cmd_read, .nsid = 1,
					    .addr = (uintptr_t)b, .data_len = 512, .cdw10 = 7 };
		struct __kernel_timespec ts = { .tv_nsec = 0 };
		struct io_uring_cqe *cqe = NULL;
		int ret = -ETIME;

		memset(b, 0, sizeof(b));
		ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &c);
		assert_int_equal(ucmd_submit(&r.ring), 1);
		/* the capsule may wait for this thread: a zero wait sends it; then the answer comes */
		for (unsigned i = 0; i < 2000 && ret == -ETIME; i++) {
			ret = ucmd_wait_cqe_timeout(&r.ring, &cqe, &ts);
			if (ret == -ETIME)
				usleep(1000);
		}
		assert_int_equal(ret, 0);
		assert_int_equal(cqe->res, 0);
		ucmd_cqe_seen(&r.ring, cqe);
		assert_memory_equal(b, r.f->ram + 7 * 512, 512);
	}
	atomic_store(&nvme_tcp_wait_idle_ms, NVME_TCP_WAIT_IDLE_MS_TEST);
	assert_false(r.f->bad_pdu_seen);
	rig_down(&r);
}

/*
 * A PDU that arrives in two pieces, cut at every byte of it (header,
 * header digest, data, data digest): the reader that took the first piece
 * finishes the PDU from the second, whichever thread reads (the ring's
 * waiter, whose pass ends on a short recv only between PDUs, or the
 * receiver), with and without digests; the data is intact.
 */
static void split_reads(struct rig *r, bool waiter)
{
	uint8_t b[512];
	/* the C2HData: 24-byte header, 512 bytes of data; with digests 8 more */
	uint32_t total = 24 + 512 + 8;

	atomic_store(&nvme_tcp_wait_idle_ms, waiter ? CLAIM_WIDE_MS : 0u);
	r->f->whole_pdus = true;
	r->f->success_flag = true;
	for (uint32_t cut = 1; cut < total; cut++) {
		atomic_store(&r->f->split_at, cut);
		memset(b, 0, sizeof(b));
		/* LBAs under 100: none of the scripted ones (SILENT_LBA) */
		int ret = pt(r, false, nvme_cmd_read, b, 512, cut % 100, 0);

		if (ret)
			printf("cut %u (%s): %d\n", cut, waiter ? "waiter" : "receiver", ret);
		assert_int_equal(ret, 0);
		assert_memory_equal(b, r->f->ram + (cut % 100) * 512, 512);
	}
	atomic_store(&r->f->split_at, 0);
	r->f->success_flag = false;
	r->f->whole_pdus = false;
	atomic_store(&nvme_tcp_wait_idle_ms, NVME_TCP_WAIT_IDLE_MS_TEST);
}

static void test_split_pdus(void **state)
{
	struct rig r;

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(rig_up(&r, i ? "?hdgst&ddgst" : "", NULL), 0);
		write_read_compare(&r, 3, 40, 40);
		split_reads(&r, true);
		split_reads(&r, false);
		assert_false(r.f->bad_pdu_seen);
		rig_down(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_identify),
		cmocka_unit_test(test_io_paths),
		cmocka_unit_test(test_batched_capsules),
		cmocka_unit_test(test_deferred_sends),
		cmocka_unit_test(test_deferred_unwaited),
		cmocka_unit_test(test_deferred_batch_sent),
		cmocka_unit_test(test_no_recv_before_sleep),
		cmocka_unit_test(test_digests),
		cmocka_unit_test(test_keep_alive),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_wrong_direction),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_sqflow),
		cmocka_unit_test(test_zoned_needs_id_ctrl),
		cmocka_unit_test(test_polled_queue),
		cmocka_unit_test(test_polled_idle),
		cmocka_unit_test(test_polled_recovery),
		cmocka_unit_test(test_waiter_reads),
		cmocka_unit_test(test_waiter_gone),
		cmocka_unit_test(test_no_recv_after_drain),
		cmocka_unit_test(test_split_pdus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
