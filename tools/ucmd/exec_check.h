/* SPDX-License-Identifier: MIT */
/* ucmd exec's checks before the program runs (exec_check.c). */
#ifndef UCMD_EXEC_CHECK_H
#define UCMD_EXEC_CHECK_H

/* 0 if the preload reaches PROGRAM (as execvp finds it), else -1 with the reason printed. */
int exec_check_program(const char *prog);
/* 0 if ucmdd answers at sock and serves a controller, else -1 with the reason printed. */
int exec_check_daemon(const char *sock);

#endif
