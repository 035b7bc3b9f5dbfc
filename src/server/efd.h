/* SPDX-License-Identifier: MIT */
/*
 * Eventfds whose open file description a client shares (efd.c): written and
 * read without ever waiting on the client for more than SRV_EFD_WAIT_MS.
 */
#ifndef UCMD_SERVER_EFD_H
#define UCMD_SERVER_EFD_H

#include <stdbool.h>
#include <stdint.h>

/* How long a write or read of a client's eventfd may wait before it is cut short. */
#define SRV_EFD_WAIT_MS 10

/*
 * Add 1 to the counter, as Linux's eventfd_signal(): 0 also when the
 * counter is full (it says "wake up" already, as a saturated one does);
 * -ETIMEDOUT when the client kept making room and taking it back; -errno.
 */
int srv_efd_signal(int fd);
/* Reset the counter if it is not 0; never waits for the client. */
void srv_efd_drain(int fd);
/*
 * Wake every thread in FUTEX_WAIT on the shared futex word w (a client's,
 * in memory both map): never waits for anyone. 0 or -errno.
 */
int srv_futex_wake(uint32_t *w);

#endif /* UCMD_SERVER_EFD_H */
