/* SPDX-License-Identifier: MIT */
/*
 * Every public entry of ucmd.h that is not an inline helper goes through the
 * engine's or the ring's ops (core/backend.h): a recording backend sees each
 * call with its arguments, and its return value comes back unchanged. Core
 * needs no change for a backend it has never heard of.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/backend.h"
#include "ucmd/ucmd.h"

enum {
	C_ENGINE_FREE, C_OPEN, C_CLOSE, C_DEVICE_NAMES, C_DISK_STAT, C_IOCTL, C_QUEUE_INIT,
	C_QUEUE_EXIT, C_ENTER, C_REG_FILES, C_UNREG_FILES, C_REG_BUFS, C_UNREG_BUFS,
	C_REG_PERS, C_UNREG_PERS, C_NR
};

/* The backend's state: what it was called with. */
struct rec {
	unsigned calls[C_NR];
	const void *last_ptr;
	unsigned long last_num;
	unsigned enter_submit, enter_min, enter_flags;
	/* the ring memory it hands out: Linux's layout, one CQE to reap */
	unsigned sq_head, sq_tail, cq_head, cq_tail, mask, entries, flags;
	unsigned array[4];
	struct io_uring_sqe sqes[4];
	struct io_uring_cqe cqes[4];
};

static struct rec *rec_of(struct ucmd_engine *e)
{
	return backend_engine_priv(e);
}

static void rec_engine_free(struct ucmd_engine *e)
{
	rec_of(e)->calls[C_ENGINE_FREE]++;
	backend_engine_release(e);
}

static int rec_open(struct ucmd_engine *e, const char *name, int flags)
{
	rec_of(e)->calls[C_OPEN]++;
	rec_of(e)->last_ptr = name;
	rec_of(e)->last_num = (unsigned long)flags;
	return 7;
}

static int rec_close(struct ucmd_engine *e, int fd)
{
	rec_of(e)->calls[C_CLOSE]++;
	rec_of(e)->last_num = (unsigned long)fd;
	return -EBADF;
}

static int rec_device_names(struct ucmd_engine *e, const char **names, unsigned max)
{
	rec_of(e)->calls[C_DEVICE_NAMES]++;
	rec_of(e)->last_num = max;
	if (max)
		names[0] = "rec0";
	return 1;
}

static int rec_disk_stat(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out)
{
	rec_of(e)->calls[C_DISK_STAT]++;
	rec_of(e)->last_ptr = name;
	out->ios[0] = 42;
	return 0;
}

static int rec_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg)
{
	rec_of(e)->calls[C_IOCTL]++;
	rec_of(e)->last_ptr = arg;
	rec_of(e)->last_num = cmd + (unsigned long)fd;
	return 11;
}

static const struct ucmd_backend rec_backend;

static int rec_queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			  struct io_uring_params *p)
{
	struct rec *r = rec_of(e);

	r->calls[C_QUEUE_INIT]++;
	r->last_num = entries;
	memset(ring, 0, sizeof(*ring));
	r->mask = 3;
	r->entries = 4;
	ring->sq.khead = &r->sq_head;
	ring->sq.ktail = &r->sq_tail;
	ring->sq.kring_mask = &r->mask;
	ring->sq.kring_entries = &r->entries;
	ring->sq.kflags = &r->flags;
	ring->sq.array = r->array;
	ring->sq.sqes = r->sqes;
	ring->sq.ring_mask = 3;
	ring->sq.ring_entries = 4;
	ring->cq.khead = &r->cq_head;
	ring->cq.ktail = &r->cq_tail;
	ring->cq.kring_mask = &r->mask;
	ring->cq.kring_entries = &r->entries;
	ring->cq.cqes = r->cqes;
	ring->cq.ring_mask = 3;
	ring->cq.ring_entries = 4;
	ring->flags = p->flags;
	ring->ring_fd = -1;
	ring->engine = e;
	ring->ops = &rec_backend;
	ring->backend = r;
	return 0;
}

static void rec_queue_exit(struct ucmd_ring *ring)
{
	((struct rec *)ring->backend)->calls[C_QUEUE_EXIT]++;
	memset(ring, 0, sizeof(*ring));
}

/* Consumes what was submitted and completes one CQE per SQE. */
static int rec_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		     unsigned flags)
{
	struct rec *r = ring->backend;

	r->calls[C_ENTER]++;
	r->enter_submit = to_submit;
	r->enter_min = min_complete;
	r->enter_flags = flags;
	for (unsigned i = 0; i < to_submit; i++) {
		struct io_uring_sqe *sqe = &r->sqes[r->sq_head++ & 3];

		r->cqes[r->cq_tail & 3] = (struct io_uring_cqe){ .user_data = sqe->user_data,
								 .res = 5 };
		r->cq_tail++;
	}
	return (int)to_submit;
}

static int rec_register_files(struct ucmd_ring *ring, const int *files, unsigned nr)
{
	struct rec *r = ring->backend;

	r->calls[C_REG_FILES]++;
	r->last_ptr = files;
	r->last_num = nr;
	return 0;
}

static int rec_unregister_files(struct ucmd_ring *ring)
{
	((struct rec *)ring->backend)->calls[C_UNREG_FILES]++;
	return -ENXIO;
}

static int rec_register_buffers(struct ucmd_ring *ring, const struct iovec *iov, unsigned nr)
{
	struct rec *r = ring->backend;

	r->calls[C_REG_BUFS]++;
	r->last_ptr = iov;
	r->last_num = nr;
	return 0;
}

static int rec_unregister_buffers(struct ucmd_ring *ring)
{
	((struct rec *)ring->backend)->calls[C_UNREG_BUFS]++;
	return 0;
}

static int rec_register_personality(struct ucmd_ring *ring)
{
	((struct rec *)ring->backend)->calls[C_REG_PERS]++;
	return 3;
}

static int rec_unregister_personality(struct ucmd_ring *ring, int id)
{
	struct rec *r = ring->backend;

	r->calls[C_UNREG_PERS]++;
	r->last_num = (unsigned long)id;
	return 0;
}

static const struct ucmd_backend rec_backend = {
	.name = "recorder",
	.engine_free = rec_engine_free,
	.open = rec_open,
	.close = rec_close,
	.device_names = rec_device_names,
	.disk_stat = rec_disk_stat,
	.ioctl = rec_ioctl,
	.queue_init = rec_queue_init,
	.queue_exit = rec_queue_exit,
	.enter = rec_enter,
	.register_files = rec_register_files,
	.unregister_files = rec_unregister_files,
	.register_buffers = rec_register_buffers,
	.unregister_buffers = rec_unregister_buffers,
	.register_personality = rec_register_personality,
	.unregister_personality = rec_unregister_personality,
};

static void test_engine_entries(void **state)
{
	struct rec r = { 0 };
	struct ucmd_engine *e = backend_engine_alloc(&rec_backend, &r);
	const char *names[2] = { NULL, NULL };
	struct ucmd_disk_stat st;
	int arg;

	(void)state;
	assert_non_null(e);
	assert_int_equal(ucmd_open(e, "rec0", O_RDWR), 7);
	assert_int_equal(r.calls[C_OPEN], 1);
	assert_string_equal(r.last_ptr, "rec0");
	assert_int_equal(r.last_num, O_RDWR);
	assert_int_equal(ucmd_close(e, 7), -EBADF);
	assert_int_equal(r.calls[C_CLOSE], 1);
	assert_int_equal(r.last_num, 7);
	assert_int_equal(ucmd_device_names(e, names, 2), 1);
	assert_int_equal(r.calls[C_DEVICE_NAMES], 1);
	assert_string_equal(names[0], "rec0");
	assert_int_equal(ucmd_disk_stat(e, "rec0", &st), 0);
	assert_int_equal(r.calls[C_DISK_STAT], 1);
	assert_int_equal(st.ios[0], 42);
	assert_int_equal(ucmd_ioctl(e, 1, 0x100, &arg), 11);
	assert_int_equal(r.calls[C_IOCTL], 1);
	assert_ptr_equal(r.last_ptr, &arg);
	assert_int_equal(r.last_num, 0x101);
	/* arguments every backend would refuse never reach one */
	assert_int_equal(ucmd_open(e, NULL, O_RDWR), -EINVAL);
	assert_int_equal(ucmd_disk_stat(e, "rec0", NULL), -EINVAL);
	assert_int_equal(r.calls[C_OPEN] + r.calls[C_DISK_STAT], 2);
	ucmd_engine_free(e);
	assert_int_equal(r.calls[C_ENGINE_FREE], 1);
}

static void test_ring_entries(void **state)
{
	struct rec r = { 0 };
	struct ucmd_engine *e = backend_engine_alloc(&rec_backend, &r);
	struct io_uring_params p = { 0 };
	struct ucmd_ring ring;
	struct io_uring_cqe *cqe;
	struct iovec iov = { &r, 1 };
	int files[1] = { 7 };

	(void)state;
	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), 0);
	assert_int_equal(r.calls[C_QUEUE_INIT], 1);
	assert_int_equal(r.last_num, 4);
	assert_ptr_equal(ring.ops, &rec_backend);

	assert_int_equal(ucmd_register_files(&ring, files, 1), 0);
	assert_ptr_equal(r.last_ptr, files);
	assert_int_equal(ucmd_unregister_files(&ring), -ENXIO);
	assert_int_equal(ucmd_register_buffers(&ring, &iov, 1), 0);
	assert_ptr_equal(r.last_ptr, &iov);
	assert_int_equal(ucmd_unregister_buffers(&ring), 0);
	assert_int_equal(ucmd_register_personality(&ring), 3);
	assert_int_equal(ucmd_unregister_personality(&ring, 3), 0);
	assert_int_equal(r.last_num, 3);
	assert_int_equal(r.calls[C_REG_FILES] + r.calls[C_UNREG_FILES] + r.calls[C_REG_BUFS] +
			 r.calls[C_UNREG_BUFS] + r.calls[C_REG_PERS] + r.calls[C_UNREG_PERS], 6);

	/* the raw enter */
	assert_int_equal(ucmd_enter(&ring, 0, 0, IORING_ENTER_GETEVENTS), 0);
	assert_int_equal(r.calls[C_ENTER], 1);
	assert_int_equal(r.enter_flags, IORING_ENTER_GETEVENTS);

	/* submit and wait run the ring logic over the backend's memory */
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	ucmd_sqe_set_data64(&ring.sq.sqes[0], 99);
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_int_equal(r.calls[C_ENTER], 2);
	assert_int_equal(r.enter_submit, 1);
	assert_int_equal(ucmd_wait_cqe(&ring, &cqe), 0);
	assert_int_equal(cqe->user_data, 99);
	assert_int_equal(cqe->res, 5);
	ucmd_cqe_seen(&ring, cqe);
	/* nothing left: a peek enters to look, and finds nothing */
	assert_int_equal(ucmd_peek_cqe(&ring, &cqe), -EAGAIN);
	assert_int_equal(r.calls[C_ENTER], 3);
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	assert_int_equal(ucmd_submit_and_wait(&ring, 1), 1);
	assert_int_equal(r.enter_min, 1);
	assert_true(r.enter_flags & IORING_ENTER_GETEVENTS);
	assert_int_equal(ucmd_wait_cqe_nr(&ring, &cqe, 1), 0);
	ucmd_cqe_seen(&ring, cqe);

	ucmd_queue_exit(&ring);
	assert_int_equal(r.calls[C_QUEUE_EXIT], 1);
	ucmd_engine_free(e);
}

/* A ring that is not (or no longer) set up belongs to no backend. */
static void test_no_backend(void **state)
{
	struct ucmd_ring ring;
	int files[1] = { 0 };

	(void)state;
	memset(&ring, 0, sizeof(ring));
	assert_int_equal(ucmd_enter(&ring, 0, 0, 0), -EBADF);
	assert_int_equal(ucmd_register_files(&ring, files, 1), -EBADF);
	assert_int_equal(ucmd_unregister_buffers(&ring), -EBADF);
	assert_int_equal(ucmd_register_personality(&ring), -EBADF);
	ucmd_queue_exit(&ring);	/* nothing to do, no crash */
	assert_int_equal(ucmd_open(NULL, "null", O_RDWR), -EINVAL);
	assert_int_equal(ucmd_close(NULL, 0), -EBADF);
	assert_int_equal(ucmd_ioctl(NULL, 0, 0, NULL), -EINVAL);
	ucmd_engine_free(NULL);
}

/* The native backend is reached the same way, by its own ops. */
static void test_native_through_ops(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;
	struct io_uring_params p = { 0 };
	const struct ucmd_backend *native;

	(void)state;
	assert_non_null(e);
	native = backend_engine_ops(e);
	assert_non_null(native);
	assert_string_equal(native->name, "native");
	assert_int_equal(ucmd_queue_init_engine(e, 4, &ring, &p), 0);
	assert_ptr_equal(ring.ops, native);
	assert_non_null(ring.backend);
	ucmd_queue_exit(&ring);
	assert_null(ring.ops);
	assert_int_equal(ucmd_enter(&ring, 0, 0, 0), -EBADF);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_entries),
		cmocka_unit_test(test_ring_entries),
		cmocka_unit_test(test_no_backend),
		cmocka_unit_test(test_native_through_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
