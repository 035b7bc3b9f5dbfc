/* SPDX-License-Identifier: MIT */
/*
 * Sparse in-memory store. Memory is a two-level table of lazily allocated
 * 64 KiB chunks: a top-level array of leaf pointers (one per 256 MiB), each
 * leaf an array of chunk pointers. A 1 TiB store therefore costs a 32 KiB top
 * table until it is written, and commits memory only chunk by chunk, so it
 * works under strict overcommit (vm.overcommit_memory=2) where a huge
 * MAP_NORESERVE mapping would still be charged.
 *
 * Concurrency: I/O on different ranges may run in parallel. Chunks and leaves
 * are installed with compare-and-swap, so two threads writing different bytes
 * of a not yet allocated chunk agree on one chunk. Resize takes the write side
 * of a resize lock because it may move the top-level table and free chunks.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "store/common.h"
#include "store/store.h"
#include "uaccess/uaccess.h"

#define CHUNK_SHIFT	16u
#define CHUNK_SIZE	(1ull << CHUNK_SHIFT)
#define LEAF_SHIFT	12u	/* chunks per leaf: 4096, i.e. 256 MiB */
#define LEAF_CHUNKS	(1ull << LEAF_SHIFT)
#define LEAF_SPAN	(CHUNK_SIZE * LEAF_CHUNKS)
/*
 * Chunks start on a page. malloc's 16-byte alignment put every 4 KiB block
 * 16 bytes into a page: a block read crossed two pages (two TLB walks) and
 * 65 cache lines, and its copy ran with source and destination misaligned
 * to each other, which rep movsb does at a fraction of its aligned speed.
 * Page-aligned chunks made 4 KiB random reads about 15% faster.
 */
#define CHUNK_ALIGN	4096u
/* Keeps the top-level table (8 bytes per 256 MiB) at most 32 MiB. */
#define RAM_MAX_SIZE	(1ull << 50)

struct ram_leaf {
	unsigned char *chunk[LEAF_CHUNKS];
};

struct ram_store {
	struct store st;
	atomic_uint lock;		/* I/O calls inside, | RESIZING */
	pthread_mutex_t resize_lock;	/* one resize at a time */
	struct ram_leaf **leaves;
	uint64_t nleaves;		/* entries in leaves[] */
	uint64_t nchunks;		/* allocated chunks (atomic) */
};

static struct ram_store *to_ram(struct store *st)
{
	return (struct ram_store *)st;
}

/*
 * The resize lock. Every I/O call takes its read side, so it is the store's
 * per-I/O floor: glibc's rwlock pair costs about 100 instructions, more than
 * the rest of a 4 KiB read around its copy; this read side is one atomic add
 * to enter and one to leave. One word holds the count of I/O calls inside
 * and a resize's flag, so every change to it is ordered against every other:
 * an I/O call that counted itself before the flag went up is waited for,
 * one that came after sees the flag and backs off. Resizing is a rare admin
 * operation, so its waits (on either side) yield.
 */
#define RESIZING	(1u << 31)

static bool io_try_enter(struct ram_store *rs)
{
	if (!(atomic_fetch_add_explicit(&rs->lock, 1, memory_order_acquire) & RESIZING))
		return true;
	atomic_fetch_sub_explicit(&rs->lock, 1, memory_order_release);
	return false;
}

static void io_enter(struct ram_store *rs)
{
	while (!io_try_enter(rs))
		while (atomic_load_explicit(&rs->lock, memory_order_relaxed) & RESIZING)
			sched_yield();
}

static void io_exit(struct ram_store *rs)
{
	atomic_fetch_sub_explicit(&rs->lock, 1, memory_order_release);
}

static void resize_enter(struct ram_store *rs)
{
	pthread_mutex_lock(&rs->resize_lock);
	atomic_fetch_or_explicit(&rs->lock, RESIZING, memory_order_acq_rel);
	while (atomic_load_explicit(&rs->lock, memory_order_acquire) != RESIZING)
		sched_yield();
}

static void resize_exit(struct ram_store *rs)
{
	atomic_fetch_and_explicit(&rs->lock, ~RESIZING, memory_order_release);
	pthread_mutex_unlock(&rs->resize_lock);
}

static uint64_t leaves_for(uint64_t size)
{
	return size / LEAF_SPAN + (size % LEAF_SPAN != 0);
}

static unsigned char *chunk_lookup(struct ram_store *rs, uint64_t idx)
{
	struct ram_leaf *leaf = __atomic_load_n(&rs->leaves[idx >> LEAF_SHIFT], __ATOMIC_ACQUIRE);

	if (!leaf)
		return NULL;
	return __atomic_load_n(&leaf->chunk[idx & (LEAF_CHUNKS - 1)], __ATOMIC_ACQUIRE);
}

/* Install a zeroed object in *slot unless another thread got there first. */
static void *install(void **slot, size_t size, bool *won)
{
	void *cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	void *fresh;

	*won = false;
	if (cur)
		return cur;
	if (posix_memalign(&fresh, CHUNK_ALIGN, size))
		return NULL;
	memset(fresh, 0, size);
	if (__atomic_compare_exchange_n(slot, &cur, fresh, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		*won = true;
		return fresh;
	}
	free(fresh);
	return cur;
}

static unsigned char *chunk_get(struct ram_store *rs, uint64_t idx)
{
	struct ram_leaf *leaf;
	unsigned char *chunk;
	bool won;

	leaf = install((void **)&rs->leaves[idx >> LEAF_SHIFT], sizeof(*leaf), &won);
	if (!leaf)
		return NULL;
	chunk = install((void **)&leaf->chunk[idx & (LEAF_CHUNKS - 1)], CHUNK_SIZE, &won);
	if (chunk && won)
		__atomic_add_fetch(&rs->nchunks, 1, __ATOMIC_RELAXED);
	return chunk;
}

static void chunk_release(struct ram_store *rs, struct ram_leaf *leaf, uint64_t slot)
{
	unsigned char *chunk = __atomic_exchange_n(&leaf->chunk[slot], NULL, __ATOMIC_ACQ_REL);

	if (chunk) {
		free(chunk);
		__atomic_sub_fetch(&rs->nchunks, 1, __ATOMIC_RELAXED);
	}
}

/* Length of the piece of [pos, end) that lies in pos's chunk. */
static uint64_t piece_len(uint64_t pos, uint64_t end)
{
	uint64_t room = CHUNK_SIZE - (pos & (CHUNK_SIZE - 1));

	return end - pos < room ? end - pos : room;
}

static int ram_readv(struct store *st, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct ram_store *rs = to_ram(st);
	struct store_iov_cursor cur;
	uint64_t len, pos;
	int ret;

	io_enter(rs);
	ret = store_check_io(st->size, iov, iovcnt, off, &len);
	if (ret)
		goto out;
	/* One buffer, one chunk (a block read, as a rule): copy it directly. */
	if (iovcnt == 1 && len && piece_len(off, off + len) == len) {
		unsigned char *chunk = chunk_lookup(rs, off >> CHUNK_SHIFT);

		/* the caller's buffer may be an application's: the accessor copies */
		if (chunk)
			ret = copy_to_user(iov->iov_base, chunk + (off & (CHUNK_SIZE - 1)), len);
		else
			ret = clear_user(iov->iov_base, len);
		goto out;
	}
	store_cursor_init(&cur, iov, iovcnt);
	for (pos = off; !ret && pos < off + len;) {
		uint64_t n = piece_len(pos, off + len);
		unsigned char *chunk = chunk_lookup(rs, pos >> CHUNK_SHIFT);

		if (chunk)
			ret = store_cursor_to_iov(&cur, chunk + (pos & (CHUNK_SIZE - 1)), n);
		else
			ret = store_cursor_zero(&cur, n);
		pos += n;
	}
out:
	io_exit(rs);
	return ret;
}

/*
 * Touch the first line of the range: its TLB walk and cache miss then
 * overlap with whatever runs before the copy, and the hardware prefetcher
 * streams the rest of the page once the copy starts.
 */
static void ram_prefetch(struct store *st, uint64_t off, uint64_t len)
{
	struct ram_store *rs = to_ram(st);

	(void)len;
	if (!io_try_enter(rs))
		return;		/* a resize is running: no hint */
	if (off < st->size) {
		unsigned char *chunk = chunk_lookup(rs, off >> CHUNK_SHIFT);

		if (chunk)
			__builtin_prefetch(chunk + (off & (CHUNK_SIZE - 1)), 0, 3);
	}
	io_exit(rs);
}

static int ram_writev(struct store *st, const struct iovec *iov, int iovcnt, uint64_t off,
		      bool fua)
{
	struct ram_store *rs = to_ram(st);
	struct store_iov_cursor cur;
	uint64_t len, pos;
	int ret;

	(void)fua;	/* memory is as durable as it gets */
	io_enter(rs);
	ret = store_check_io(st->size, iov, iovcnt, off, &len);
	if (ret)
		goto out;
	store_cursor_init(&cur, iov, iovcnt);
	for (pos = off; pos < off + len;) {
		uint64_t n = piece_len(pos, off + len);
		unsigned char *chunk = chunk_get(rs, pos >> CHUNK_SHIFT);

		if (!chunk) {
			ret = -ENOMEM;
			break;
		}
		ret = store_cursor_from_iov(&cur, chunk + (pos & (CHUNK_SIZE - 1)), n);
		if (ret)
			break;
		pos += n;
	}
out:
	io_exit(rs);
	return ret;
}

static int ram_flush(struct store *st)
{
	(void)st;
	return 0;
}

/*
 * Zero [pos, pos + n) inside one chunk; free the chunk when the range covers
 * all of it that lies inside the store (bytes past the end are kept zero).
 */
static void zero_piece(struct ram_store *rs, uint64_t pos, uint64_t n, uint64_t size)
{
	uint64_t idx = pos >> CHUNK_SHIFT;
	uint64_t in = pos & (CHUNK_SIZE - 1);
	uint64_t chunk_end = (idx << CHUNK_SHIFT) + CHUNK_SIZE;
	struct ram_leaf *leaf = __atomic_load_n(&rs->leaves[idx >> LEAF_SHIFT], __ATOMIC_ACQUIRE);
	unsigned char *chunk;

	if (!leaf)
		return;
	if (in == 0 && pos + n >= (chunk_end < size ? chunk_end : size)) {
		chunk_release(rs, leaf, idx & (LEAF_CHUNKS - 1));
		return;
	}
	chunk = __atomic_load_n(&leaf->chunk[idx & (LEAF_CHUNKS - 1)], __ATOMIC_ACQUIRE);
	if (chunk)
		memset(chunk + in, 0, n);
}

static int ram_deallocate(struct store *st, uint64_t off, uint64_t len)
{
	struct ram_store *rs = to_ram(st);
	int ret;

	io_enter(rs);
	ret = store_check_range(st->size, off, len);
	for (uint64_t pos = off; !ret && pos < off + len;) {
		uint64_t n = piece_len(pos, off + len);

		zero_piece(rs, pos, n, st->size);
		pos += n;
	}
	io_exit(rs);
	return ret;
}

/* Unwritten memory reads as zeros, so writing zeros is deallocating. */
static int ram_write_zeroes(struct store *st, uint64_t off, uint64_t len)
{
	return ram_deallocate(st, off, len);
}

/* Free every chunk at or beyond chunk index `first`, and leaves left empty. */
static void release_from(struct ram_store *rs, uint64_t first, uint64_t keep_leaves)
{
	for (uint64_t l = first >> LEAF_SHIFT; l < rs->nleaves; l++) {
		struct ram_leaf *leaf = rs->leaves[l];
		uint64_t s = l == (first >> LEAF_SHIFT) ? first & (LEAF_CHUNKS - 1) : 0;

		if (!leaf)
			continue;
		for (; s < LEAF_CHUNKS; s++)
			chunk_release(rs, leaf, s);
		if (l >= keep_leaves) {
			free(leaf);
			rs->leaves[l] = NULL;
		}
	}
}

static int ram_shrink(struct ram_store *rs, uint64_t size)
{
	uint64_t first_free = size / CHUNK_SIZE + (size % CHUNK_SIZE != 0);

	/* The tail of the last kept chunk must read as zeros if the store grows again. */
	if (size % CHUNK_SIZE) {
		unsigned char *chunk = chunk_lookup(rs, size >> CHUNK_SHIFT);

		if (chunk)
			memset(chunk + size % CHUNK_SIZE, 0, CHUNK_SIZE - size % CHUNK_SIZE);
	}
	release_from(rs, first_free, leaves_for(size));
	/* leaves[] keeps its length: entries past the new end are NULL */
	return 0;
}

static int ram_grow(struct ram_store *rs, uint64_t size)
{
	uint64_t want = leaves_for(size);
	struct ram_leaf **leaves;

	if (want <= rs->nleaves)
		return 0;
	leaves = realloc(rs->leaves, want * sizeof(*leaves));
	if (!leaves)
		return -ENOMEM;
	memset(leaves + rs->nleaves, 0, (want - rs->nleaves) * sizeof(*leaves));
	rs->leaves = leaves;
	rs->nleaves = want;
	return 0;
}

static int ram_resize(struct store *st, uint64_t size)
{
	struct ram_store *rs = to_ram(st);
	int ret;

	if (size > RAM_MAX_SIZE)
		return -EFBIG;
	resize_enter(rs);
	ret = size < st->size ? ram_shrink(rs, size) : ram_grow(rs, size);
	if (!ret)
		st->size = size;
	resize_exit(rs);
	return ret;
}

static uint64_t ram_allocated(struct store *st)
{
	struct ram_store *rs = to_ram(st);
	uint64_t bytes, size;

	io_enter(rs);
	bytes = __atomic_load_n(&rs->nchunks, __ATOMIC_RELAXED) * CHUNK_SIZE;
	size = st->size;
	io_exit(rs);
	/* the last chunk may stick out past the end; never report more than the size */
	return bytes < size ? bytes : size;
}

static void ram_close(struct store *st)
{
	struct ram_store *rs = to_ram(st);

	release_from(rs, 0, 0);
	free(rs->leaves);
	pthread_mutex_destroy(&rs->resize_lock);
	free(rs);
}

static const struct store_ops ram_ops = {
	.name = "ram",
	.readv = ram_readv,
	.writev = ram_writev,
	.flush = ram_flush,
	.deallocate = ram_deallocate,
	.write_zeroes = ram_write_zeroes,
	.prefetch = ram_prefetch,
	.resize = ram_resize,
	.allocated = ram_allocated,
	.close = ram_close,
};

int store_ram_open(uint64_t size, struct store **out)
{
	struct ram_store *rs;
	int ret;

	if (!out)
		return -EINVAL;
	if (size > RAM_MAX_SIZE)
		return -EFBIG;
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	ret = -pthread_mutex_init(&rs->resize_lock, NULL);
	if (ret) {
		free(rs);
		return ret;
	}
	rs->st.ops = &ram_ops;
	ret = ram_grow(rs, size);
	if (ret) {
		ram_close(&rs->st);
		return ret;
	}
	rs->st.size = size;
	*out = &rs->st;
	return 0;
}
