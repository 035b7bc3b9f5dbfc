/* SPDX-License-Identifier: MIT */
/*
 * The in-process controllers bench_daemon and bench_tcp compare ucmdd with:
 * a controller directory on tmpfs, made exactly as the one ucmdd serves.
 */
#ifndef BENCH_DIRCTRL_H
#define BENCH_DIRCTRL_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "ucmd/ctrl.h"
#include "ucmd/nvme.h"

/* A controller (in process, or ucmd's host over NVMe/TCP: no ctrl) on an engine of its own. */
struct dirctrl {
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;		/* in process: the directory's controller */
	struct ucmd_nvme_host *host;
	struct bench_target t;		/* its namespace 1, ng0n1 */
};

/* Namespace 1 (ng0n1, 4 KiB LBAs) of size bytes of a controller on engine e. */
void dirctrl_target(struct bench_target *t, struct ucmd_engine *e, uint64_t size);

/*
 * In top: ctrl-daemon, a new controller directory with one file namespace of
 * size bytes (4 KiB LBAs), every block written (reads must copy data: the
 * unwritten blocks of a sparse file are holes), closed again for ucmdd to
 * serve, its path in ddir; and ctrl-inproc, its twin made the same way, left
 * open in twin. 0, or a negative errno with *what saying what failed.
 */
int dirctrl_twins(const char *top, uint64_t size, char *ddir, size_t len, struct dirctrl *twin,
		  const char **what);

/* Detach, destroy, free what c holds; c zeroed. */
void dirctrl_close(struct dirctrl *c);

#endif
