/* SPDX-License-Identifier: MIT */
/*
 * NVMe passthrough structures and command numbers with Linux's exact layout
 * and values (<linux/nvme_ioctl.h>). The guard is the kernel's own so that a
 * program including both gets one definition; tests/unit/test_abi.c checks
 * them against the system header.
 */
#ifndef _LINUX_NVME_IOCTL_H
#define _LINUX_NVME_IOCTL_H

#include <stdint.h>
#include <sys/ioctl.h>

#pragma GCC visibility push(default)

struct nvme_passthru_cmd64 {
	uint8_t  opcode;
	uint8_t  flags;
	uint16_t rsvd1;
	uint32_t nsid;
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t metadata;
	uint64_t addr;
	uint32_t metadata_len;
	union {
		uint32_t data_len;
		uint32_t vec_cnt;
	};
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
	uint32_t timeout_ms;
	uint32_t rsvd2;
	uint64_t result;
};

/* 72 bytes: struct nvme_passthru_cmd64 without the result */
struct nvme_uring_cmd {
	uint8_t  opcode;
	uint8_t  flags;
	uint16_t rsvd1;
	uint32_t nsid;
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t metadata;
	uint64_t addr;
	uint32_t metadata_len;
	uint32_t data_len;
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
	uint32_t timeout_ms;
	uint32_t rsvd2;
};

#define NVME_IOCTL_ID		_IO('N', 0x40)
#define NVME_IOCTL_ADMIN64_CMD	_IOWR('N', 0x47, struct nvme_passthru_cmd64)
#define NVME_IOCTL_IO64_CMD	_IOWR('N', 0x48, struct nvme_passthru_cmd64)
#define NVME_IOCTL_IO64_CMD_VEC	_IOWR('N', 0x49, struct nvme_passthru_cmd64)

#define NVME_URING_CMD_IO	_IOWR('N', 0x80, struct nvme_uring_cmd)
#define NVME_URING_CMD_IO_VEC	_IOWR('N', 0x81, struct nvme_uring_cmd)
#define NVME_URING_CMD_ADMIN	_IOWR('N', 0x82, struct nvme_uring_cmd)
#define NVME_URING_CMD_ADMIN_VEC _IOWR('N', 0x83, struct nvme_uring_cmd)

#pragma GCC visibility pop

#endif /* _LINUX_NVME_IOCTL_H */
