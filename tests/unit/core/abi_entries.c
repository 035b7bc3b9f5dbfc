/* SPDX-License-Identifier: MIT */
/*
 * One table of ABI facts (offsets, sizes, constants), compiled twice: with
 * ABI_SYSTEM against <linux/io_uring.h> and <linux/nvme_ioctl.h>, without it
 * against ucmd's vendored headers. The two builds never mix headers;
 * test_abi.c compares the tables.
 */
#include <stddef.h>
#ifdef ABI_SYSTEM
#include <linux/io_uring.h>
#include <linux/nvme_ioctl.h>
#define ABI_TABLE abi_sys
#define ABI_TABLE_N abi_sys_n
#else
/* ucmd's own copy, not the system header it would otherwise use */
#define UCMD_UAPI_OWN 1
#include "ucmd/uapi/io_uring.h"
#include "ucmd/uapi/nvme_ioctl.h"
#define ABI_TABLE abi_ucmd
#define ABI_TABLE_N abi_ucmd_n
#endif

#include "abi_table.h"

#define F(s, m) { #s "." #m, offsetof(struct s, m), sizeof(((struct s *)0)->m) }
#define O(s, m) { #s "." #m, offsetof(struct s, m), 0 }	/* flexible arrays */
#define S(s)    { "sizeof " #s, sizeof(struct s), 0 }
#define V(x)    { #x, (unsigned long)(x), 0 }

#define ABI_ENTRIES                                                                           \
	S(io_uring_sqe), F(io_uring_sqe, opcode), F(io_uring_sqe, flags),                      \
	F(io_uring_sqe, ioprio), F(io_uring_sqe, fd), F(io_uring_sqe, off),                    \
	F(io_uring_sqe, addr2), F(io_uring_sqe, cmd_op), F(io_uring_sqe, __pad1),              \
	F(io_uring_sqe, addr), F(io_uring_sqe, len), F(io_uring_sqe, rw_flags),                \
	F(io_uring_sqe, uring_cmd_flags), F(io_uring_sqe, user_data),                          \
	F(io_uring_sqe, buf_index), F(io_uring_sqe, personality),                              \
	F(io_uring_sqe, file_index), F(io_uring_sqe, addr3), F(io_uring_sqe, cmd),             \
	S(io_uring_cqe), F(io_uring_cqe, user_data), F(io_uring_cqe, res),                     \
	F(io_uring_cqe, flags), O(io_uring_cqe, big_cqe),                                      \
	S(io_uring_params), F(io_uring_params, sq_entries), F(io_uring_params, cq_entries),     \
	F(io_uring_params, flags), F(io_uring_params, sq_thread_idle),                         \
	F(io_uring_params, features), F(io_uring_params, sq_off), F(io_uring_params, cq_off),  \
	S(io_sqring_offsets), F(io_sqring_offsets, array), S(io_cqring_offsets),               \
	F(io_cqring_offsets, cqes), F(io_cqring_offsets, flags),                               \
	S(nvme_uring_cmd), F(nvme_uring_cmd, opcode), F(nvme_uring_cmd, flags),                \
	F(nvme_uring_cmd, nsid), F(nvme_uring_cmd, cdw2), F(nvme_uring_cmd, metadata),         \
	F(nvme_uring_cmd, addr), F(nvme_uring_cmd, metadata_len),                              \
	F(nvme_uring_cmd, data_len), F(nvme_uring_cmd, cdw10), F(nvme_uring_cmd, cdw15),       \
	F(nvme_uring_cmd, timeout_ms), F(nvme_uring_cmd, rsvd2),                               \
	S(nvme_passthru_cmd64), F(nvme_passthru_cmd64, result),                                \
	V(IORING_OP_NOP), V(IORING_OP_READV), V(IORING_OP_WRITEV), V(IORING_OP_READ_FIXED),    \
	V(IORING_OP_WRITE_FIXED), V(IORING_OP_READ), V(IORING_OP_WRITE),                       \
	V(IORING_OP_URING_CMD), V(IORING_OP_LAST), V(IORING_SETUP_IOPOLL),                     \
	V(IORING_SETUP_SQPOLL), V(IORING_SETUP_CQSIZE), V(IORING_SETUP_SQE128),                \
	V(IORING_SETUP_CQE32), V(IORING_SETUP_SINGLE_ISSUER), V(IORING_SETUP_SUBMIT_ALL),      \
	V(IOSQE_FIXED_FILE), V(IOSQE_IO_DRAIN), V(IOSQE_IO_LINK), V(IOSQE_IO_HARDLINK),        \
	V(IOSQE_ASYNC), V(IOSQE_CQE_SKIP_SUCCESS), V(IORING_URING_CMD_FIXED),                  \
	V(IORING_SQ_NEED_WAKEUP), V(IORING_SQ_CQ_OVERFLOW), V(IORING_ENTER_GETEVENTS),         \
	V(IORING_ENTER_SQ_WAKEUP), V(IORING_FEAT_NODROP), V(IORING_FEAT_CQE_SKIP),             \
	V(NVME_URING_CMD_IO), V(NVME_URING_CMD_IO_VEC), V(NVME_URING_CMD_ADMIN),               \
	V(NVME_URING_CMD_ADMIN_VEC), V(NVME_IOCTL_IO64_CMD), V(NVME_IOCTL_ADMIN64_CMD),        \
	V(NVME_IOCTL_IO64_CMD_VEC), V(NVME_IOCTL_ID),                                          \
	F(io_uring_sqe, fsync_flags), F(io_uring_sqe, timeout_flags),                          \
	F(io_uring_sqe, cancel_flags), V(IORING_OP_FSYNC), V(IORING_OP_TIMEOUT),               \
	V(IORING_OP_LINK_TIMEOUT), V(IORING_OP_ASYNC_CANCEL), V(IORING_FSYNC_DATASYNC),        \
	V(IORING_TIMEOUT_ABS), V(IORING_TIMEOUT_UPDATE), V(IORING_TIMEOUT_BOOTTIME),           \
	V(IORING_TIMEOUT_REALTIME), V(IORING_LINK_TIMEOUT_UPDATE),                             \
	V(IORING_TIMEOUT_ETIME_SUCCESS), V(IORING_TIMEOUT_CLOCK_MASK),                         \
	V(IORING_ASYNC_CANCEL_ALL), V(IORING_ASYNC_CANCEL_FD), V(IORING_ASYNC_CANCEL_ANY),     \
	V(IORING_ASYNC_CANCEL_FD_FIXED), V(IORING_ENTER_EXT_ARG),                              \
	V(IORING_ENTER_REGISTERED_RING), V(IORING_FEAT_EXT_ARG), V(IORING_CQ_EVENTFD_DISABLED),\
	V(IORING_REGISTER_FILES_SKIP), V(IO_URING_OP_SUPPORTED),                               \
	S(io_uring_rsrc_update), F(io_uring_rsrc_update, offset), F(io_uring_rsrc_update, data),\
	S(io_uring_probe_op), F(io_uring_probe_op, op), F(io_uring_probe_op, flags),           \
	S(io_uring_probe), F(io_uring_probe, last_op), F(io_uring_probe, ops_len),             \
	O(io_uring_probe, ops), S(io_uring_getevents_arg), F(io_uring_getevents_arg, sigmask), \
	F(io_uring_getevents_arg, sigmask_sz), F(io_uring_getevents_arg, ts),                  \
	S(__kernel_timespec), F(__kernel_timespec, tv_sec), F(__kernel_timespec, tv_nsec)

const struct abi_entry ABI_TABLE[] = { ABI_ENTRIES };
const unsigned ABI_TABLE_N = sizeof(ABI_TABLE) / sizeof(ABI_TABLE[0]);
