/* SPDX-License-Identifier: MIT */
#include "srv_fixture.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/*
 * The client fd table as server.h defines it (c->fds[] under c->lock):
 * fdtab.c is the control side's, and these tests need only the lookup.
 */
int srv_fd_get(struct srv_client *c, int cfd)
{
	int efd;

	if (cfd < 0 || (unsigned)cfd >= SRV_FD_SPACE)
		return -EBADF;
	pthread_mutex_lock(&c->lock);
	efd = c->fds[cfd];
	pthread_mutex_unlock(&c->lock);
	return efd < 0 ? -EBADF : efd;
}

void sfx_setup(struct sfx *s, const struct fx_opts *o)
{
	struct srv_client *c = &s->c;

	memset(s, 0, sizeof(*s));
	assert_int_equal(fx_setup(&s->fx, o), 0);
	s->d.e = s->fx.e;
	pthread_mutex_init(&s->d.lock, NULL);
	c->d = &s->d;
	c->sock = -1;
	c->pidfd = -1;
	c->pid = getpid();
	ucmd_cred_current(&c->cred);
	user_mm_init_remote(&c->mm, getpid());
	pthread_mutex_init(&c->lock, NULL);
	srv_mem_init(c);
	for (unsigned i = 0; i < SRV_FD_SPACE; i++)
		c->fds[i] = -1;
	/* client fd numbers other than the engine's, as a real table gives */
	s->ng = 3, s->dev = 4, s->bdev = 5, s->null = 6;
	c->fds[s->ng] = s->fx.ng;
	c->fds[s->dev] = s->fx.dev;
	c->fds[s->bdev] = s->fx.bdev;
	c->fds[s->null] = ucmd_open(s->fx.e, "null", O_RDWR);
	assert_true(c->fds[s->null] >= 0);
}

void sfx_teardown(struct sfx *s)
{
	srv_rings_destroy_all(&s->c);
	ucmd_close(s->fx.e, s->c.fds[s->null]);
	srv_mem_free(&s->c);
	assert_int_equal(atomic_load(&s->c.bounce_bytes), 0);
	assert_int_equal(atomic_load(&s->c.shadow_bytes), 0);
	pthread_mutex_destroy(&s->c.lock);
	pthread_mutex_destroy(&s->d.lock);
	fx_teardown(&s->fx);
}

int sfx_nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}
