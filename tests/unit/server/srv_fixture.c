/* SPDX-License-Identifier: MIT */
#include "srv_fixture.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

void sfx_client_init(struct sfx *s, struct srv_client *c)
{
	memset(c, 0, sizeof(*c));
	c->d = &s->d;
	c->sock = -1;
	c->pidfd = -1;
	c->pid = getpid();
	current_cred(&c->cred);
	assert_int_equal(user_mm_init_remote(&c->mm, getpid()), 0);
	pthread_mutex_init(&c->lock, NULL);
	assert_int_equal(srv_task_init(c), 0);
}

void sfx_client_free(struct srv_client *c)
{
	srv_rings_destroy_all(c);
	srv_task_free(c);
	user_mm_release(&c->mm);
	assert_int_equal(atomic_load(&c->bounce_bytes), 0);
	pthread_mutex_destroy(&c->lock);
}

void sfx_setup(struct sfx *s, const struct fx_opts *o)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(fx_setup(&s->fx, o), 0);
	s->d.e = s->fx.e;
	pthread_mutex_init(&s->d.lock, NULL);
	sfx_client_init(s, &s->c);
	/* the client's own table, numbered unlike the engine's, as a real client's is */
	s->ng = 3, s->dev = 4, s->bdev = 5, s->null = 6;
	sfx_install(s, s->fx.ng, s->ng);
	sfx_install(s, s->fx.dev, s->dev);
	sfx_install(s, s->fx.bdev, s->bdev);
	s->null_efd = ucmd_open(s->fx.e, "null", O_RDWR);
	sfx_install(s, s->null_efd, s->null);
}

void sfx_install(struct sfx *s, int efd, int cfd)
{
	/* the test's thread acts for no task: efd is the engine's own table's */
	struct ucmd_file *f = fget(s->fx.e, efd), *old;

	assert_non_null(f);
	assert_int_equal(replace_fd(&s->c.files, cfd, f, &old), cfd);
	if (old)
		fput(old);
}

void sfx_teardown(struct sfx *s)
{
	srv_rings_destroy_all(&s->c);
	ucmd_close(s->fx.e, s->null_efd);
	sfx_client_free(&s->c);
	/* the last ring took the workers with it */
	assert_null(s->d.pool);
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
