// SPDX-License-Identifier: MIT
/*
 * src/tcp/pdu.c: the NVMe/TCP header checks on hostile bytes. Input: one
 * byte of receiver state (bit 0 header digest, bit 1 data digest, bit 2
 * ICReq/ICResp done, bit 3 the receiver is a target, bits 4-7 the data
 * alignment), then a PDU as it arrives. A header the checks accept must
 * hold what the receive loops rely on: its length fits the header buffer,
 * the data lies after the header and within plen, within the limit, and
 * datal of a data PDU is exactly that. A rejected one gives a FES a
 * TermReq may carry and a field offset inside the header. The TermReq
 * builder runs on the same bytes.
 */
#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/pdu.h"

#define MAX_DATA 8192u

static void check_rejection(int ret, uint32_t fei)
{
	if (ret > 0 || ret < -NVME_TCP_FES_UNSUPPORTED_PARAM)
		abort();
	if (ret && fei >= NVME_TCP_MAX_HLEN + NVME_TCP_DIGEST_LEN)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvme_tcp_rx_limits lim;
	uint8_t hdr[NVME_TCP_HDR_BUF];
	uint8_t term[sizeof(struct nvme_tcp_term) + NVME_TCP_TERM_MAX_DATA];
	const struct nvme_tcp_hdr *ch = (const void *)hdr;
	uint32_t hdr_len = 0, fei = 0, dl, plen;
	size_t n;
	int ret;

	if (size < 1 + sizeof(struct nvme_tcp_hdr))
		return 0;
	memset(&lim, 0, sizeof(lim));
	lim.hdgst = data[0] & 1;
	lim.ddgst = data[0] & 2;
	lim.ic_done = data[0] & 4;
	lim.from_host = data[0] & 8;
	lim.pda = data[0] >> 4;
	lim.max_data = MAX_DATA;
	data++;
	size--;
	n = size < sizeof(hdr) ? size : sizeof(hdr);
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, data, n);

	ret = nvme_tcp_check_ch(ch, &lim, &hdr_len, &fei);
	check_rejection(ret, fei);
	if (!ret) {
		/* what the receiver reads next must fit its buffer */
		if (hdr_len < sizeof(*ch) || hdr_len > NVME_TCP_MAX_HLEN + NVME_TCP_DIGEST_LEN ||
		    hdr_len < ch->hlen)
			abort();
		ret = nvme_tcp_check_header(hdr, n, &lim, &fei);
		check_rejection(ret, fei);
	}
	if (!ret && n >= hdr_len) {
		plen = le32toh(ch->plen);
		dl = nvme_tcp_data_len(ch, lim.ddgst);
		if (dl > plen)
			abort();
		if (ch->type == NVME_TCP_H2C_TERM || ch->type == NVME_TCP_C2H_TERM) {
			if (dl > NVME_TCP_TERM_MAX_DATA)
				abort();
		} else if (dl) {
			if (ch->pdo < hdr_len || dl > MAX_DATA ||
			    (uint64_t)ch->pdo + dl + (lim.ddgst ? 4 : 0) != plen ||
			    ch->pdo % ((lim.pda + 1u) * 4u))
				abort();
		} else if (plen != hdr_len) {
			abort();
		}
		if ((ch->type == NVME_TCP_H2C_DATA || ch->type == NVME_TCP_C2H_DATA) &&
		    (!dl || le32toh(((const struct nvme_tcp_data *)hdr)->datal) != dl))
			abort();
	}

	/* a TermReq carrying these bytes as the offending header */
	n = nvme_tcp_build_term((void *)term, sizeof(term), NVME_TCP_C2H_TERM,
				(uint16_t)(ret ? -ret : 1), fei, data, size);
	if (n < sizeof(struct nvme_tcp_term) || n > sizeof(term) ||
	    le32toh(((struct nvme_tcp_term *)term)->hdr.plen) != n)
		abort();
	return 0;
}
