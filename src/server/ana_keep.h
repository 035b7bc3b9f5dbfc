/* SPDX-License-Identifier: MIT */
/*
 * ucmdd's NVMe/TCP ports' ANA states kept across a restart (docs/daemon.md):
 * a file, ucmdd-ports.json, in the first --ctrl directory (the daemon's,
 * mode 0700), written whole (a temporary file renamed over it) at each
 * change, read at the start. Ports are known by their number (the
 * --nvme-tcp order, nvmet's ports/N), not their address: a port given
 * :0 listens elsewhere after a restart and is still port N.
 */
#ifndef UCMD_SERVER_ANA_KEEP_H
#define UCMD_SERVER_ANA_KEEP_H

#include <stddef.h>
#include <stdint.h>

#define ANA_KEEP_FILE		"ucmdd-ports.json"
#define ANA_KEEP_MAX_PORTS	16	/* NVMET_TCP_MAX_PORTS */
#define ANA_KEEP_GRPS		1	/* NVMET_TCP_ANA_GRPS */
#define ANA_KEEP_MAX_BYTES	65536

/*
 * The file in dirfd into states (port p + 1, group g + 1 at [p][g]; 0
 * where the file names no state). 0 with every state 0 when there is no
 * file; -EINVAL (err says which member and why) for one that is not what
 * ana_keep_save() writes, -EPERM for one another user owns or may write,
 * or another -errno from reading it.
 */
int ana_keep_load(int dirfd, uint8_t states[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS], char *err,
		  size_t errlen);
/* nr ports' states into the file in dirfd, durably: 0 or -errno (nothing changed then) */
int ana_keep_save(int dirfd, const uint8_t states[][ANA_KEEP_GRPS], unsigned nr);

#endif
