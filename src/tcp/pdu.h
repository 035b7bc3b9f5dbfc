/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP PDUs (NVMe/TCP Transport Specification 1.0, section 3.6) and the
 * NVMe over Fabrics command set they carry: the contract shared by ucmdd's
 * target (src/nvme/target/tcp*.c) and the host transport. Layouts follow the
 * specification; every multi-byte field is little endian on the wire (the
 * structures name them __le* for that reason; use le*toh / htole*).
 *
 * A PDU is: common header (8 bytes) + PDU specific header (hlen counts
 * both) + optional header digest (4 bytes, CRC32C of the hlen bytes) +
 * padding up to pdo + data + optional data digest (4 bytes, CRC32C of
 * the data). plen is the whole PDU on the wire, digests included.
 */
#ifndef UCMD_TCP_PDU_H
#define UCMD_TCP_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nvme/types.h>	/* nvmf_connect_data, nvmf_disc_log_*, enum nvme_fctype */
#include <ucmd/nvme_wire.h>	/* the SQE and CQE */

#include "lib/crc32c.h"

#define NVME_TCP_DEFAULT_PORT	4420
#define NVME_TCP_DIGEST_LEN	4
#define NVME_TCP_PFV_1_0	0x0000	/* the only PDU format version */
#define NVME_TCP_MAX_HPDA	31	/* hpda/cpda are 0's based dwords */
#define NVME_TCP_MIN_MAXH2CDATA	4096	/* and a multiple of 4: Linux checks */
#define NVME_TCP_ADMIN_CCSZ	8192	/* in-capsule data Linux uses on the admin queue */

/* PDU types (common header .type). 0x08 and 0x0a..0x7f are reserved. */
enum nvme_tcp_pdu_type {
	NVME_TCP_ICREQ		= 0x00,
	NVME_TCP_ICRESP		= 0x01,
	NVME_TCP_H2C_TERM	= 0x02,
	NVME_TCP_C2H_TERM	= 0x03,
	NVME_TCP_CMD		= 0x04,	/* CapsuleCmd */
	NVME_TCP_RSP		= 0x05,	/* CapsuleResp */
	NVME_TCP_H2C_DATA	= 0x06,
	NVME_TCP_C2H_DATA	= 0x07,
	NVME_TCP_R2T		= 0x09,
};

/* Common header flags. LAST_PDU and SUCCESS are for data PDUs only. */
enum nvme_tcp_pdu_flags {
	NVME_TCP_F_HDGST	= 1 << 0,	/* header digest present */
	NVME_TCP_F_DDGST	= 1 << 1,	/* data digest present */
	NVME_TCP_F_DATA_LAST	= 1 << 2,	/* last data PDU of the command */
	NVME_TCP_F_DATA_SUCCESS	= 1 << 3,	/* C2HData: no CapsuleResp follows */
};

/* ICReq/ICResp .digest: which digests the connection uses */
enum nvme_tcp_digest_option {
	NVME_TCP_HDR_DIGEST_ENABLE	= 1 << 0,
	NVME_TCP_DATA_DIGEST_ENABLE	= 1 << 1,
};

/* TermReq fatal error status */
enum nvme_tcp_fes {
	NVME_TCP_FES_INVALID_PDU_HDR	= 0x01,	/* fei: byte offset of the field */
	NVME_TCP_FES_PDU_SEQ_ERR	= 0x02,
	NVME_TCP_FES_HDR_DIGEST_ERR	= 0x03,
	NVME_TCP_FES_DATA_OUT_OF_RANGE	= 0x04,
	NVME_TCP_FES_DATA_LIMIT_EXCEEDED = 0x05,	/* also "R2T limit exceeded" */
	NVME_TCP_FES_UNSUPPORTED_PARAM	= 0x06,	/* fei: byte offset of the field */
};

/* A TermReq PDU carries at most 128 bytes of the offending PDU's header */
#define NVME_TCP_TERM_MAX_DATA	128

struct nvme_tcp_hdr {
	uint8_t		type;
	uint8_t		flags;
	uint8_t		hlen;	/* common + specific header, no digest */
	uint8_t		pdo;	/* offset of the data in the PDU, 0: none */
	__le32		plen;	/* the whole PDU, digests included */
};

struct nvme_tcp_icreq {
	struct nvme_tcp_hdr hdr;
	__le16		pfv;
	uint8_t		hpda;	/* host PDU data alignment, 0's based dwords */
	uint8_t		digest;	/* enum nvme_tcp_digest_option */
	__le32		maxr2t;	/* outstanding R2Ts per command, 0's based */
	uint8_t		rsvd[112];
};

struct nvme_tcp_icresp {
	struct nvme_tcp_hdr hdr;
	__le16		pfv;
	uint8_t		cpda;	/* controller PDU data alignment */
	uint8_t		digest;
	__le32		maxh2cdata;	/* largest H2CData payload, bytes */
	uint8_t		rsvd[112];
};

struct nvme_tcp_term {	/* H2CTermReq and C2HTermReq */
	struct nvme_tcp_hdr hdr;
	__le16		fes;
	uint8_t		fei[4];	/* fatal error information */
	uint8_t		rsvd[10];
	/* followed by up to 128 bytes of the offending PDU header */
};

struct nvme_tcp_cmd {	/* CapsuleCmd: the SQE, then in-capsule data at pdo */
	struct nvme_tcp_hdr hdr;
	struct ucmd_nvme_sqe cmd;
};

struct nvme_tcp_rsp {	/* CapsuleResp */
	struct nvme_tcp_hdr hdr;
	struct ucmd_nvme_cqe cqe;
};

struct nvme_tcp_data {	/* H2CData and C2HData */
	struct nvme_tcp_hdr hdr;
	uint16_t	cccid;	/* command capsule CID (wire order: le) */
	uint16_t	ttag;	/* H2CData: the R2T's transfer tag; C2H: reserved */
	__le32		datao;	/* offset in the command's data buffer */
	__le32		datal;	/* bytes in this PDU */
	uint8_t		rsvd[4];
};

struct nvme_tcp_r2t {
	struct nvme_tcp_hdr hdr;
	uint16_t	cccid;
	uint16_t	ttag;
	__le32		r2to;	/* offset of the requested data */
	__le32		r2tl;	/* bytes requested */
	uint8_t		rsvd[4];
};

_Static_assert(sizeof(struct nvme_tcp_hdr) == 8, "common header");
_Static_assert(sizeof(struct nvme_tcp_icreq) == 128, "ICReq");
_Static_assert(sizeof(struct nvme_tcp_icresp) == 128, "ICResp");
_Static_assert(sizeof(struct nvme_tcp_term) == 24, "TermReq");
_Static_assert(sizeof(struct nvme_tcp_cmd) == 72, "CapsuleCmd");
_Static_assert(sizeof(struct nvme_tcp_rsp) == 24, "CapsuleResp");
_Static_assert(sizeof(struct nvme_tcp_data) == 24, "H2CData/C2HData");
_Static_assert(sizeof(struct nvme_tcp_r2t) == 24, "R2T");

/* The largest specific header (ICReq/ICResp), plus a header digest */
#define NVME_TCP_MAX_HLEN	128
#define NVME_TCP_HDR_BUF	256	/* pdo is 8 bits: header + digest + padding fit */
/* A header buffer is read as the PDU structs (4- and 8-byte fields): declare it _Alignas(8). */

/*
 * NVMe over Fabrics command set (NVMe-oF 1.1, section 3): opcode 0x7f on
 * any queue, the command type in byte 4. libnvme names the types
 * (enum nvme_fctype); the SQE layouts of each are below.
 */
#define NVMF_OPC_FABRICS	0x7f
#define NVMF_FCTYPE_PROP_SET	0x00
#define NVMF_FCTYPE_CONNECT	0x01
#define NVMF_FCTYPE_PROP_GET	0x04
#define NVMF_FCTYPE_AUTH_SEND	0x05
#define NVMF_FCTYPE_AUTH_RECV	0x06
#define NVMF_FCTYPE_DISCONNECT	0x08

/* Command specific status codes (SCT 1) of Connect */
#define NVMF_SC_CONNECT_INCOMPAT_FMT	0x80
#define NVMF_SC_CONNECT_CTRL_BUSY	0x81
#define NVMF_SC_CONNECT_INVALID_PARAM	0x82
#define NVMF_SC_CONNECT_RESTART_DISC	0x83
#define NVMF_SC_CONNECT_INVALID_HOST	0x84
/* Connect "invalid parameter" response: dw0 bit 16 says the field is in
 * the data (1) or the SQE (0), bits 15:0 its byte offset. */
#define NVMF_CONNECT_IATTR_DATA		(1u << 16)

#define NVMF_CONNECT_DATA_LEN	1024	/* sizeof(struct nvmf_connect_data) */
#define NVMF_DISC_ENTRY_LEN	1024
#define NVMF_DISC_HDR_LEN	1024
#define NVMF_LOG_DISCOVERY	0x70
#define NVMF_CNTLID_DYNAMIC	0xffff

/* Property offsets (the controller registers of NVMe base 3.1.3) */
#define NVMF_PROP_CAP	0x00	/* 8 bytes */
#define NVMF_PROP_VS	0x08
#define NVMF_PROP_CC	0x14
#define NVMF_PROP_CSTS	0x1c
#define NVMF_PROP_NSSR	0x20

/* Property Get/Set attrib bits 2:0: the property size */
#define NVMF_PROP_ATTR_SIZE8	0x1

struct nvmf_common_sqe {
	uint8_t		opcode;	/* 0x7f */
	uint8_t		flags;	/* PSDT in bits 7:6, SGL for fabrics */
	uint16_t	cid;
	uint8_t		fctype;
	uint8_t		rsvd5[19];
	uint8_t		sgl[16];	/* SGL descriptor 1 */
	uint8_t		specific[24];
};

struct nvmf_connect_sqe {
	uint8_t		opcode;
	uint8_t		flags;
	uint16_t	cid;
	uint8_t		fctype;	/* 0x01 */
	uint8_t		rsvd5[19];
	uint8_t		sgl[16];	/* the 1024 bytes of nvmf_connect_data */
	__le16		recfmt;	/* record format, 0 */
	__le16		qid;	/* 0: admin queue */
	__le16		sqsize;	/* 0's based */
	uint8_t		cattr;	/* NVMF_CONNECT_DISABLE_SQFLOW */
	uint8_t		rsvd47;
	__le32		kato;	/* keep alive timeout, ms, admin queue only */
	uint8_t		rsvd52[12];
};

/*
 * Connect's CATTR bit 2 (SQFCD): the host asks for no SQ flow control on
 * the queue; SQHD is then reserved and a read that succeeds may end with
 * C2HData's SUCCESS flag instead of a CapsuleResp (NVMe/TCP 1.0 3.6.2.7)
 */
#define NVMF_CONNECT_DISABLE_SQFLOW	(1u << 2)

struct nvmf_prop_sqe {	/* Property Get and Property Set */
	uint8_t		opcode;
	uint8_t		flags;
	uint16_t	cid;
	uint8_t		fctype;
	uint8_t		rsvd5[35];
	uint8_t		attrib;	/* NVMF_PROP_ATTR_SIZE8 or 0 (4 bytes) */
	uint8_t		rsvd41[3];
	__le32		offset;
	__le64		value;	/* Property Set only */
	uint8_t		rsvd56[8];
};

_Static_assert(sizeof(struct nvmf_common_sqe) == 64, "fabrics SQE");

/*
 * A command's data direction: opcode bits 1:0, or the fabrics command
 * type's (NVMe-oF 1.1 section 3.1): bit 0 host to controller (R2T and
 * H2CData may move it), bit 1 controller to host (C2HData may)
 */
#define NVME_XFER_H2C	1u
#define NVME_XFER_C2H	2u
static inline unsigned nvme_xfer_dir(const void *sqe)
{
	const struct nvmf_common_sqe *f = sqe;

	return (f->opcode == NVMF_OPC_FABRICS ? f->fctype : f->opcode) & 3u;
}
_Static_assert(sizeof(struct nvmf_connect_sqe) == 64, "Connect SQE");
_Static_assert(sizeof(struct nvmf_prop_sqe) == 64, "Property SQE");
_Static_assert(sizeof(struct nvmf_connect_data) == NVMF_CONNECT_DATA_LEN, "Connect data");
_Static_assert(sizeof(struct nvmf_disc_log_entry) == NVMF_DISC_ENTRY_LEN, "discovery entry");

/*
 * SGL descriptor 1 as NVMe/TCP uses it (NVMe/TCP 1.0 section 3.3.2): the
 * type byte (byte 15) is descriptor type << 4 | subtype.
 *  - 0x01 Data Block, Offset: in-capsule data, addr = offset from the
 *    start of the in-capsule data, length in bytes 8..11;
 *  - 0x5a Transport SGL Data Block, transport specific: the data moves
 *    by C2HData (read) or R2T + H2CData (write), length in bytes 8..11;
 *    length 0 means no data.
 */
#define NVME_SGL_TYPE_DATA_BLOCK	0x0
#define NVME_SGL_TYPE_TRANSPORT		0x5
#define NVME_SGL_SUB_ADDRESS		0x0
#define NVME_SGL_SUB_OFFSET		0x1
#define NVME_SGL_SUB_TRANSPORT		0xa
#define NVME_TCP_SGL_INCAPSULE	((NVME_SGL_TYPE_DATA_BLOCK << 4) | NVME_SGL_SUB_OFFSET)
#define NVME_TCP_SGL_TRANSPORT	((NVME_SGL_TYPE_TRANSPORT << 4) | NVME_SGL_SUB_TRANSPORT)
#define NVME_CMD_PSDT_SGL	0x40	/* SQE flags: SGLs, metadata buffer */

struct nvme_tcp_sgl {
	__le64		addr;
	__le32		length;
	uint8_t		rsvd[3];
	uint8_t		type;
};
_Static_assert(sizeof(struct nvme_tcp_sgl) == 16, "SGL descriptor");

/* ---- pdu.c: pure functions, no I/O ---- */

/* CRC32C as NVMe/TCP digests use it: the one of lib/crc32c.h. */
static inline uint32_t nvme_tcp_crc32c(const void *buf, size_t len)
{
	return crc32c(0, buf, len);
}
/* The same, continued over several buffers: start with crc = 0. */
static inline uint32_t nvme_tcp_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	return crc32c(crc, buf, len);
}

/* Whether the PDU of this type comes from the host / the controller */
bool nvme_tcp_pdu_from_host(uint8_t type);
/* The fixed hlen of a type, or 0 for an unknown or reserved type */
unsigned int nvme_tcp_pdu_hlen(uint8_t type);

/*
 * What a receiver knows when it checks a header: the digests negotiated by
 * ICReq/ICResp (none before), the alignment the peer must use (cpda for a
 * target receiving from the host: pdo a multiple of (cpda+1)*4), the
 * largest data it accepts in one PDU.
 */
struct nvme_tcp_rx_limits {
	bool		hdgst;
	bool		ddgst;
	bool		ic_done;	/* ICReq/ICResp exchanged */
	bool		from_host;	/* the receiver is the target */
	uint8_t		pda;	/* 0's based dwords */
	uint32_t	max_data;	/* bytes of data in one PDU */
};

/*
 * Check a received common header (the first 8 bytes) before reading the
 * rest. Returns 0, or a negative TermReq FES (-NVME_TCP_FES_*) with *fei
 * the byte offset of the offending field in the header. On success
 * *hdr_len is how many bytes of header (+ header digest) to read in all.
 */
int nvme_tcp_check_ch(const struct nvme_tcp_hdr *ch, const struct nvme_tcp_rx_limits *lim,
		      uint32_t *hdr_len, uint32_t *fei);

/*
 * Check a whole received header (hlen bytes, then the header digest when
 * negotiated): the digest and the specific header's own fields.
 * Returns 0 or -FES with *fei as above.
 */
int nvme_tcp_check_header(const void *hdr, size_t len, const struct nvme_tcp_rx_limits *lim,
			  uint32_t *fei);

/* Bytes of data in a PDU whose header passed the checks (plen - pdo - ddgst) */
uint32_t nvme_tcp_data_len(const struct nvme_tcp_hdr *ch, bool ddgst);

/*
 * Build the common header of an outgoing PDU: type, hlen per type, flags
 * from the digests and extra flags, pdo (the data's offset, aligned to pda
 * when data_len > 0) and plen. Returns what precedes the data on the wire:
 * hlen + header digest, padded with zeros up to pdo when there is data
 * (the caller's buffer holds NVME_TCP_HDR_BUF bytes, zeroed beyond hlen).
 */
uint32_t nvme_tcp_build_ch(struct nvme_tcp_hdr *ch, uint8_t type, uint8_t flags, uint32_t data_len,
			   bool hdgst, bool ddgst, uint8_t pda);

/* Write the header digest after hlen bytes (when negotiated) */
void nvme_tcp_put_hdgst(void *hdr);

/* Fill a TermReq (H2C or C2H) with fes/fei and up to 128 bytes of the
 * offending header; returns its length on the wire (no digests). */
uint32_t nvme_tcp_build_term(struct nvme_tcp_term *t, size_t cap, uint8_t type, uint16_t fes,
			     uint32_t fei, const void *bad_hdr, size_t bad_len);

#endif
