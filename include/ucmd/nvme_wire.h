/* SPDX-License-Identifier: MIT */
/*
 * NVMe wire format as the base specification defines it: the 64-byte
 * submission queue entry, the 16-byte completion queue entry, SGL
 * descriptors and the controller register map (BAR0). libnvme's
 * <nvme/types.h> has the data structures (Identify, logs, status codes) but
 * not these, because it talks to the kernel through ioctls.
 */
#ifndef UCMD_NVME_WIRE_H
#define UCMD_NVME_WIRE_H

#include <stdint.h>

#pragma GCC visibility push(default)

/* C11 and C++11 spell the layout checks differently; C++ includes this too. */
#ifdef __cplusplus
#define UCMD_WIRE_ASSERT static_assert
#else
#define UCMD_WIRE_ASSERT _Static_assert
#endif

struct ucmd_nvme_sqe {
	uint8_t  opcode;
	uint8_t  flags;		/* FUSE bits 1:0, PSDT bits 7:6 */
	uint16_t cid;
	uint32_t nsid;
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t mptr;
	union {
		struct {
			uint64_t prp1;
			uint64_t prp2;
		};
		uint8_t sgl1[16];
	} dptr;
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
};
UCMD_WIRE_ASSERT(sizeof(struct ucmd_nvme_sqe) == 64, "NVMe SQE is 64 bytes");

struct ucmd_nvme_cqe {
	uint32_t dw0;		/* command specific result */
	uint32_t dw1;
	uint16_t sq_head;
	uint16_t sq_id;
	uint16_t cid;
	uint16_t status;	/* bit 0: phase tag; bits 15:1: status field */
};
UCMD_WIRE_ASSERT(sizeof(struct ucmd_nvme_cqe) == 16, "NVMe CQE is 16 bytes");

/* SQE flags: PSDT selects PRPs or SGLs for the data pointer */
#define UCMD_NVME_PSDT_SHIFT	6
#define UCMD_NVME_PSDT_MASK	(3u << UCMD_NVME_PSDT_SHIFT)
#define UCMD_NVME_PSDT_PRP	(0u << UCMD_NVME_PSDT_SHIFT)
#define UCMD_NVME_PSDT_SGL_MPTR_CONTIG (1u << UCMD_NVME_PSDT_SHIFT)
#define UCMD_NVME_PSDT_SGL_MPTR_SGL (2u << UCMD_NVME_PSDT_SHIFT)

/* SGL descriptor (16 bytes), type in the high nibble of the last byte */
struct ucmd_nvme_sgl_desc {
	uint64_t addr;
	uint32_t length;
	uint8_t  rsvd[3];
	uint8_t  type;		/* (descriptor type << 4) | subtype */
};
UCMD_WIRE_ASSERT(sizeof(struct ucmd_nvme_sgl_desc) == 16, "SGL descriptor is 16 bytes");

#define UCMD_NVME_SGL_DATA_BLOCK	0x0
#define UCMD_NVME_SGL_BIT_BUCKET	0x1
#define UCMD_NVME_SGL_SEGMENT		0x2
#define UCMD_NVME_SGL_LAST_SEGMENT	0x3

/* Controller registers (offsets into BAR0) */
enum {
	UCMD_NVME_REG_CAP   = 0x00,	/* 64 bit */
	UCMD_NVME_REG_VS    = 0x08,
	UCMD_NVME_REG_INTMS = 0x0c,
	UCMD_NVME_REG_INTMC = 0x10,
	UCMD_NVME_REG_CC    = 0x14,
	UCMD_NVME_REG_CSTS  = 0x1c,
	UCMD_NVME_REG_NSSR  = 0x20,
	UCMD_NVME_REG_AQA   = 0x24,
	UCMD_NVME_REG_ASQ   = 0x28,	/* 64 bit */
	UCMD_NVME_REG_ACQ   = 0x30,	/* 64 bit */
	UCMD_NVME_REG_DBS   = 0x1000,	/* doorbells start here */
};

#define UCMD_NVME_CC_EN		(1u << 0)
#define UCMD_NVME_CC_SHN_SHIFT	14
#define UCMD_NVME_CSTS_RDY	(1u << 0)
#define UCMD_NVME_CSTS_CFS	(1u << 1)
#define UCMD_NVME_CSTS_SHST_SHIFT 2

/* Doorbell offset for queue qid: SQ tail (cq == 0) or CQ head (cq == 1) */
static inline uint32_t ucmd_nvme_db_offset(uint16_t qid, int cq, unsigned dstrd)
{
	return UCMD_NVME_REG_DBS + (2u * qid + (cq ? 1u : 0u)) * (4u << dstrd);
}

/* Status field helpers: NVMe status as Linux returns it in cqe.res */
static inline uint16_t ucmd_nvme_cqe_status(const struct ucmd_nvme_cqe *cqe)
{
	return (uint16_t)(cqe->status >> 1);
}

#undef UCMD_WIRE_ASSERT

#pragma GCC visibility pop

#endif /* UCMD_NVME_WIRE_H */
