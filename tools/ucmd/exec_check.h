/* SPDX-License-Identifier: MIT */
/* ucmd exec's checks before the program runs (exec_check.c). */
#ifndef UCMD_EXEC_CHECK_H
#define UCMD_EXEC_CHECK_H

#include <stdbool.h>

/*
 * 0 if ucmd's devices reach PROGRAM (as execvp finds it): through the
 * preload, or with *is_static set through ucmd-supervise (statically
 * linked, or its #! interpreter is); else -1 with the reason printed.
 */
int exec_check_program(const char *prog, bool *is_static);
/* 0 if ucmdd answers at sock and serves a controller, else -1 with the reason printed. */
int exec_check_daemon(const char *sock);

#endif
