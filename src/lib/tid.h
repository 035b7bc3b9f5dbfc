/* SPDX-License-Identifier: MIT */
#ifndef UCMD_LIB_TID_H
#define UCMD_LIB_TID_H

#include <sys/types.h>

/* The calling thread's id (gettid(2)), asked once per thread. See tid.c. */
pid_t current_tid(void);

#endif /* UCMD_LIB_TID_H */
