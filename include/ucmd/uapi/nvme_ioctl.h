/* SPDX-License-Identifier: MIT */
/*
 * NVMe passthrough structures and command numbers: Linux's
 * <linux/nvme_ioctl.h>. As with uapi/io_uring.h, the system header is used
 * where there is one (5.19 or newer, for NVME_URING_CMD_*), so that a
 * program including both, in either order, gets one definition with the
 * kernel's types. Without it, or with UCMD_UAPI_OWN, ucmd's own copy below
 * (same layout, <stdint.h> types, the kernel's include guard) is used;
 * tests/unit/core/test_abi.c checks it against the system header.
 */
#ifndef UCMD_UAPI_NVME_IOCTL_H
#define UCMD_UAPI_NVME_IOCTL_H

#if !defined(UCMD_UAPI_OWN) && defined(__has_include)
#if __has_include(<linux/nvme_ioctl.h>)
#include <sys/ioctl.h>	/* the kernel's header uses _IOWR() without including it */
#include <linux/nvme_ioctl.h>
#define UCMD_UAPI_NVME_SYSTEM 1
#ifndef NVME_URING_CMD_IO
#error "ucmd needs <linux/nvme_ioctl.h> from Linux 5.19 or newer (NVME_URING_CMD_IO)"
#endif
#endif
#endif

#if !defined(UCMD_UAPI_NVME_SYSTEM) && !defined(_LINUX_NVME_IOCTL_H)
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
#define NVME_IOCTL_RESET	_IO('N', 0x44)
#define NVME_IOCTL_ADMIN64_CMD	_IOWR('N', 0x47, struct nvme_passthru_cmd64)
#define NVME_IOCTL_IO64_CMD	_IOWR('N', 0x48, struct nvme_passthru_cmd64)
#define NVME_IOCTL_IO64_CMD_VEC	_IOWR('N', 0x49, struct nvme_passthru_cmd64)

#define NVME_URING_CMD_IO	_IOWR('N', 0x80, struct nvme_uring_cmd)
#define NVME_URING_CMD_IO_VEC	_IOWR('N', 0x81, struct nvme_uring_cmd)
#define NVME_URING_CMD_ADMIN	_IOWR('N', 0x82, struct nvme_uring_cmd)
#define NVME_URING_CMD_ADMIN_VEC _IOWR('N', 0x83, struct nvme_uring_cmd)

#pragma GCC visibility pop

#endif /* _LINUX_NVME_IOCTL_H */

#endif /* UCMD_UAPI_NVME_IOCTL_H */
