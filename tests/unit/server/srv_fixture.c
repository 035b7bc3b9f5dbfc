/* SPDX-License-Identifier: MIT */
#include "srv_fixture.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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
	current_cred(&c->cred);
	assert_int_equal(user_mm_init_remote(&c->mm, getpid()), 0);
	pthread_mutex_init(&c->lock, NULL);
	srv_mem_init(c);
	for (unsigned i = 0; i < SRV_FD_SPACE; i++)
		c->fds[i] = -1;
	/* client fd numbers other than the engine's, as a real table gives (fdtab.c's) */
	s->ng = 3, s->dev = 4, s->bdev = 5, s->null = 6;
	assert_int_equal(srv_fd_install_at(c, s->fx.ng, s->ng), s->ng);
	assert_int_equal(srv_fd_install_at(c, s->fx.dev, s->dev), s->dev);
	assert_int_equal(srv_fd_install_at(c, s->fx.bdev, s->bdev), s->bdev);
	assert_int_equal(srv_fd_install_at(c, ucmd_open(s->fx.e, "null", O_RDWR), s->null), s->null);
}

void sfx_teardown(struct sfx *s)
{
	srv_rings_destroy_all(&s->c);
	ucmd_close(s->fx.e, s->c.fds[s->null]);
	srv_mem_free(&s->c);
	user_mm_release(&s->c.mm);
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
