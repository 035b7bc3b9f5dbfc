/* SPDX-License-Identifier: MIT */
/*
 * A daemon and one client in the test's own process: the host fixture's
 * engine (an emulated controller with a RAM namespace, ng0n1/nvme0/nvme0n1
 * open) as the daemon's engine, and a client whose memory is this process
 * reached as another process's is (process_vm_readv/writev by pid).
 */
#ifndef UCMD_TEST_SRV_FIXTURE_H
#define UCMD_TEST_SRV_FIXTURE_H

#include "../host/host_fixture.h"
#include "server/ring.h"

struct sfx {
	struct fx fx;
	struct srv_daemon d;
	struct srv_client c;
	/* the client's fd numbers for the devices */
	int ng, dev, bdev, null;
	int null_efd;		/* the engine table's null, behind s->null */
};

/* Give the client's number cfd the file at the engine's own fd efd. */
void sfx_install(struct sfx *s, int efd, int cfd);

/* o: the host fixture's options (NULL: an inline controller) */
void sfx_setup(struct sfx *s, const struct fx_opts *o);
void sfx_teardown(struct sfx *s);
/*
 * Another client of the same daemon (same process, same memory), with an
 * empty file table; and its end (its rings destroyed first).
 */
void sfx_client_init(struct sfx *s, struct srv_client *c);
void sfx_client_free(struct srv_client *c);
/* Open fds of this process: the daemon's leak check. */
int sfx_nr_fds(void);

#endif
