/* SPDX-License-Identifier: MIT */
#ifndef UCMD_CORE_NULL_H
#define UCMD_CORE_NULL_H

struct ucmd_engine;
/* Register the "null" device: Linux's /dev/null, uring_cmd included. */
int null_register(struct ucmd_engine *e);

#endif
