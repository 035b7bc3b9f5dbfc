/* SPDX-License-Identifier: MIT */
/*
 * The table ucmd-supervise --dirs keeps of the device descriptors it gave
 * the program (an open made with the program's own instruction: numbers
 * SV_FD_BASE..), shared read-only with the preload, so that the preload's
 * io_uring rings serve them too: the preload mirrors each one on its own
 * daemon connection under the same number (svtab.c), as it mirrors the
 * devices it opened itself. The supervisor writes (sv_svtab.c), the preload
 * reads; it asks for the table with an ioctl of PL_SV_IOC_TABLE on
 * PL_SV_TABLE_FD, a number the supervisor's filter sends it, which answers
 * with a read-only descriptor of the table's memfd.
 */
#ifndef UCMD_PRELOAD_SVTAB_H
#define UCMD_PRELOAD_SVTAB_H

#include <stdint.h>

#define PL_SV_FD_BASE 960u
#define PL_SV_FD_NR 64u
#define PL_SV_TABLE_FD (PL_SV_FD_BASE + PL_SV_FD_NR - 1)
/* _IOR('u', 0x8d, int): a number no driver of a file the program may hold there answers */
#define PL_SV_IOC_TABLE 0x8004758du
/* _IOR('u', 0x8e, int): the preload's page (struct pl_svack), answered read-write */
#define PL_SV_IOC_ACK 0x8004758eu
/*
 * _IOWR('u', 0x8f, struct pl_svfd): which device of the supervisor's the
 * asking process's descriptor fd is (the same open file description,
 * kcmp(KCMP_FILE)): name and flags filled, 0; -ENOENT when none. A copy
 * below 960 that the preload did not make (the program's own dup, kept
 * across an exec) is so found again at the image's start (fdmap.c).
 */
#define PL_SV_IOC_FDINFO 0xc028758fu

struct pl_svfd {
	int32_t fd;
	int32_t flags;		/* the open's flags */
	char name[32];
};

/*
 * One descriptor's entry; seq odd while the supervisor writes it (a
 * reader takes a copy whose seq was even and unchanged around it), and
 * moved by 2 at every change (so a number closed and given again shows).
 */
struct pl_svtab_slot {
	uint32_t seq;
	int32_t flags;		/* the open's flags; name[0] 0: no device at that number */
	char name[32];
};

struct pl_svtab {
	uint32_t gen;		/* moved after every slot change: a reader's cheap look */
	int32_t pid;		/* the process the supervisor serves (a forked child is not) */
	struct pl_svtab_slot slot[PL_SV_FD_NR];
};

/*
 * The preload's answer, a page of its own that both sides map read-write:
 * an SQPOLL ring's poller takes SQEs without an io_uring_enter, so a
 * descriptor the supervisor gives must be mirrored before the program has
 * its number. While a thread of the preload watches the table (tid, made
 * with the first SQPOLL ring), the supervisor wakes it after each change
 * (FUTEX_WAKE on the table's gen) and answers the open or close only once
 * gen here has caught up with the table's, or after a second. The program
 * can write this page: a lie only delays or hurries its own opens.
 */
struct pl_svack {
	int32_t tid;		/* the preload's watching thread, or 0 */
	uint32_t gen;		/* the table's gen the preload's mirrors are at (a futex) */
};

#endif /* UCMD_PRELOAD_SVTAB_H */
