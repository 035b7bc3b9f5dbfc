/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: ucmdd's path for one client SQE: the engine running it
 * as the client wrote it on a ring that belongs to the client's task, as
 * ucmdd's rings do (core/task.h): every client address reaches the engine as it is,
 * and the engine reaches it only through the client's mm (its
 * /proc/PID/mem, its regions) -- the NVMe host's bounce (nvme/host/bounce.c),
 * iov_iter, the timespec -- on any SQE a client may put in its ring.
 *
 * The client is a child process that only sleeps: it shares (MAP_SHARED)
 * the "client arena" with this process. After the fork this process moves
 * its view of the plain part elsewhere and leaves nothing readable at the
 * client's addresses, so the engine, which runs here, could reach the
 * client's memory only as ucmdd does: a direct dereference of a client
 * address is a fault (the fault guard's -EFAULT, or a crash), never the
 * client's data.
 *
 * Client arena (ARENA_SPAN bytes, the child's addresses):
 *   [0, 64K)      plain memory (reached by pid); iovecs at 0, raw bytes at 1K
 *   [64K, 128K)   a hole (PROT_NONE): bad addresses, and the plain part's end
 *   [128K, 160K)  region A (memfd shared with srv_region_add), laid out alike
 *   [160K, 192K)  region B, adjacent: a range over both is in no region
 *   [192K, 208K)  region C, retired (srv_region_del): reached by pid again
 *   [208K, 256K)  a hole
 * Registered files: ng0n1, empty, null, nvme0n1, nvme0 (the client's
 * numbers). Registered buffers, the client's ranges: one of the plain part,
 * one of region A (zero copy), one of the retired region, one at an odd
 * page offset (the engine has no empty slot but in a table registered all
 * empty).
 *
 * Input: byte 0 is the mode (bit 0: 128-byte SQEs; bit 1: every address
 * and length as the input has it, else mapped by fuzz_addr/fuzz_len into
 * the arena's parts and edges; bit 2: the client is dead at completion); bytes 1..128 the client's SQE (a 64-byte
 * ring uses the first 64); then up to 32 iovecs (16 bytes each) written to
 * both iovec tables, their bases and lengths mapped the same way, and the
 * same bytes unmapped at offset 1K (up to 1 KiB: a timespec, raw iovecs).
 *
 * Invariants: the engine runs it: exactly one CQE (CQE_SKIP_SUCCESS is
 * cleared: the check needs one), and the engine's bounces for the client
 * (bounce_bytes) are back to 0.
 * Timeouts are capped to 1 ms in the client's memory before they run, and
 * admin commands that never complete or take the driver's queues or
 * namespace away are not run (fuzz_nvme_cmd.c
 * skips the same).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvme/types.h>

#include "nvme/ctrl/ctrl.h"
#include "server/ring.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define KIB 1024u
#define ARENA_SPAN (256 * KIB)
#define PLAIN_OFF 0u
#define PLAIN_LEN (64 * KIB)
#define HOLE_OFF (64 * KIB)
#define RA_OFF (128 * KIB)
#define RA_LEN (32 * KIB)
#define RB_OFF (160 * KIB)
#define RB_LEN (32 * KIB)
#define RC_OFF (192 * KIB)
#define RC_LEN (16 * KIB)
#define NR_IOV 32u
#define DATA_OFF 1024u
#define DATA_LEN 1024u
#define NR_FTAB 5u
#define NR_BTAB 4u

static struct srv_daemon daemon_;
static struct srv_client client;
static int ftab[NR_FTAB];
/* the registered buffers: the client's ranges, as ring_reg.c registers them */
static struct iovec btab[NR_BTAB];
static struct ucmd_ring ring128, ring64;
static struct ucmd_ctrl *ctrl;
static struct ucmd_nvme_host *host;
static uint8_t *arena;		/* the client's addresses: nothing readable here after the fork */
static uint8_t *plain;		/* this process's view of the client's plain part */
static pid_t child;
static int ng_efd, ctrl_efd, bdev_efd, null_efd;

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "fuzz_daemon_sqe: %s\n", what);
	abort();
}

static uint64_t caddr(size_t off)
{
	return (uint64_t)(uintptr_t)(arena + off);
}

/* A memfd sealed against shrinking, mapped at the client's address, made a region. */
static void region(size_t off, size_t len, bool retire)
{
	int fd = memfd_create("fuzz-region", MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)len) || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) ||
	    mmap(arena + off, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
		    MAP_FAILED ||
	    srv_region_add(&client, fd, caddr(off), len) ||
	    (retire && srv_region_del(&client, caddr(off))))
		die("region set-up");
	close(fd);
}

/* The client's number cfd for the engine table's efd. */
static void install(int efd, int cfd)
{
	struct ucmd_file *f = fget(daemon_.e, efd), *old;

	if (!f || replace_fd(&client.files, cfd, f, &old) != cfd || old)
		die("install");
}

static void engine_ring(struct ucmd_ring *r, unsigned flags)
{
	struct io_uring_params p = { .flags = flags };
	struct iovec iov[NR_BTAB];

	if (ucmd_queue_init_engine(daemon_.e, 8, r, &p))
		die("engine ring");
	/* as ring.c's ring_setup: the client's ring */
	io_ring_set_task(r, &client.task);
	for (unsigned i = 0; i < NR_BTAB; i++)
		iov[i] = btab[i];
	if (ucmd_register_files(r, ftab, NR_FTAB) || ucmd_register_buffers(r, iov, NR_BTAB))
		die("engine ring registration");
}

static void setup(void)
{
	struct ucmd_ctrl_params cp = { .mdts = 5 };
	struct ucmd_ns_params np = { .nsze = 2048, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_host_opts ho = { .nr_io_queues = 1, .queue_depth = 16 };
	struct srv_client *c = &client;
	pid_t parent = getpid();
	int stale;

	/* the client's memory: shared with the child, so both see one content */
	arena = mmap(NULL, ARENA_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED ||
	    mmap(arena + PLAIN_OFF, PLAIN_LEN, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		die("arena");
	c->d = &daemon_;
	c->sock = -1;
	c->pidfd = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&daemon_.lock, NULL);
	if (srv_task_init(c))
		die("the client's task");
	region(RA_OFF, RA_LEN, false);
	region(RB_OFF, RB_LEN, false);
	region(RC_OFF, RC_LEN, true);

	/* before any thread: the child only sleeps, and dies with us */
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		for (;;)
			pause();
	}
	/*
	 * The client's plain memory, seen here elsewhere only (old size 0: a
	 * second mapping of the same shared pages); its addresses unreadable here.
	 */
	plain = mremap(arena + PLAIN_OFF, 0, PLAIN_LEN, MREMAP_MAYMOVE);
	if (plain == MAP_FAILED ||
	    mmap(arena, ARENA_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
		die("moving the arena out of the engine's reach");
	c->pid = child;
	current_cred(&c->cred);
	if (user_mm_init_remote(&c->mm, child))
		die("the child's /proc/PID/mem");

	daemon_.e = ucmd_engine_new();
	if (!daemon_.e || ucmd_ctrl_create(&cp, &ctrl) || ucmd_ctrl_ns_create(ctrl, &np) <= 0 ||
	    ucmd_nvme_attach(daemon_.e, ctrl, &ho, &host))
		die("engine and controller");
	ng_efd = ucmd_open(daemon_.e, "ng0n1", O_RDWR);
	ctrl_efd = ucmd_open(daemon_.e, "nvme0", O_RDWR);
	bdev_efd = ucmd_open(daemon_.e, "nvme0n1", O_RDWR);
	null_efd = ucmd_open(daemon_.e, "null", O_RDWR);
	/* a number the client held and closed: its table names nothing there */
	stale = ucmd_open(daemon_.e, "null", O_RDWR);
	if (ng_efd < 0 || ctrl_efd < 0 || bdev_efd < 0 || null_efd < 0 || stale < 0)
		die("open");
	/*
	 * The client's own table, numbered unlike the engine's (this thread
	 * acts for no task: the opens went to the engine's table). From here
	 * on the *_efd names hold the client's numbers, which the engine
	 * resolves in that table.
	 */
	install(ng_efd, 3);
	install(ctrl_efd, 4);
	install(bdev_efd, 5);
	install(null_efd, 6);
	install(stale, 7);
	if (close_fd(&c->files, 7))
		die("close");
	ng_efd = 3, ctrl_efd = 4, bdev_efd = 5, null_efd = 6;

	ftab[0] = ng_efd;
	ftab[1] = -1;
	ftab[2] = null_efd;
	ftab[3] = bdev_efd;
	ftab[4] = ctrl_efd;
	btab[0] = (struct iovec){ arena + PLAIN_OFF + 8 * KIB, 16 * KIB };
	btab[1] = (struct iovec){ arena + RA_OFF + 4 * KIB, 16 * KIB };	/* a region's: zero copy */
	/* a retired region's range is the client's plain memory again */
	btab[2] = (struct iovec){ arena + RC_OFF, 8 * KIB };
	btab[3] = (struct iovec){ arena + PLAIN_OFF + 32 * KIB + 100, 5000 };

	engine_ring(&ring128, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	engine_ring(&ring64, 0);
}

/* An address field: the arena's parts and edges, or impossible ones, by its top bits. */
static uint64_t fuzz_addr(uint64_t v)
{
	uint64_t off = v & ((1ull << 61) - 1);

	switch (v >> 61) {
	case 0:
	case 1:
		return caddr(PLAIN_OFF + off % PLAIN_LEN);
	case 2:
		return caddr(RA_OFF + off % (RA_LEN + RB_LEN + RC_LEN));
	case 3:
		return caddr(HOLE_OFF + off % (64 * KIB));
	case 4:
		return off & 0xffff;				/* NULL and the zero page */
	case 5:
		return caddr(PLAIN_OFF + PLAIN_LEN - off % (8 * KIB));	/* runs into the hole */
	case 6:
		if (off & 1)
			return UINT64_MAX - ((off >> 1) & 0xffff);	/* wraps */
		return UCMD_TASK_SIZE - ((off >> 1) & 0xfffff);
	default:
		return off;	/* anywhere: the child's memory, or none */
	}
}

static uint32_t fuzz_len(uint32_t v)
{
	return (v >> 28) == 0xf ? v : v % (96 * KIB);
}

static uint32_t fuzz_nr(uint32_t v)
{
	return (v >> 28) == 0xf ? v : v % (NR_IOV + 8);
}

static bool nvme_cmd_op(uint32_t op)
{
	return op == NVME_URING_CMD_IO || op == NVME_URING_CMD_IO_VEC ||
	       op == NVME_URING_CMD_ADMIN || op == NVME_URING_CMD_ADMIN_VEC;
}

static bool vec_op(uint32_t op)
{
	return op == NVME_URING_CMD_IO_VEC || op == NVME_URING_CMD_ADMIN_VEC;
}

/* The client's SQE from the input, its addresses and lengths mapped unless raw. */
static void client_sqe(struct io_uring_sqe *sqe, bool sqe128, bool raw)
{
	struct nvme_uring_cmd u;

	if (sqe128 && sqe->opcode == IORING_OP_URING_CMD) {
		memcpy(&u, sqe->cmd, sizeof(u));
		/* the driver's own timeout would abort and reset: not translation */
		u.timeout_ms = 0;
		if (!raw) {
			u.addr = fuzz_addr(u.addr);
			u.data_len = vec_op(sqe->cmd_op) ? fuzz_nr(u.data_len) : fuzz_len(u.data_len);
			u.metadata = fuzz_addr(u.metadata);
			u.metadata_len = fuzz_len(u.metadata_len);
		}
		memcpy(sqe->cmd, &u, sizeof(u));
		return;
	}
	if (raw)
		return;
	switch (sqe->opcode) {
	case IORING_OP_READV:
	case IORING_OP_WRITEV:
		sqe->addr = fuzz_addr(sqe->addr);
		sqe->len = fuzz_nr(sqe->len);
		break;
	case IORING_OP_READ:
	case IORING_OP_WRITE:
	case IORING_OP_READ_FIXED:
	case IORING_OP_WRITE_FIXED:
		sqe->addr = fuzz_addr(sqe->addr);
		sqe->len = fuzz_len(sqe->len);
		break;
	case IORING_OP_TIMEOUT:
	case IORING_OP_LINK_TIMEOUT:
		sqe->addr = fuzz_addr(sqe->addr);
		break;
	default:
		break;
	}
}

/*
 * What the client's memory holds: an iovec table at the start of the plain
 * part and of region A, built from the input's entries, and the same bytes
 * as they are at DATA_OFF in both (a timespec, a table of raw iovecs).
 */
static void client_mem(const uint8_t *in, size_t size, bool raw)
{
	struct iovec iov[NR_IOV];
	size_t n = size < DATA_LEN ? size : DATA_LEN;

	memset(iov, 0, sizeof(iov));
	for (unsigned i = 0; i < NR_IOV && 16 * (i + 1) <= size; i++) {
		uint64_t base, len;

		memcpy(&base, in + 16 * i, 8);
		memcpy(&len, in + 16 * i + 8, 8);
		if (!raw) {
			base = fuzz_addr(base);
			len = (len >> 60) == 0xf ? len : len % (96 * KIB);
		}
		iov[i].iov_base = (void *)(uintptr_t)base;
		iov[i].iov_len = len;
	}
	for (int k = 0; k < 2; k++) {
		/* written where this process sees the client's memory */
		uint8_t *p = k ? srv_region_lookup(&client, caddr(RA_OFF), RA_LEN) : plain;

		memcpy(p, iov, sizeof(iov));
		memset(p + DATA_OFF, 0, DATA_LEN);
		memcpy(p + DATA_OFF, in, n);
	}
}

/* ---- what runs ---- */

/* The client's number the SQE names (its fixed file's), or -1. */
static int target_efd(const struct io_uring_sqe *sqe)
{
	if (sqe->flags & IOSQE_FIXED_FILE)
		return (unsigned)sqe->fd < NR_FTAB ? ftab[sqe->fd] : -1;
	return sqe->fd;
}

/* What the engine must not run here (see the top of the file). */
static bool skipped(bool sqe128, const struct io_uring_sqe *sqe)
{
	const struct nvme_uring_cmd *u = (const void *)sqe->cmd;

	if (sqe->opcode != IORING_OP_URING_CMD || !sqe128 || target_efd(sqe) != ctrl_efd ||
	    !nvme_cmd_op(sqe->cmd_op))
		return false;
	return u->opcode == nvme_admin_async_event || u->opcode == nvme_admin_create_sq ||
	       u->opcode == nvme_admin_create_cq || u->opcode == nvme_admin_delete_sq ||
	       u->opcode == nvme_admin_delete_cq || u->opcode == nvme_admin_ns_mgmt ||
	       u->opcode == nvme_admin_ns_attach;
}

/*
 * TIMEOUT / LINK_TIMEOUT: at most 1 ms, so that a run never waits for the
 * client's; written in the client's memory, where the engine reads it.
 * False when it cannot be capped (readable, not writeable: the child's
 * text, say), and the request is then released, not run.
 */
static bool cap_timeout(const struct io_uring_sqe *sqe)
{
	struct __kernel_timespec ts;

	if (user_mm_copy_from(&client.task_mm, &ts, sqe->addr, sizeof(ts)))
		return true;	/* the engine's -EFAULT */
	if (ts.tv_sec < 0 || ts.tv_nsec < 0)
		return true;	/* the engine's -EINVAL */
	if (!ts.tv_sec && ts.tv_nsec <= 1000000)
		return true;
	ts = (struct __kernel_timespec){ .tv_sec = 0, .tv_nsec = 1000000 };
	return !user_mm_copy_to(&client.task_mm, sqe->addr, &ts, sizeof(ts));
}

static int32_t run(struct ucmd_ring *r, const struct io_uring_sqe *csqe, size_t size)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);
	struct io_uring_cqe *cqe;
	int32_t res;

	if (!sqe)
		die("engine ring full");
	memcpy(sqe, csqe, size);
	sqe->user_data = 0;
	if (ucmd_submit_and_wait(r, 1) != 1 || ucmd_wait_cqe(r, &cqe))
		die("engine submit");
	if (cqe->user_data != 0)
		die("a CQE for no request");
	res = cqe->res;
	ucmd_cqe_seen(r, cqe);
	if (ucmd_peek_cqe(r, &cqe) != -EAGAIN)
		die("a second CQE");
	return res;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	_Alignas(64) unsigned char cb[128];
	struct io_uring_sqe *csqe = (struct io_uring_sqe *)(void *)cb;
	bool raw, sqe128;

	if (!daemon_.e)
		setup();
	if (size < 1)
		return 0;
	sqe128 = in[0] & 1;
	raw = in[0] & 2;
	/* a client gone while its request ran: the completion writes it nothing */
	atomic_store(&client.dead, (in[0] & 4) != 0);
	in++;
	size--;
	memset(cb, 0, sizeof(cb));
	memcpy(cb, in, size < sizeof(cb) ? size : sizeof(cb));
	if (!sqe128)
		memset(cb + 64, 0, 64);
	in += size < sizeof(cb) ? size : sizeof(cb);
	size -= size < sizeof(cb) ? size : sizeof(cb);
	client_sqe(csqe, sqe128, raw);
	client_mem(in, size, raw);
	if (waitpid(child, NULL, WNOHANG) != 0)
		die("the client process died");
	/* one CQE per SQE is what is checked */
	csqe->flags &= (uint8_t)~IOSQE_CQE_SKIP_SUCCESS;
	if (!skipped(sqe128, csqe) &&
	    !((csqe->opcode == IORING_OP_TIMEOUT || csqe->opcode == IORING_OP_LINK_TIMEOUT) &&
	      !cap_timeout(csqe)))
		(void)run(sqe128 ? &ring128 : &ring64, csqe, sqe128 ? 128 : 64);
	if (atomic_load(&client.bounce_bytes))
		die("bounce bytes held after the request");
	return 0;
}
