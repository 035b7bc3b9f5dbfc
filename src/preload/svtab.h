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

#endif /* UCMD_PRELOAD_SVTAB_H */
