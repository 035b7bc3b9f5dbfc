/* SPDX-License-Identifier: MIT */
/*
 * src/tcp/pdu.c: every rule of a received header (NVMe/TCP 1.0 section 3.6)
 * with the TermReq status and field offset it must give, the digests, and
 * the builders' headers passing the checks they are held to.
 */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "tcp/pdu.h"

static const struct nvme_tcp_rx_limits target_lim = {
	.ic_done = true, .from_host = true, .max_data = 8192,
};

/* A header built by pdu.c itself, padded and digested as it goes on the wire. */
static uint32_t build(uint8_t *buf, uint8_t type, uint8_t flags, uint32_t data_len, bool hd,
		      bool dd)
{
	uint32_t pre;

	memset(buf, 0, NVME_TCP_HDR_BUF);
	pre = nvme_tcp_build_ch((struct nvme_tcp_hdr *)buf, type, flags, data_len, hd, dd, 0);
	if (type == NVME_TCP_H2C_DATA || type == NVME_TCP_C2H_DATA)
		((struct nvme_tcp_data *)buf)->datal = htole32(data_len);
	if (hd)
		nvme_tcp_put_hdgst(buf);
	return pre;
}

static void expect(const uint8_t *buf, size_t len, const struct nvme_tcp_rx_limits *lim, int ret,
		   uint32_t fei)
{
	uint32_t got_fei = 12345;

	assert_int_equal(nvme_tcp_check_header(buf, len, lim, &got_fei), ret);
	if (ret)
		assert_int_equal(got_fei, fei);
}

static void test_crc32c(void **state)
{
	(void)state;
	/* the check value of CRC-32C (RFC 3720 B.4 uses it for iSCSI) */
	assert_int_equal(nvme_tcp_crc32c("123456789", 9), 0xe3069283);
	assert_int_equal(nvme_tcp_crc32c_update(nvme_tcp_crc32c("1234", 4), "56789", 5), 0xe3069283);
	assert_int_equal(nvme_tcp_crc32c("", 0), 0);
}

static void test_sizes_and_types(void **state)
{
	(void)state;
	assert_int_equal(nvme_tcp_pdu_hlen(NVME_TCP_ICREQ), 128);
	assert_int_equal(nvme_tcp_pdu_hlen(NVME_TCP_CMD), 72);
	assert_int_equal(nvme_tcp_pdu_hlen(NVME_TCP_R2T), 24);
	assert_int_equal(nvme_tcp_pdu_hlen(0x08), 0);	/* reserved */
	assert_int_equal(nvme_tcp_pdu_hlen(0x7f), 0);
	assert_true(nvme_tcp_pdu_from_host(NVME_TCP_H2C_DATA));
	assert_false(nvme_tcp_pdu_from_host(NVME_TCP_C2H_DATA));
	assert_int_equal(offsetof(struct nvme_tcp_data, ttag), 10);
	assert_int_equal(offsetof(struct nvme_tcp_icreq, hpda), 10);
	assert_int_equal(offsetof(struct nvme_tcp_icresp, maxh2cdata), 12);
	assert_int_equal(offsetof(struct nvmf_connect_sqe, kato), 48);
	assert_int_equal(offsetof(struct nvmf_prop_sqe, offset), 44);
}

static void test_icreq(void **state)
{
	struct nvme_tcp_rx_limits lim = { .from_host = true };
	uint8_t buf[NVME_TCP_HDR_BUF];
	struct nvme_tcp_icreq *r = (void *)buf;
	uint32_t len, fei;

	(void)state;
	assert_int_equal(build(buf, NVME_TCP_ICREQ, 0, 0, false, false), 128);
	assert_int_equal(le32toh(r->hdr.plen), 128);
	assert_int_equal(nvme_tcp_check_ch(&r->hdr, &lim, &len, &fei), 0);
	assert_int_equal(len, 128);
	expect(buf, 128, &lim, 0, 0);
	r->pfv = htole16(1);
	expect(buf, 128, &lim, -NVME_TCP_FES_UNSUPPORTED_PARAM, 8);
	r->pfv = 0;
	r->hpda = 32;
	expect(buf, 128, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 10);
	r->hpda = 0;
	r->digest = 4;
	expect(buf, 128, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 11);
	r->digest = 3;
	expect(buf, 128, &lim, 0, 0);
	/* a second ICReq, or a command before the first, is out of sequence */
	expect(buf, 128, &target_lim, -NVME_TCP_FES_PDU_SEQ_ERR, 0);
	build(buf, NVME_TCP_CMD, 0, 0, false, false);
	expect(buf, 72, &lim, -NVME_TCP_FES_PDU_SEQ_ERR, 0);
	/* a header digest is never part of an ICReq */
	build(buf, NVME_TCP_ICREQ, 0, 0, false, false);
	r->hdr.flags = NVME_TCP_F_HDGST;
	expect(buf, 128, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 1);
}

static void test_icresp(void **state)
{
	struct nvme_tcp_rx_limits lim = { .from_host = false };
	uint8_t buf[NVME_TCP_HDR_BUF];
	struct nvme_tcp_icresp *r = (void *)buf;

	(void)state;
	build(buf, NVME_TCP_ICRESP, 0, 0, false, false);
	r->maxh2cdata = htole32(4096);
	expect(buf, 128, &lim, 0, 0);
	r->maxh2cdata = htole32(4094);
	expect(buf, 128, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 12);
	r->maxh2cdata = htole32(2048);
	expect(buf, 128, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 12);
	/* an ICResp sent to a target: wrong direction */
	r->maxh2cdata = htole32(8192);
	lim.from_host = true;
	expect(buf, 128, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 0);
}

static void test_cmd(void **state)
{
	struct nvme_tcp_rx_limits lim = target_lim;
	uint8_t buf[NVME_TCP_HDR_BUF];
	struct nvme_tcp_hdr *ch = (void *)buf;
	uint32_t len, fei;

	(void)state;
	/* no data: plen = hlen, pdo 0 */
	assert_int_equal(build(buf, NVME_TCP_CMD, 0, 0, false, false), 72);
	assert_int_equal(ch->pdo, 0);
	expect(buf, 72, &lim, 0, 0);
	/* in-capsule data: pdo after the header, the data length follows */
	assert_int_equal(build(buf, NVME_TCP_CMD, 0, 4096, false, false), 72);
	assert_int_equal(ch->pdo, 72);
	assert_int_equal(nvme_tcp_check_ch(ch, &lim, &len, &fei), 0);
	assert_int_equal(nvme_tcp_data_len(ch, false), 4096);
	/* pdo inside the header */
	ch->pdo = 68;
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 3);
	/* pdo not aligned as cpda asks: (1 + 1) * 4 = 8 bytes */
	lim.pda = 1;
	ch->pdo = 76;
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 3);
	lim.pda = 0;
	/* more data than the receiver takes */
	build(buf, NVME_TCP_CMD, 0, 8193, false, false);
	expect(buf, 72, &lim, -NVME_TCP_FES_DATA_LIMIT_EXCEEDED, 4);
	/* plen shorter than the header */
	build(buf, NVME_TCP_CMD, 0, 0, false, false);
	ch->plen = htole32(71);
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 4);
	/* hlen not the type's */
	build(buf, NVME_TCP_CMD, 0, 0, false, false);
	ch->hlen = 24;
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 2);
	/* a flag the type does not have */
	build(buf, NVME_TCP_CMD, NVME_TCP_F_DATA_LAST, 0, false, false);
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 1);
	/* a PDU the host does not send, and a reserved type */
	build(buf, NVME_TCP_R2T, 0, 0, false, false);
	expect(buf, 24, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 0);
	ch->type = 0x0a;
	expect(buf, 24, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 0);
	/* a data digest flag with no data */
	lim.ddgst = true;
	build(buf, NVME_TCP_CMD, 0, 0, false, false);
	ch->flags = NVME_TCP_F_DDGST;
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 1);
	/* data without the negotiated data digest */
	build(buf, NVME_TCP_CMD, 0, 16, false, false);
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 1);
	build(buf, NVME_TCP_CMD, 0, 16, false, true);
	expect(buf, 72, &lim, 0, 0);
	assert_int_equal(nvme_tcp_data_len(ch, true), 16);
}

static void test_digests(void **state)
{
	struct nvme_tcp_rx_limits lim = target_lim;
	uint8_t buf[NVME_TCP_HDR_BUF];
	struct nvme_tcp_hdr *ch = (void *)buf;
	uint32_t len, fei;

	(void)state;
	lim.hdgst = true;
	assert_int_equal(build(buf, NVME_TCP_CMD, 0, 0, true, false), 76);
	assert_int_equal(ch->flags, NVME_TCP_F_HDGST);
	assert_int_equal(nvme_tcp_check_ch(ch, &lim, &len, &fei), 0);
	assert_int_equal(len, 76);
	expect(buf, 76, &lim, 0, 0);
	buf[30] ^= 1;	/* one bit of the SQE */
	expect(buf, 76, &lim, -NVME_TCP_FES_HDR_DIGEST_ERR, 0);
	/* the header digest flag must follow the negotiation */
	build(buf, NVME_TCP_CMD, 0, 0, false, false);
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 1);
	lim.hdgst = false;
	build(buf, NVME_TCP_CMD, 0, 0, true, false);
	expect(buf, 76, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 1);
	/* a buffer shorter than the header and its digest */
	lim.hdgst = true;
	build(buf, NVME_TCP_CMD, 0, 0, true, false);
	expect(buf, 72, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 2);
	/* data after a digested header is aligned past it */
	lim.ddgst = true;
	assert_int_equal(build(buf, NVME_TCP_H2C_DATA, NVME_TCP_F_DATA_LAST, 100, true, true), 28);
	assert_int_equal(le32toh(ch->plen), 28 + 100 + 4);
	expect(buf, 28, &lim, 0, 0);
}

static void test_data_pdus(void **state)
{
	struct nvme_tcp_rx_limits lim = target_lim;
	struct nvme_tcp_rx_limits host = { .ic_done = true, .from_host = false, .max_data = 1 << 20 };
	uint8_t buf[NVME_TCP_HDR_BUF];
	struct nvme_tcp_data *d = (void *)buf;

	(void)state;
	build(buf, NVME_TCP_H2C_DATA, NVME_TCP_F_DATA_LAST, 512, false, false);
	expect(buf, 24, &lim, 0, 0);
	/* datal must agree with plen */
	d->datal = htole32(511);
	expect(buf, 24, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 16);
	/* an H2CData without data */
	build(buf, NVME_TCP_H2C_DATA, 0, 0, false, false);
	expect(buf, 24, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 4);
	/* SUCCESS is a C2HData flag only */
	build(buf, NVME_TCP_H2C_DATA, NVME_TCP_F_DATA_SUCCESS, 8, false, false);
	expect(buf, 24, &lim, -NVME_TCP_FES_INVALID_PDU_HDR, 1);
	build(buf, NVME_TCP_C2H_DATA, NVME_TCP_F_DATA_LAST | NVME_TCP_F_DATA_SUCCESS, 8, false,
	      false);
	expect(buf, 24, &host, 0, 0);
	/* R2T: no data, a length */
	build(buf, NVME_TCP_R2T, 0, 0, false, false);
	expect(buf, 24, &host, -NVME_TCP_FES_INVALID_PDU_HDR, 16);
	((struct nvme_tcp_r2t *)buf)->r2tl = htole32(4096);
	expect(buf, 24, &host, 0, 0);
	/* CapsuleResp with data */
	build(buf, NVME_TCP_RSP, 0, 0, false, false);
	((struct nvme_tcp_hdr *)buf)->plen = htole32(28);
	((struct nvme_tcp_hdr *)buf)->pdo = 24;
	expect(buf, 24, &host, -NVME_TCP_FES_INVALID_PDU_HDR, 4);
}

static void test_term(void **state)
{
	uint8_t bad[200], out[sizeof(struct nvme_tcp_term) + NVME_TCP_TERM_MAX_DATA];
	struct nvme_tcp_term *t = (void *)out;
	struct nvme_tcp_rx_limits host = { .from_host = false };
	uint32_t n, fei;

	(void)state;
	memset(bad, 0xab, sizeof(bad));
	/* at most 128 bytes of the offending header */
	n = nvme_tcp_build_term(t, sizeof(out), NVME_TCP_C2H_TERM, NVME_TCP_FES_HDR_DIGEST_ERR, 7,
				bad, sizeof(bad));
	assert_int_equal(n, 24 + 128);
	assert_int_equal(le32toh(t->hdr.plen), n);
	assert_int_equal(le16toh(t->fes), NVME_TCP_FES_HDR_DIGEST_ERR);
	memcpy(&fei, t->fei, 4);
	assert_int_equal(le32toh(fei), 7);
	assert_memory_equal(out + 24, bad, 128);
	/* a TermReq passes the checks at any point, before ICResp too */
	expect(out, 24, &host, 0, 0);
	host.ic_done = true;
	expect(out, 24, &host, 0, 0);
	/* longer than 152 bytes */
	t->hdr.plen = htole32(153);
	expect(out, 24, &host, -NVME_TCP_FES_INVALID_PDU_HDR, 4);
	/* a buffer too small for even the header */
	assert_int_equal(nvme_tcp_build_term(t, 10, NVME_TCP_C2H_TERM, 1, 0, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_sizes_and_types),
		cmocka_unit_test(test_icreq),
		cmocka_unit_test(test_icresp),
		cmocka_unit_test(test_cmd),
		cmocka_unit_test(test_digests),
		cmocka_unit_test(test_data_pdus),
		cmocka_unit_test(test_term),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
