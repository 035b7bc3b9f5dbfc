/* SPDX-License-Identifier: MIT */
/*
 * The io_uring user ABI that ucmd speaks: Linux's <linux/io_uring.h>.
 *
 * Where the system has that header (linux-libc-dev, 5.19 or newer: ucmd
 * needs SQE128/CQE32 and IORING_OP_URING_CMD), it is the one used, so that
 * <liburing.h> (whose own copy has the same include guard) can come before
 * or after <ucmd/ucmd.h>, and the types are the kernel's __u64 & co. Without
 * it, or with UCMD_UAPI_OWN defined, ucmd's own copy below is used: the same
 * bytes with <stdint.h> types, only what ucmd implements, under the
 * kernel's include guard. tests/unit/core/test_abi.c compiles that copy and
 * checks every offset and value against the system header.
 */
#ifndef UCMD_UAPI_IO_URING_H
#define UCMD_UAPI_IO_URING_H

#if !defined(UCMD_UAPI_OWN) && defined(__has_include)
#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#define UCMD_UAPI_SYSTEM 1
#ifndef IORING_SETUP_SQE128
#error "ucmd needs <linux/io_uring.h> from Linux 5.19 or newer (IORING_SETUP_SQE128)"
#endif
#endif
#endif

#if !defined(UCMD_UAPI_SYSTEM) && !defined(LINUX_IO_URING_H)
#define LINUX_IO_URING_H

#include <stdint.h>

/* <linux/time_types.h>, under its own guard */
#ifndef _LINUX_TIME_TYPES_H
#define _LINUX_TIME_TYPES_H
struct __kernel_timespec {
	int64_t   tv_sec;
	long long tv_nsec;
};
#endif

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct io_uring_sqe {
	uint8_t  opcode;
	uint8_t  flags;
	uint16_t ioprio;
	int32_t  fd;
	union {
		uint64_t off;
		uint64_t addr2;
		struct {
			uint32_t cmd_op;
			uint32_t __pad1;
		};
	};
	union {
		uint64_t addr;
		uint64_t splice_off_in;
	};
	uint32_t len;
	union {
		uint32_t rw_flags;
		uint32_t fsync_flags;
		uint32_t timeout_flags;
		uint32_t cancel_flags;
		uint32_t uring_cmd_flags;
	};
	uint64_t user_data;
	union {
		uint16_t buf_index;
		uint16_t buf_group;
	} __attribute__((packed));
	uint16_t personality;
	union {
		int32_t  splice_fd_in;
		uint32_t file_index;
		struct {
			uint16_t addr_len;
			uint16_t __pad3[1];
		};
	};
	union {
		struct {
			uint64_t addr3;
			uint64_t __pad2[1];
		};
		/* 16 bytes of command; 80 on an IORING_SETUP_SQE128 ring */
		uint8_t cmd[0];
	};
};

enum {
	IOSQE_FIXED_FILE_BIT,
	IOSQE_IO_DRAIN_BIT,
	IOSQE_IO_LINK_BIT,
	IOSQE_IO_HARDLINK_BIT,
	IOSQE_ASYNC_BIT,
	IOSQE_BUFFER_SELECT_BIT,
	IOSQE_CQE_SKIP_SUCCESS_BIT,
};

#define IOSQE_FIXED_FILE	(1U << IOSQE_FIXED_FILE_BIT)
#define IOSQE_IO_DRAIN		(1U << IOSQE_IO_DRAIN_BIT)
#define IOSQE_IO_LINK		(1U << IOSQE_IO_LINK_BIT)
#define IOSQE_IO_HARDLINK	(1U << IOSQE_IO_HARDLINK_BIT)
#define IOSQE_ASYNC		(1U << IOSQE_ASYNC_BIT)
#define IOSQE_BUFFER_SELECT	(1U << IOSQE_BUFFER_SELECT_BIT)
#define IOSQE_CQE_SKIP_SUCCESS	(1U << IOSQE_CQE_SKIP_SUCCESS_BIT)

#define IORING_SETUP_IOPOLL		(1U << 0)
#define IORING_SETUP_SQPOLL		(1U << 1)
#define IORING_SETUP_SQ_AFF		(1U << 2)
#define IORING_SETUP_CQSIZE		(1U << 3)
#define IORING_SETUP_CLAMP		(1U << 4)
#define IORING_SETUP_ATTACH_WQ		(1U << 5)
#define IORING_SETUP_R_DISABLED		(1U << 6)
#define IORING_SETUP_SUBMIT_ALL		(1U << 7)
#define IORING_SETUP_COOP_TASKRUN	(1U << 8)
#define IORING_SETUP_TASKRUN_FLAG	(1U << 9)
#define IORING_SETUP_SQE128		(1U << 10)
#define IORING_SETUP_CQE32		(1U << 11)
#define IORING_SETUP_SINGLE_ISSUER	(1U << 12)
#define IORING_SETUP_DEFER_TASKRUN	(1U << 13)

enum io_uring_op {
	IORING_OP_NOP,
	IORING_OP_READV,
	IORING_OP_WRITEV,
	IORING_OP_FSYNC,
	IORING_OP_READ_FIXED,
	IORING_OP_WRITE_FIXED,
	IORING_OP_POLL_ADD,
	IORING_OP_POLL_REMOVE,
	IORING_OP_SYNC_FILE_RANGE,
	IORING_OP_SENDMSG,
	IORING_OP_RECVMSG,
	IORING_OP_TIMEOUT,
	IORING_OP_TIMEOUT_REMOVE,
	IORING_OP_ACCEPT,
	IORING_OP_ASYNC_CANCEL,
	IORING_OP_LINK_TIMEOUT,
	IORING_OP_CONNECT,
	IORING_OP_FALLOCATE,
	IORING_OP_OPENAT,
	IORING_OP_CLOSE,
	IORING_OP_FILES_UPDATE,
	IORING_OP_STATX,
	IORING_OP_READ,
	IORING_OP_WRITE,
	IORING_OP_FADVISE,
	IORING_OP_MADVISE,
	IORING_OP_SEND,
	IORING_OP_RECV,
	IORING_OP_OPENAT2,
	IORING_OP_EPOLL_CTL,
	IORING_OP_SPLICE,
	IORING_OP_PROVIDE_BUFFERS,
	IORING_OP_REMOVE_BUFFERS,
	IORING_OP_TEE,
	IORING_OP_SHUTDOWN,
	IORING_OP_RENAMEAT,
	IORING_OP_UNLINKAT,
	IORING_OP_MKDIRAT,
	IORING_OP_SYMLINKAT,
	IORING_OP_LINKAT,
	IORING_OP_MSG_RING,
	IORING_OP_FSETXATTR,
	IORING_OP_SETXATTR,
	IORING_OP_FGETXATTR,
	IORING_OP_GETXATTR,
	IORING_OP_SOCKET,
	IORING_OP_URING_CMD,
	IORING_OP_SEND_ZC,
	IORING_OP_SENDMSG_ZC,
	IORING_OP_LAST,
};

#define IORING_URING_CMD_FIXED	(1U << 0)

#define IORING_FSYNC_DATASYNC	(1U << 0)

#define IORING_TIMEOUT_ABS		(1U << 0)
#define IORING_TIMEOUT_UPDATE		(1U << 1)
#define IORING_TIMEOUT_BOOTTIME		(1U << 2)
#define IORING_TIMEOUT_REALTIME		(1U << 3)
#define IORING_LINK_TIMEOUT_UPDATE	(1U << 4)
#define IORING_TIMEOUT_ETIME_SUCCESS	(1U << 5)
#define IORING_TIMEOUT_CLOCK_MASK	(IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME)
#define IORING_TIMEOUT_UPDATE_MASK	(IORING_TIMEOUT_UPDATE | IORING_LINK_TIMEOUT_UPDATE)

#define IORING_ASYNC_CANCEL_ALL		(1U << 0)
#define IORING_ASYNC_CANCEL_FD		(1U << 1)
#define IORING_ASYNC_CANCEL_ANY		(1U << 2)
#define IORING_ASYNC_CANCEL_FD_FIXED	(1U << 3)

struct io_uring_cqe {
	uint64_t user_data;
	int32_t  res;
	uint32_t flags;
	/* 16 more bytes on an IORING_SETUP_CQE32 ring */
	uint64_t big_cqe[];
};

#define IORING_CQE_F_BUFFER		(1U << 0)
#define IORING_CQE_F_MORE		(1U << 1)
#define IORING_CQE_F_SOCK_NONEMPTY	(1U << 2)
#define IORING_CQE_F_NOTIF		(1U << 3)

struct io_sqring_offsets {
	uint32_t head;
	uint32_t tail;
	uint32_t ring_mask;
	uint32_t ring_entries;
	uint32_t flags;
	uint32_t dropped;
	uint32_t array;
	uint32_t resv1;
	uint64_t resv2;
};

#define IORING_SQ_NEED_WAKEUP	(1U << 0)
#define IORING_SQ_CQ_OVERFLOW	(1U << 1)
#define IORING_SQ_TASKRUN	(1U << 2)

struct io_cqring_offsets {
	uint32_t head;
	uint32_t tail;
	uint32_t ring_mask;
	uint32_t ring_entries;
	uint32_t overflow;
	uint32_t cqes;
	uint32_t flags;
	uint32_t resv1;
	uint64_t resv2;
};

#define IORING_ENTER_GETEVENTS		(1U << 0)
#define IORING_ENTER_SQ_WAKEUP		(1U << 1)
#define IORING_ENTER_SQ_WAIT		(1U << 2)
#define IORING_ENTER_EXT_ARG		(1U << 3)
#define IORING_ENTER_REGISTERED_RING	(1U << 4)

struct io_uring_params {
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t flags;
	uint32_t sq_thread_cpu;
	uint32_t sq_thread_idle;
	uint32_t features;
	uint32_t wq_fd;
	uint32_t resv[3];
	struct io_sqring_offsets sq_off;
	struct io_cqring_offsets cq_off;
};

#define IORING_FEAT_SINGLE_MMAP		(1U << 0)
#define IORING_FEAT_NODROP		(1U << 1)
#define IORING_FEAT_SUBMIT_STABLE	(1U << 2)
#define IORING_FEAT_RW_CUR_POS		(1U << 3)
#define IORING_FEAT_CUR_PERSONALITY	(1U << 4)
#define IORING_FEAT_EXT_ARG		(1U << 8)
#define IORING_FEAT_CQE_SKIP		(1U << 11)

#define IORING_CQ_EVENTFD_DISABLED	(1U << 0)

struct io_uring_rsrc_update {
	uint32_t offset;
	uint32_t resv;
	uint64_t data;
};

/* Skip updating fd indexes set to this value in the fd table */
#define IORING_REGISTER_FILES_SKIP	(-2)

#define IO_URING_OP_SUPPORTED	(1U << 0)

struct io_uring_probe_op {
	uint8_t  op;
	uint8_t  resv;
	uint16_t flags;
	uint32_t resv2;
};

struct io_uring_probe {
	uint8_t  last_op;
	uint8_t  ops_len;
	uint16_t resv;
	uint32_t resv2[3];
	struct io_uring_probe_op ops[];
};

struct io_uring_getevents_arg {
	uint64_t sigmask;
	uint32_t sigmask_sz;
	uint32_t pad;
	uint64_t ts;
};

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* LINUX_IO_URING_H (ucmd's own copy) */

/*
 * Setup flags newer than the 5.19 header ucmd needs (Linux 6.6 and 6.13),
 * with the kernel's values: defined here when the header in use lacks them.
 */
#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY		(1U << 16)
#endif
#ifndef IORING_SETUP_HYBRID_IOPOLL
#define IORING_SETUP_HYBRID_IOPOLL	(1U << 17)
#endif

#endif /* UCMD_UAPI_IO_URING_H */
