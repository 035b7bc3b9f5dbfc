/* SPDX-License-Identifier: MIT */
/*
 * The client's descriptors: its fd numbers are indexes into its own table,
 * as a process's are into its files_struct, so a client can only name what
 * it opened itself; the engine's fd numbers (one table for every client)
 * never reach it.
 *
 * An engine fd stays the client's while c->lock is held: UCMDD_CLOSE
 * removes it from the table and closes it in the engine under the lock, so
 * a ring that translates a client fd and hands the engine fd to the engine
 * under c->lock cannot meet a number that was meanwhile closed and handed
 * to another client.
 *
 * Each number held counts against the client's uid (SRV_RES_FD, quota.c):
 * charged before the number is given, given back when it is forgotten.
 */
#include <errno.h>
#include <stdbool.h>

#include "server/ctl.h"

/* Under c->lock: number cfd now names engine fd efd, a file of that kind. */
static void fd_set_locked(struct srv_client *c, int cfd, int efd, uint8_t kind)
{
	c->fds[cfd] = efd;
	c->fd_kind[cfd] = kind;
	c->fd_gen[cfd]++;
}

static int fd_get_locked(struct srv_client *c, int cfd)
{
	if (cfd < 0 || (unsigned)cfd >= SRV_FD_SPACE || c->fds[cfd] < 0)
		return -EBADF;
	return c->fds[cfd];
}

int srv_fd_get(struct srv_client *c, int cfd)
{
	int efd;

	pthread_mutex_lock(&c->lock);
	efd = fd_get_locked(c, cfd);
	pthread_mutex_unlock(&c->lock);
	return efd;
}

int srv_fd_get_kind(struct srv_client *c, int cfd, uint8_t *kind, uint32_t *gen)
{
	int efd;

	pthread_mutex_lock(&c->lock);
	efd = fd_get_locked(c, cfd);
	if (efd >= 0) {
		*kind = c->fd_kind[cfd];
		*gen = c->fd_gen[cfd];
	}
	pthread_mutex_unlock(&c->lock);
	return efd;
}

static void fd_uncharge(struct srv_client *c, unsigned n)
{
	srv_quota_uncharge(c->d, c->cred.uid, SRV_RES_FD, n);
}

int srv_fd_install(struct srv_client *c, int efd)
{
	int ret = -EMFILE;
	uint8_t kind;

	if (efd < 0)
		return -EBADF;
	/* the new file is the caller's alone until installed: nobody can close it meanwhile */
	kind = srv_dev_kind(c->d->e, efd);
	ret = srv_quota_charge(c->d, c->cred.uid, SRV_RES_FD, 1);
	if (ret)
		return ret;
	ret = -EMFILE;
	pthread_mutex_lock(&c->lock);
	/* the lowest free number, as open(2) gives */
	for (unsigned i = 0; i < SRV_FD_SPACE && c->nr_fds < SRV_MAX_FDS; i++) {
		if (c->fds[i] < 0) {
			fd_set_locked(c, (int)i, efd, kind);
			c->nr_fds++;
			ret = (int)i;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (ret < 0)
		fd_uncharge(c, 1);
	return ret;
}

int srv_fd_install_at(struct srv_client *c, int efd, int cfd)
{
	int old = -1, ret = cfd, charge;
	bool give_back = false;
	uint8_t kind;

	if (efd < 0)
		return -EBADF;
	if (cfd < 0 || (unsigned)cfd >= SRV_FD_SPACE)
		return -EBADF;
	kind = srv_dev_kind(c->d->e, efd);
	/* a number taken anew counts; charged before the lock, given back if it was not new */
	charge = srv_quota_charge(c->d, c->cred.uid, SRV_RES_FD, 1);
	pthread_mutex_lock(&c->lock);
	if (c->fds[cfd] >= 0) {
		/* dup2(2): the number's old file goes, under the lock (top of the file) */
		old = c->fds[cfd];
		fd_set_locked(c, cfd, efd, kind);
		ucmd_close(c->d->e, old);
		give_back = !charge;
	} else if (charge) {
		ret = charge;
	} else if (c->nr_fds < SRV_MAX_FDS) {
		fd_set_locked(c, cfd, efd, kind);
		c->nr_fds++;
	} else {
		ret = -EMFILE;
		give_back = true;
	}
	pthread_mutex_unlock(&c->lock);
	if (give_back)
		fd_uncharge(c, 1);
	return ret;
}

int srv_fd_remove(struct srv_client *c, int cfd)
{
	int efd;

	pthread_mutex_lock(&c->lock);
	efd = fd_get_locked(c, cfd);
	if (efd >= 0) {
		c->fds[cfd] = -1;
		c->nr_fds--;
	}
	pthread_mutex_unlock(&c->lock);
	if (efd >= 0)
		fd_uncharge(c, 1);
	return efd;
}

int srv_fd_close(struct srv_client *c, int cfd)
{
	int efd;

	pthread_mutex_lock(&c->lock);
	efd = fd_get_locked(c, cfd);
	if (efd >= 0) {
		c->fds[cfd] = -1;
		c->nr_fds--;
		/* under the lock: see the top of the file */
		ucmd_close(c->d->e, efd);
	}
	pthread_mutex_unlock(&c->lock);
	if (efd >= 0)
		fd_uncharge(c, 1);
	return efd < 0 ? efd : 0;
}

void srv_fds_close_all(struct srv_client *c)
{
	unsigned n;

	pthread_mutex_lock(&c->lock);
	n = c->nr_fds;
	for (unsigned i = 0; i < SRV_FD_SPACE; i++) {
		if (c->fds[i] >= 0)
			ucmd_close(c->d->e, c->fds[i]);
		c->fds[i] = -1;
	}
	c->nr_fds = 0;
	pthread_mutex_unlock(&c->lock);
	fd_uncharge(c, n);
}
