/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: ucmd-supervise's call handling (src/preload/sv_*.c) on
 * hostile seccomp notifications, as a program under `ucmd exec` makes them
 * (a dynamic one's rt_sigaction of SIGSYS among them): any trapped system call number, any arguments, any path
 * bytes, from the program's thread or another one.
 *
 * sv_*.c are linked whole; the daemon's client (src/client) is a model
 * here: connections succeed, the engine's ring is an in-memory one whose
 * submit answers each SQE with a result from the input, ioctls answer from
 * the input (and fill Identify for the supervisor's own geometry read).
 * The program is a forked child that only waits: its memory is what the
 * supervisor reads and writes (process_vm_readv/writev), an arena there
 * holds the input's bytes. No seccomp listener exists (-1), so installing
 * a descriptor fails as a dead listener would. The input's first bytes
 * put devices, rings and an attribute opened for writing (b % 3 == 2 with
 * its top bit) in the descriptor table (as opens would).
 * Opens of host files are kept harmless: the path is checked before the
 * child's arena holds it (relative without "..", or /dev/<nvme name>) and
 * creating or writing flags are dropped for anything but a device.
 *
 * Invariants: every answer is a result >= 0, an errno in 1..4095, or
 * "continue", never two of them; a read or write SQE names a block device
 * of the table, never goes past its size, moves at most its chunk and is
 * not empty; an fsync names a block device; a block device's position
 * never goes past its size; a read/write result is at most what was asked.
 *
 * Input (its length odd: a dynamic program's supervisor, --dirs): 4 slot
 * bytes, then notifications of 64 bytes each (nr selector,
 * flags, six arguments as tags and values), the rest path bytes and arena
 * contents. Seeds: corpus/supervise/.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/io_uring.h>
#include <linux/nvme_ioctl.h>

#include <ucmd/nvme.h>

#include "preload/sv.h"

#define ARENA_LEN 8192u
#define PATH_OFF 0u
#define DATA_OFF 4096u

static struct sv sv;
static pid_t child = -1;
static unsigned char *arena;	/* same address in the child (mapped before the fork) */
static const uint8_t *in;
static size_t in_len, in_pos;

static uint8_t byte(void)
{
	return in_pos < in_len ? in[in_pos++] : 0;
}

static uint64_t u64(void)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)byte() << (8 * i);
	return v;
}

/* ---- the model of src/client ---- */

/* Engines: distinct addresses, the ones the program's connection was adopted on marked. */
static char engines[16];
static bool adopted_eng[16];
static unsigned next_eng;

static bool is_adopted(const struct ucmd_engine *e)
{
	const char *c = (const char *)e;

	return c >= engines && c < engines + 16 && adopted_eng[c - engines];
}

int ucmd_engine_connect(const char *path, struct ucmd_engine **out)
{
	unsigned k = next_eng++ % 16;

	(void)path;
	if (byte() == 0xee)
		return -ECONNREFUSED;
	adopted_eng[k] = false;
	*out = (struct ucmd_engine *)&engines[k];
	return 0;
}

void ucmd_engine_free(struct ucmd_engine *e)
{
	(void)e;
}

int dc_adopt(struct ucmd_engine *e, int pidfd)
{
	const char *c = (const char *)e;

	(void)pidfd;
	if (c < engines || c >= engines + 16)
		__builtin_trap();	/* an engine nobody connected */
	adopted_eng[c - engines] = true;
	return 0;
}

int dc_open_fixed(struct ucmd_engine *e, const char *name, int flags, int fd)
{
	(void)e;
	(void)flags;
	if (!name[0])
		__builtin_trap();
	return byte() == 0xee ? -EACCES : fd;
}

/* the daemon's device list: the one the supervisor started with */
int ucmd_device_names(struct ucmd_engine *e, const char **names, unsigned max)
{
	(void)e;
	for (int i = 0; i < sv.nr_names && (unsigned)i < max; i++)
		names[i] = sv.names[i];
	return sv.nr_names;
}

/* the tree's resource0 (sysfs.c, linked for the path calls): no tree is built here */
int ucmd_nvme_regs_read(struct ucmd_engine *e, int fd, uint32_t off, void *buf, size_t len)
{
	(void)e;
	(void)fd;
	(void)off;
	memset(buf, 0, len);
	return -ENODEV;
}

int ucmd_close(struct ucmd_engine *e, int fd)
{
	(void)e;
	(void)fd;
	return 0;
}

int ucmd_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg)
{
	(void)fd;
	/* the supervisor's own Identify (sv_geo.c): its buffer, 4 KiB */
	if (!is_adopted(e) && cmd == NVME_IOCTL_ADMIN64_CMD) {
		struct nvme_passthru_cmd64 *c = arg;
		uint8_t *id = (uint8_t *)(uintptr_t)c->addr;

		if (c->data_len != 4096)
			__builtin_trap();
		for (unsigned i = 0; i < 8; i++)
			id[i] = byte();		/* NSZE */
		id[26] = byte();		/* FLBAS */
		id[77] = byte();		/* MDTS */
		id[128 + 2] = byte() % 16;	/* LBAF0 LBADS (the low ones shift too far) */
		id[128 + 2] = (uint8_t)(id[128 + 2] + 9);
		return byte() == 0xee ? 2 : 0;
	}
	return -(int)(byte() % 40);
}

/* The in-memory ring: 4 SQEs, 8 CQEs. */
struct mring {
	unsigned sq_head, sq_tail, sq_mask, sq_entries, sq_flags, sq_dropped, array[4];
	unsigned cq_head, cq_tail, cq_mask, cq_entries, cq_flags, cq_overflow;
	struct io_uring_sqe sqes[4];
	struct io_uring_cqe cqes[8];
};

static int mring_init(struct ucmd_ring *r)
{
	struct mring *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	m->sq_mask = 3;
	m->sq_entries = 4;
	m->cq_mask = 7;
	m->cq_entries = 8;
	r->sq.khead = &m->sq_head;
	r->sq.ktail = &m->sq_tail;
	r->sq.kring_mask = &m->sq_mask;
	r->sq.kring_entries = &m->sq_entries;
	r->sq.kflags = &m->sq_flags;
	r->sq.kdropped = &m->sq_dropped;
	r->sq.array = m->array;
	r->sq.sqes = m->sqes;
	r->sq.ring_mask = 3;
	r->sq.ring_entries = 4;
	r->cq.khead = &m->cq_head;
	r->cq.ktail = &m->cq_tail;
	r->cq.kring_mask = &m->cq_mask;
	r->cq.kring_entries = &m->cq_entries;
	r->cq.kflags = &m->cq_flags;
	r->cq.koverflow = &m->cq_overflow;
	r->cq.cqes = m->cqes;
	r->cq.ring_mask = 7;
	r->cq.ring_entries = 8;
	r->backend = m;
	r->ring_fd = -1;
	return 0;
}

int ucmd_queue_init_engine(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			   struct io_uring_params *p)
{
	(void)e;
	(void)entries;
	(void)p;
	return mring_init(ring);
}

int dc_queue_init_flags(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			struct io_uring_params *p, unsigned qi_flags)
{
	(void)e;
	(void)qi_flags;
	if (!entries || entries > 4096)
		return -EINVAL;
	memset(&p->sq_off, 0, sizeof(p->sq_off));
	memset(&p->cq_off, 0, sizeof(p->cq_off));
	p->sq_entries = 4;
	p->cq_entries = 8;
	p->cq_off.cqes = 256;
	p->sq_off.array = 512;
	return mring_init(ring);
}

void ucmd_queue_exit(struct ucmd_ring *ring)
{
	free(ring->backend);
	ring->backend = NULL;
}

/* The supervisor's bounce buffer (sv_own.c), shared with the daemon. */
static unsigned char own_buf[128 * 1024];

void *ucmd_buf_alloc(struct ucmd_engine *e, size_t len)
{
	if (is_adopted(e) || len > sizeof(own_buf))
		__builtin_trap();	/* the program's connection has no buffer of ours */
	return byte() == 0xee ? NULL : own_buf;
}

/* a descendant's view let go (sv_fork.c): only the buffer handed out above */
void ucmd_buf_free(struct ucmd_engine *e, void *p)
{
	(void)e;
	if (p && p != own_buf)
		__builtin_trap();
}

/*
 * An SQE on the supervisor's own ring (sv_own.c): whole blocks of a device
 * opened there, inside it, from or into the bounce buffer.
 */
static void check_own_sqe(const struct io_uring_sqe *sqe)
{
	const struct sv_fd *f = NULL;

	for (unsigned i = 0; i < SV_FD_NR; i++)
		if (sv.fds[i].kind == SV_DEV && sv.fds[i].blk && sv.fds[i].own_fd >= 0 &&
		    sv.fds[i].own_fd == sqe->fd)
			f = &sv.fds[i];
	if (!f || (sqe->opcode != IORING_OP_READ && sqe->opcode != IORING_OP_WRITE))
		__builtin_trap();
	if (!sqe->len || sqe->len % f->geo.lbs || sqe->off % f->geo.lbs || sqe->len > f->geo.chunk ||
	    sqe->off >= f->geo.size || sqe->len > f->geo.size - sqe->off)
		__builtin_trap();
	if (sqe->addr < (uintptr_t)own_buf || sqe->addr + sqe->len > (uintptr_t)own_buf + sizeof(own_buf))
		__builtin_trap();
}

/* The block device an SQE's fd names, checked against what the supervisor may send. */
static void check_sqe(const struct ucmd_ring *ring, const struct io_uring_sqe *sqe)
{
	struct sv_fd *f = sv_slot_of(&sv, (uint32_t)sqe->fd);

	if (ring == &sv.own_ring) {
		check_own_sqe(sqe);
		return;
	}
	if (!f || f->kind != SV_DEV || !f->blk)
		__builtin_trap();
	if (sqe->opcode == IORING_OP_FSYNC)
		return;
	if (sqe->opcode != IORING_OP_READ && sqe->opcode != IORING_OP_WRITE)
		__builtin_trap();
	if (!sqe->len || sqe->len > f->geo.chunk || sqe->off >= f->geo.size ||
	    sqe->len > f->geo.size - sqe->off)
		__builtin_trap();
}

int ucmd_submit(struct ucmd_ring *ring)
{
	struct mring *m = ring->backend;
	int n = 0;

	while (m->sq_head != ring->sq.sqe_tail) {
		const struct io_uring_sqe *sqe = &m->sqes[m->sq_head & 3];
		struct io_uring_cqe *cqe = &m->cqes[m->cq_tail & 7];
		uint8_t b = byte();

		check_sqe(ring, sqe);
		/* the whole, a part, or an errno */
		cqe->res = b < 128 ? (int)sqe->len : b < 200 ? (int)(sqe->len * (b - 128) / 72)
							    : -(b % 40);
		cqe->user_data = sqe->user_data;
		m->cq_tail++;
		m->sq_head++;
		n++;
	}
	return n;
}

int ucmd_wait_cqe_nr(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr)
{
	struct mring *m = ring->backend;

	(void)wait_nr;
	if (m->cq_head == m->cq_tail)
		return -EIO;
	*cqe_ptr = &m->cqes[m->cq_head & 7];
	return 0;
}

int dc_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete, unsigned flags)
{
	(void)ring;
	(void)min_complete;
	(void)flags;
	return byte() == 0xee ? -EINTR : (int)(to_submit % 5);
}

int dc_enter_timeout(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		     unsigned flags, const struct __kernel_timespec *ts, const sigset_t *sigmask)
{
	(void)ts;
	(void)sigmask;
	return dc_enter(ring, to_submit, min_complete, flags);
}

int dc_register_raw(struct ucmd_ring *ring, unsigned opcode, const void *arg, unsigned nr, int fd,
		    void *rep, size_t rep_max, size_t *rep_len)
{
	(void)ring;
	(void)opcode;
	(void)arg;
	(void)nr;
	(void)fd;
	if (rep && rep_len) {
		*rep_len = rep_max < 64 ? rep_max : 64;
		memset(rep, byte(), *rep_len);
	}
	return -(int)(byte() % 30);
}

/* ---- supervise.c's part ---- */

bool sv_id_valid(struct sv *s, uint64_t id)
{
	(void)s;
	return id != 0xdead;
}

void sv_trace(struct sv *s, const char *fmt, ...)
{
	(void)s;
	(void)fmt;
}

/* ---- the target ---- */

static const int nrs[] = {
	__NR_open, __NR_openat, __NR_creat, __NR_io_uring_setup, __NR_io_uring_enter,
	__NR_io_uring_register, __NR_mmap, __NR_dup2, __NR_dup3, __NR_ioctl, __NR_close,
	__NR_read, __NR_write, __NR_pread64, __NR_pwrite64, __NR_lseek, __NR_readv, __NR_writev,
	__NR_preadv, __NR_pwritev, __NR_preadv2, __NR_pwritev2, __NR_fsync, __NR_fdatasync,
	__NR_fstat, __NR_newfstatat, __NR_statx, __NR_getdents64, __NR_rt_sigaction,
};
static const char *names[] = { "nvme0", "ng0n1", "nvme0n1" };
static char phdir[] = "/tmp/fuzz_supervise.XXXXXX";

/* At exit: the child, then the placeholders' directory (each run made one in /tmp) */
static void stop_child(void)
{
	char p[64];

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	snprintf(p, sizeof(p), "%s/scheduler", phdir);
	unlink(p);
	for (unsigned i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", phdir, names[i]);
		rmdir(p);
	}
	rmdir(phdir);
}

static int desc_file = -1;
static int attr_file = -1;	/* an attribute opened for writing (sv_attrw.c): its value */

static void setup(void)
{
	char p[64];

	arena = mmap(NULL, ARENA_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED || !mkdtemp(phdir))
		abort();
	for (unsigned i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", phdir, names[i]);
		mkdir(p, 0500);
	}
	child = fork();
	if (child == 0) {
		/* the program's cwd, where its relative opens land: the placeholders' directory */
		if (chdir(phdir))
			_exit(1);
		for (;;)
			pause();
	}
	if (child < 0)
		abort();
	atexit(stop_child);
	/* what the slots' descriptions hold (a placeholder directory, as sv_open's) */
	desc_file = open(phdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (desc_file < 0)
		abort();
	snprintf(p, sizeof(p), "%s/scheduler", phdir);
	attr_file = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (attr_file < 0 || pwrite(attr_file, "[none] mq-deadline\n", 19, 0) != 19)
		abort();
	sv.sock = "/nonexistent/ucmdd.sock";
	sv.pid = child;
	sv.pidfd = -1;
	sv.listener = -1;
	sv.phdir = phdir;
	sv.names = names;
	sv.nr_names = 3;
}

/* An argument: a number, a place in the child's arena, or an address nothing maps. */
static uint64_t arg(void)
{
	uint8_t tag = byte();
	uint64_t v = u64();

	switch (tag % 4) {
	case 0: return v;
	case 1: return (uint64_t)(uintptr_t)arena + DATA_OFF + v % (ARENA_LEN - DATA_OFF);
	case 2: return SV_FD_BASE + v % SV_FD_NR;
	default: return 0x10;
	}
}

/* Is the path one an open may make for real here, harmlessly? */
static bool path_ok(const char *p)
{
	if (strstr(p, ".."))
		return false;
	if (p[0] != '/')
		return true;
	return !strncmp(p, "/dev/", 5) && pl_path_dev_name(p + 5);
}

static void reset_table(void)
{
	for (unsigned i = 0; i < SV_FD_NR; i++) {
		/* the open file description every slot holds (sv_fork.c) */
		sv_desc_put(&sv, &sv.fds[i]);
		if (sv.fds[i].kind == SV_RING)
			ucmd_queue_exit(&sv.fds[i].ring);
		/* a device's number on our own connection is a descriptor (sv_own.c's eventfd) */
		if (sv.fds[i].kind == SV_DEV && sv.fds[i].own_fd >= 0)
			close(sv.fds[i].own_fd);
	}
	memset(sv.fds, 0, sizeof(sv.fds));
	memset(sv.regs, 0, sizeof(sv.regs));
	if (sv.io_live)
		ucmd_queue_exit(&sv.io);
	sv.io_live = false;
	if (sv.own)
		ucmd_queue_exit(&sv.own_ring);
	sv.own = NULL;
	sv.own_buf = NULL;
	sv.adopted = false;
	memset(adopted_eng, 0, sizeof(adopted_eng));
	next_eng = 0;
	sv.e = (struct ucmd_engine *)&engines[14];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	char path[256];
	size_t plen;

	if (!ready) {
		setup();
		ready = true;
	}
	in = data;
	in_len = size;
	in_pos = 0;
	reset_table();
	/* a dynamic program's supervisor (--dirs) on odd lengths: the corpus keeps its meaning */
	sv.dirs = size & 1;
	/* the table: up to 4 descriptors, as opens and setups would have left them */
	for (unsigned i = 0; i < 4; i++) {
		uint8_t b = byte();
		struct sv_fd *f = &sv.fds[i];

		if (b % 3 == 0)
			continue;
		if (!sv.adopted) {
			sv.adopted = true;
			sv.e = (struct ucmd_engine *)&engines[15];
			adopted_eng[15] = true;
		}
		if (b % 3 == 1) {
			f->kind = SV_DEV;
			snprintf(f->name, sizeof(f->name), "%s", names[(b >> 2) % 3]);
			f->blk = !strcmp(f->name, "nvme0n1");
			f->own_fd = -1;
			f->oflags = (int)(byte() % 3) | (byte() & 1 ? O_DIRECT : 0);
			f->dsm = byte() & 1;
			f->geo.lbs = 512u << ((b >> 4) % 4);
			f->geo.size = (u64() % (1u << 20)) * f->geo.lbs;
			f->geo.chunk = f->geo.lbs * (1 + byte() % 8);
		} else if (b & 0x80) {
			f->kind = SV_ATTR;	/* sv_attr_open's: the attribute's file */
			f->own_fd = -1;
		} else {
			f->kind = SV_RING;
			mring_init(&f->ring);
			f->rings_len = 4096;
			f->sqes_len = 4096;
		}
		/* as sv_open and sv_uring_setup leave it: a description of its own */
		if (sv_desc_new(&sv, f, f->kind == SV_ATTR ? attr_file : desc_file))
			__builtin_trap();
	}
	/* the path and the arena's data, in the child */
	plen = byte() % sizeof(path);
	for (size_t i = 0; i < plen; i++)
		path[i] = (char)byte();
	path[plen] = '\0';
	if (!path_ok(path))
		path[0] = '\0';
	{
		unsigned char data_bytes[ARENA_LEN - DATA_OFF];
		size_t n = in_len - in_pos < sizeof(data_bytes) ? in_len - in_pos : sizeof(data_bytes);
		struct iovec l[2] = { { path, strlen(path) + 1 }, { data_bytes, sizeof(data_bytes) } };
		struct iovec r[2] = { { arena + PATH_OFF, strlen(path) + 1 },
				      { arena + DATA_OFF, sizeof(data_bytes) } };

		memset(data_bytes, 0, sizeof(data_bytes));
		memcpy(data_bytes, in + in_pos, n > 256 ? 256 : n);
		in_pos += n > 256 ? 256 : n;
		if (process_vm_writev(child, l, 2, r, 2, 0) < 0)
			abort();
	}
	while (in_pos < in_len) {
		struct seccomp_notif req = { 0 };
		struct sv_ans a;
		int nr;

		req.id = byte() == 0xad ? 0xdead : 1;
		req.pid = byte() == 0xcc ? (uint32_t)getpid() : (uint32_t)child;
		nr = nrs[byte() % (sizeof(nrs) / sizeof(nrs[0]))];
		req.data.nr = nr;
		for (int i = 0; i < 6; i++)
			req.data.args[i] = arg();
		/*
		 * the old getdents on the bit of an argument getdents64 does not
		 * read: the table of calls (and so the corpus) keeps its meaning
		 */
		if (nr == __NR_getdents64 && (req.data.args[5] & 1))
			req.data.nr = nr = __NR_getdents;
		/* opens: the checked path, and nothing created or written but a device */
		if (nr == __NR_open || nr == __NR_openat || nr == __NR_creat) {
			unsigned pa = nr == __NR_openat ? 1 : 0, fa = pa + 1;

			req.data.args[pa] = (uint64_t)(uintptr_t)arena + PATH_OFF;
			if (strncmp(path, "/dev/", 5)) {
				if (nr == __NR_creat)
					continue;
				req.data.args[fa] &= (uint64_t)(O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				req.data.args[fa] |= O_RDONLY | O_NONBLOCK;
			}
		}
		if (nr == __NR_io_uring_setup)
			req.data.args[1] = (uint64_t)(uintptr_t)arena + DATA_OFF;
		{
			uint64_t asked = req.data.args[2];

			sv_serve(&sv, &req, &a);
			if ((a.cont + (a.error != 0) + a.sent) > 1 || a.error > 0 || a.error < -4095 ||
			    a.val < 0)
				__builtin_trap();
			if (!a.error && !a.cont && a.val > 0 && asked < 0x7ffff000 &&
			    (nr == __NR_read || nr == __NR_write || nr == __NR_pread64 ||
			     nr == __NR_pwrite64) && (uint64_t)a.val > asked)
				__builtin_trap();
		}
		for (unsigned i = 0; i < SV_FD_NR; i++)
			if (sv.fds[i].kind == SV_DEV && sv.fds[i].blk && sv.fds[i].desc &&
			    sv.fds[i].desc->pos > sv.fds[i].geo.size)
				__builtin_trap();
	}
	return 0;
}
