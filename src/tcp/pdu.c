// SPDX-License-Identifier: MIT
/*
 * NVMe/TCP PDU checks and builders: pure functions over byte buffers, so
 * the target, the host transport, the unit tests and the fuzzer share one
 * parser. A check returns the TermReq fatal error status to send (negated)
 * and the offset of the offending field, as NVMe/TCP 1.0 section 3.6.2.9
 * asks of a receiver.
 */
#include <endian.h>
#include <string.h>

#include "tcp/pdu.h"

bool nvme_tcp_pdu_from_host(uint8_t type)
{
	return type == NVME_TCP_ICREQ || type == NVME_TCP_H2C_TERM || type == NVME_TCP_CMD ||
	       type == NVME_TCP_H2C_DATA;
}

unsigned int nvme_tcp_pdu_hlen(uint8_t type)
{
	switch (type) {
	case NVME_TCP_ICREQ:
	case NVME_TCP_ICRESP:
		return 128;
	case NVME_TCP_CMD:
		return 72;
	case NVME_TCP_H2C_TERM:
	case NVME_TCP_C2H_TERM:
	case NVME_TCP_RSP:
	case NVME_TCP_H2C_DATA:
	case NVME_TCP_C2H_DATA:
	case NVME_TCP_R2T:
		return 24;
	}
	return 0;
}

/* ICReq/ICResp and TermReqs never carry digests: they come before the
 * negotiation or after the connection is already lost. */
static bool has_hdgst(uint8_t type)
{
	return type == NVME_TCP_CMD || type == NVME_TCP_RSP || type == NVME_TCP_H2C_DATA ||
	       type == NVME_TCP_C2H_DATA || type == NVME_TCP_R2T;
}

static bool may_have_data(uint8_t type)
{
	return type == NVME_TCP_CMD || type == NVME_TCP_H2C_DATA || type == NVME_TCP_C2H_DATA ||
	       type == NVME_TCP_H2C_TERM || type == NVME_TCP_C2H_TERM;
}

static uint8_t allowed_flags(uint8_t type)
{
	switch (type) {
	case NVME_TCP_CMD:
		return NVME_TCP_F_HDGST | NVME_TCP_F_DDGST;
	case NVME_TCP_RSP:
	case NVME_TCP_R2T:
		return NVME_TCP_F_HDGST;
	case NVME_TCP_H2C_DATA:
		return NVME_TCP_F_HDGST | NVME_TCP_F_DDGST | NVME_TCP_F_DATA_LAST;
	case NVME_TCP_C2H_DATA:
		return NVME_TCP_F_HDGST | NVME_TCP_F_DDGST | NVME_TCP_F_DATA_LAST |
		       NVME_TCP_F_DATA_SUCCESS;
	}
	return 0;
}

static int fail(uint32_t *fei, uint32_t off, int fes)
{
	*fei = off;
	return -fes;
}

#define CH_FLAGS 1
#define CH_HLEN 2
#define CH_PDO 3
#define CH_PLEN 4

int nvme_tcp_check_ch(const struct nvme_tcp_hdr *ch, const struct nvme_tcp_rx_limits *lim,
		      uint32_t *hdr_len, uint32_t *fei)
{
	uint8_t type = ch->type;
	uint32_t hlen = nvme_tcp_pdu_hlen(type);
	uint32_t plen = le32toh(ch->plen);
	uint32_t hd, dd, hdrs;
	bool ic = type == NVME_TCP_ICREQ || type == NVME_TCP_ICRESP;
	bool term = type == NVME_TCP_H2C_TERM || type == NVME_TCP_C2H_TERM;

	if (!hlen || nvme_tcp_pdu_from_host(type) != lim->from_host)
		return fail(fei, 0, NVME_TCP_FES_INVALID_PDU_HDR);
	/* ICReq/ICResp first and once; a TermReq may come at any time */
	if (!term && ic == lim->ic_done)
		return fail(fei, 0, NVME_TCP_FES_PDU_SEQ_ERR);
	if (ch->hlen != hlen)
		return fail(fei, CH_HLEN, NVME_TCP_FES_INVALID_PDU_HDR);
	if (ch->flags & ~allowed_flags(type))
		return fail(fei, CH_FLAGS, NVME_TCP_FES_INVALID_PDU_HDR);

	hd = has_hdgst(type) && lim->hdgst ? NVME_TCP_DIGEST_LEN : 0;
	/* the header digest flag follows the negotiation exactly */
	if (!!(ch->flags & NVME_TCP_F_HDGST) != !!hd)
		return fail(fei, CH_FLAGS, NVME_TCP_FES_INVALID_PDU_HDR);
	hdrs = hlen + hd;
	if (plen < hdrs)
		return fail(fei, CH_PLEN, NVME_TCP_FES_INVALID_PDU_HDR);

	if (term) {
		if (ch->pdo || plen > hlen + NVME_TCP_TERM_MAX_DATA)
			return fail(fei, ch->pdo ? CH_PDO : CH_PLEN, NVME_TCP_FES_INVALID_PDU_HDR);
		*hdr_len = hlen;
		return 0;
	}
	if (plen == hdrs) {	/* no data */
		if (ch->flags & NVME_TCP_F_DDGST)
			return fail(fei, CH_FLAGS, NVME_TCP_FES_INVALID_PDU_HDR);
		if (type == NVME_TCP_H2C_DATA || type == NVME_TCP_C2H_DATA)
			return fail(fei, CH_PLEN, NVME_TCP_FES_INVALID_PDU_HDR);
		if (ch->pdo && ch->pdo != hdrs)
			return fail(fei, CH_PDO, NVME_TCP_FES_INVALID_PDU_HDR);
		*hdr_len = hdrs;
		return 0;
	}
	if (!may_have_data(type))
		return fail(fei, CH_PLEN, NVME_TCP_FES_INVALID_PDU_HDR);
	/* data: digest flag set iff negotiated, pdo past the header, aligned */
	dd = lim->ddgst ? NVME_TCP_DIGEST_LEN : 0;
	if (!!(ch->flags & NVME_TCP_F_DDGST) != !!dd)
		return fail(fei, CH_FLAGS, NVME_TCP_FES_INVALID_PDU_HDR);
	if (ch->pdo < hdrs || ch->pdo % ((lim->pda + 1u) * 4u))
		return fail(fei, CH_PDO, NVME_TCP_FES_INVALID_PDU_HDR);
	if (plen < (uint32_t)ch->pdo + dd + 1)
		return fail(fei, CH_PLEN, NVME_TCP_FES_INVALID_PDU_HDR);
	if (plen - ch->pdo - dd > lim->max_data)
		return fail(fei, CH_PLEN, NVME_TCP_FES_DATA_LIMIT_EXCEEDED);
	*hdr_len = hdrs;
	return 0;
}

uint32_t nvme_tcp_data_len(const struct nvme_tcp_hdr *ch, bool ddgst)
{
	uint32_t plen = le32toh(ch->plen);
	uint32_t dd = ddgst && (ch->flags & NVME_TCP_F_DDGST) ? NVME_TCP_DIGEST_LEN : 0;

	if (ch->type == NVME_TCP_H2C_TERM || ch->type == NVME_TCP_C2H_TERM)
		return plen > ch->hlen ? plen - ch->hlen : 0;
	if (!ch->pdo || plen <= (uint32_t)ch->pdo + dd)
		return 0;
	return plen - ch->pdo - dd;
}

static uint32_t get_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

int nvme_tcp_check_header(const void *hdr, size_t len, const struct nvme_tcp_rx_limits *lim,
			  uint32_t *fei)
{
	const struct nvme_tcp_hdr *ch = hdr;
	const uint8_t *b = hdr;
	uint32_t need;
	int ret;

	if (len < sizeof(*ch))
		return fail(fei, 0, NVME_TCP_FES_INVALID_PDU_HDR);
	ret = nvme_tcp_check_ch(ch, lim, &need, fei);
	if (ret)
		return ret;
	if (len < need)
		return fail(fei, CH_HLEN, NVME_TCP_FES_INVALID_PDU_HDR);
	if (need > ch->hlen &&
	    get_le32(b + ch->hlen) != nvme_tcp_crc32c(b, ch->hlen))
		return fail(fei, 0, NVME_TCP_FES_HDR_DIGEST_ERR);

	switch (ch->type) {
	case NVME_TCP_ICREQ: {
		const struct nvme_tcp_icreq *r = hdr;

		if (le16toh(r->pfv) != NVME_TCP_PFV_1_0)
			return fail(fei, offsetof(struct nvme_tcp_icreq, pfv),
				    NVME_TCP_FES_UNSUPPORTED_PARAM);
		if (r->hpda > NVME_TCP_MAX_HPDA)
			return fail(fei, offsetof(struct nvme_tcp_icreq, hpda),
				    NVME_TCP_FES_INVALID_PDU_HDR);
		if (r->digest & ~(NVME_TCP_HDR_DIGEST_ENABLE | NVME_TCP_DATA_DIGEST_ENABLE))
			return fail(fei, offsetof(struct nvme_tcp_icreq, digest),
				    NVME_TCP_FES_INVALID_PDU_HDR);
		break;
	}
	case NVME_TCP_ICRESP: {
		const struct nvme_tcp_icresp *r = hdr;
		uint32_t m = le32toh(r->maxh2cdata);

		if (le16toh(r->pfv) != NVME_TCP_PFV_1_0)
			return fail(fei, offsetof(struct nvme_tcp_icresp, pfv),
				    NVME_TCP_FES_UNSUPPORTED_PARAM);
		if (r->cpda > NVME_TCP_MAX_HPDA)
			return fail(fei, offsetof(struct nvme_tcp_icresp, cpda),
				    NVME_TCP_FES_INVALID_PDU_HDR);
		if (r->digest & ~(NVME_TCP_HDR_DIGEST_ENABLE | NVME_TCP_DATA_DIGEST_ENABLE))
			return fail(fei, offsetof(struct nvme_tcp_icresp, digest),
				    NVME_TCP_FES_INVALID_PDU_HDR);
		if (m < NVME_TCP_MIN_MAXH2CDATA || m % 4)
			return fail(fei, offsetof(struct nvme_tcp_icresp, maxh2cdata),
				    NVME_TCP_FES_INVALID_PDU_HDR);
		break;
	}
	case NVME_TCP_H2C_DATA:
	case NVME_TCP_C2H_DATA: {
		const struct nvme_tcp_data *d = hdr;

		/* datal must say what plen says, neither more nor less */
		if (le32toh(d->datal) != nvme_tcp_data_len(ch, lim->ddgst))
			return fail(fei, offsetof(struct nvme_tcp_data, datal),
				    NVME_TCP_FES_INVALID_PDU_HDR);
		break;
	}
	case NVME_TCP_R2T: {
		const struct nvme_tcp_r2t *r = hdr;

		if (!le32toh(r->r2tl))
			return fail(fei, offsetof(struct nvme_tcp_r2t, r2tl),
				    NVME_TCP_FES_INVALID_PDU_HDR);
		break;
	}
	}
	return 0;
}

uint32_t nvme_tcp_build_ch(struct nvme_tcp_hdr *ch, uint8_t type, uint8_t flags, uint32_t data_len,
			   bool hdgst, bool ddgst, uint8_t pda)
{
	uint32_t hlen = nvme_tcp_pdu_hlen(type);
	uint32_t hd = hdgst && has_hdgst(type) ? NVME_TCP_DIGEST_LEN : 0;
	uint32_t dd = ddgst && data_len ? NVME_TCP_DIGEST_LEN : 0;
	uint32_t align = (pda > NVME_TCP_MAX_HPDA ? NVME_TCP_MAX_HPDA + 1u : pda + 1u) * 4u;
	uint32_t pre = hlen + hd;

	ch->type = type;
	ch->hlen = (uint8_t)hlen;
	ch->flags = (uint8_t)(flags | (hd ? NVME_TCP_F_HDGST : 0) | (dd ? NVME_TCP_F_DDGST : 0));
	ch->pdo = 0;
	if (data_len) {
		pre = (pre + align - 1) / align * align;
		ch->pdo = (uint8_t)pre;
	}
	ch->plen = htole32(pre + data_len + dd);
	return pre;
}

void nvme_tcp_put_hdgst(void *hdr)
{
	struct nvme_tcp_hdr *ch = hdr;
	uint32_t crc = htole32(nvme_tcp_crc32c(hdr, ch->hlen));

	memcpy((uint8_t *)hdr + ch->hlen, &crc, sizeof(crc));
}

uint32_t nvme_tcp_build_term(struct nvme_tcp_term *t, size_t cap, uint8_t type, uint16_t fes,
			     uint32_t fei, const void *bad_hdr, size_t bad_len)
{
	uint32_t fei_le = htole32(fei);

	if (bad_len > NVME_TCP_TERM_MAX_DATA)
		bad_len = NVME_TCP_TERM_MAX_DATA;
	if (cap < sizeof(*t))
		return 0;
	if (bad_len > cap - sizeof(*t))
		bad_len = cap - sizeof(*t);
	memset(t, 0, sizeof(*t));
	t->hdr.type = type;
	t->hdr.hlen = sizeof(*t);
	t->hdr.plen = htole32((uint32_t)(sizeof(*t) + bad_len));
	t->fes = htole16(fes);
	memcpy(t->fei, &fei_le, sizeof(t->fei));
	if (bad_len)
		memcpy(t + 1, bad_hdr, bad_len);
	return (uint32_t)(sizeof(*t) + bad_len);
}
