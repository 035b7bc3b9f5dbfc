/* SPDX-License-Identifier: MIT */
/*
 * mpath_workload URL,URL DIR: ucmd's host on two NVMe/TCP paths of one
 * subsystem (ucmd_nvme_attach_tcp_multipath), writing 4 KiB blocks
 * 0..NBLK-1 through the head's block device nvme0n1 over and over, one at
 * a time, each a pattern of its sequence number, printing "acked N" after
 * each 50th acknowledged write, until DIR/stop exists. The shell changes
 * the ports' ANA states meanwhile.
 * mpath_workload URL,URL DIR qd=N [bs=B]: the same with N writes always in
 * flight (a new one as each is acknowledged), never two on one block at
 * once; blocks of B bytes (a multiple of 4096) instead of 4 KiB.
 * mpath_workload URL,URL DIR no-path: with both ports inaccessible, waits
 * until the host knows both paths so, then sends a passthrough Read on the
 * head's ng0n1 as a uring_cmd and as an ioctl and prints their results
 * ("passthru uring_cmd -22 ioctl -11": Linux's -EINVAL and -EWOULDBLOCK),
 * then issues a block read, prints "queued" and waits for it (the shell
 * brings a port back): "queued read: 4096", then the ANA Change notices
 * each path's controller sent meanwhile: "notices A1 A2".
 * At the end it reads every block back through nvme0n1 and checks it holds
 * the last acknowledged write; prints "verified N blocks after M writes,
 * path1 D1 path2 D2 failovers F ana-notices A1 A2" (the ANA Change notices
 * each path's controller sent). Exit 0 when all is intact; 3 when a
 * write fails; 4 when a block reads back wrong; 5 when the passthrough
 * step goes otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ucmd/nvme.h"
#include "ucmd/uapi/nvme_ioctl.h"
#include "ucmd/ucmd.h"

#define NBLK	256u
/* bytes per block: 4096, or bs=N (a multiple of 4096) */
static uint32_t BS = 4096u;

static struct ucmd_ring ring;

static void pattern(uint8_t *b, uint64_t seq)
{
	for (unsigned i = 0; i < BS; i += 8) {
		uint64_t v = seq * 0x9e3779b97f4a7c15ull + i;

		memcpy(b + i, &v, 8);
	}
}

static int submit_rw(int fd, int op, uint8_t *buf, uint32_t blk)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);

	if (!sqe)
		return -EBUSY;
	ucmd_prep_rw(op, sqe, fd, buf, BS, (uint64_t)blk * BS);
	return ucmd_submit(&ring) == 1 ? 0 : -EIO;
}

static int wait_res(void)
{
	struct io_uring_cqe *cqe;
	int ret = ucmd_wait_cqe(&ring, &cqe);

	if (ret)
		return ret;
	ret = cqe->res;
	ucmd_cqe_seen(&ring, cqe);
	return ret;
}

static int rw(int fd, int op, uint8_t *buf, uint32_t blk)
{
	int ret = submit_rw(fd, op, buf, blk);

	return ret ? ret : wait_res();
}

static bool exists(const char *dir, const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* Both paths inaccessible as the host sees them: the passthrough errors, a queued write. */
static int no_path_step(struct ucmd_engine *e, struct ucmd_nvme_subsys *s, int bdev, int ng,
			uint8_t *buf)
{
	struct ucmd_nvme_path_info a, b;
	struct nvme_uring_cmd c = { .opcode = 0x02, .nsid = 1, .addr = (uint64_t)(uintptr_t)buf,
				    .data_len = BS, .cdw12 = 0 };
	struct nvme_passthru_cmd64 p = { .opcode = 0x02, .nsid = 1,
					 .addr = (uint64_t)(uintptr_t)buf, .data_len = BS,
					 .cdw12 = 0 };
	struct io_uring_sqe *sqe;
	int r1, r2;

	for (int i = 0; i < 500; i++) {
		if (!ucmd_nvme_subsys_path_info(s, 1, 0, &a) &&
		    !ucmd_nvme_subsys_path_info(s, 1, 1, &b) && a.ana_state == 3 && b.ana_state == 3)
			break;
		usleep(10000);
	}
	if (a.ana_state != 3 || b.ana_state != 3) {
		printf("the host did not see both paths inaccessible: %u %u\n", a.ana_state,
		       b.ana_state);
		return 5;
	}
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nvme_cmd(sqe, ng, NVME_URING_CMD_IO, &c);
	ucmd_submit(&ring);
	r1 = wait_res();
	r2 = ucmd_ioctl(e, ng, NVME_IOCTL_IO64_CMD, &p);
	printf("passthru uring_cmd %d ioctl %d\n", r1, r2);
	if (submit_rw(bdev, IORING_OP_READ, buf, 0))
		return 5;
	printf("queued\n");
	r1 = wait_res();
	printf("queued read: %d\n", r1);
	ucmd_nvme_subsys_path_info(s, 1, 0, &a);
	ucmd_nvme_subsys_path_info(s, 1, 1, &b);
	printf("notices %lu %lu\n", a.ana_aens, b.ana_aens);
	return r1 == (int)BS ? 0 : 5;
}

int main(int argc, char **argv)
{
	struct ucmd_nvme_host_opts ho = { 0 };
	struct ucmd_nvme_subsys *s;
	struct ucmd_nvme_path_info i1, i2;
	struct io_uring_params prm = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct ucmd_engine *e;
	const char *urls[2];
	char *list, *comma;
	uint8_t *buf, *want;
	static uint64_t last[NBLK];
	uint64_t seq;
	int bdev, ng, ret, bad = 0;
	unsigned qd = 1;
	uint8_t *bufs = NULL;
	uint64_t slot_seq[32], acked = 0;

	/* qd=N and bs=N after DIR, in this order */
	if (argc == 5 && !strncmp(argv[4], "bs=", 3)) {
		BS = (uint32_t)atoi(argv[4] + 3);
		argc = 4;
		if (!BS || BS % 4096 || BS > (1u << 20))
			return 2;
	}
	if (argc == 4 && !strncmp(argv[3], "qd=", 3)) {
		qd = (unsigned)atoi(argv[3] + 3);
		argc = 3;
	}
	if ((argc != 3 && !(argc == 4 && !strcmp(argv[3], "no-path"))) || !qd || qd > 32) {
		fprintf(stderr, "usage: mpath_workload URL,URL DIR [no-path|qd=1..32]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	list = strdup(argv[1]);
	comma = strchr(list, ',');
	if (!comma)
		return 2;
	*comma = 0;
	urls[0] = list;
	urls[1] = comma + 1;
	e = ucmd_engine_new();
	if (!e || ucmd_nvme_attach_tcp_multipath(e, urls, 2, &ho, NULL, &s) < 0) {
		fprintf(stderr, "mpath_workload: attach: %s\n", ucmd_last_error());
		return 1;
	}
	if (ucmd_queue_init_engine(e, 64, &ring, &prm))
		return 1;
	bdev = ucmd_open(e, "nvme0n1", O_RDWR);
	ng = ucmd_open(e, "ng0n1", O_RDWR);
	if (bdev < 0 || ng < 0) {
		fprintf(stderr, "mpath_workload: nvme0n1/ng0n1: %s\n", strerror(-(bdev < 0 ? bdev : ng)));
		return 1;
	}
	buf = aligned_alloc(4096, BS);
	want = aligned_alloc(4096, BS);
	if (argc == 4)
		seq = 0, bad = no_path_step(e, s, bdev, ng, buf);
	bufs = aligned_alloc(4096, (size_t)BS * qd);
	for (unsigned k = 0; k < 32; k++)
		slot_seq[k] = UINT64_MAX;
	/* qd > 1: a window of qd writes always in flight, to blocks none of the others is on */
	unsigned inflight = 0;
	static bool busy[NBLK];
	seq = 0;
	for (bool stop = false; argc == 3 && qd > 1 && !bad && (!stop || inflight);) {
		while (!stop && inflight < qd) {
			unsigned k = 0;
			struct io_uring_sqe *sqe;

			while (k < qd && slot_seq[k] != UINT64_MAX)
				k++;
			while (busy[seq % NBLK])
				seq++;
			pattern(bufs + (size_t)k * BS, seq);
			sqe = ucmd_get_sqe(&ring);
			ucmd_prep_rw(IORING_OP_WRITE, sqe, bdev, bufs + (size_t)k * BS, BS,
				     (uint64_t)(seq % NBLK) * BS);
			sqe->user_data = k;
			if (ucmd_submit(&ring) != 1) {
				bad = 3;
				break;
			}
			slot_seq[k] = seq;
			busy[seq % NBLK] = true;
			inflight++;
			seq++;
		}
		if (bad)
			break;
		struct io_uring_cqe *cqe;

		ret = ucmd_wait_cqe(&ring, &cqe);
		if (ret)
			break;
		unsigned k = (unsigned)cqe->user_data;
		ret = cqe->res;
		ucmd_cqe_seen(&ring, cqe);
		if (ret != (int)BS) {
			printf("write %llu: %s (%d)\n", (unsigned long long)slot_seq[k],
			       ret < 0 ? strerror(-ret) : "short", ret);
			bad = 3;
			break;
		}
		last[slot_seq[k] % NBLK] = slot_seq[k];
		busy[slot_seq[k] % NBLK] = false;
		if (++acked % 50 == 0) {
			/* and the requests each path has carried so far */
			ucmd_nvme_subsys_path_info(s, 1, 0, &i1);
			ucmd_nvme_subsys_path_info(s, 1, 1, &i2);
			printf("acked %llu path1 %lu path2 %lu ana %u %u failovers %lu\n",
			       (unsigned long long)acked, i1.dispatched, i2.dispatched, i1.ana_state,
			       i2.ana_state, i1.failovers);
		}
		slot_seq[k] = UINT64_MAX;
		inflight--;
		stop = exists(argv[2], "stop");
	}
	for (; argc == 3 && qd == 1 && !exists(argv[2], "stop"); seq++) {
		pattern(buf, seq);
		ret = rw(bdev, IORING_OP_WRITE, buf, (uint32_t)(seq % NBLK));
		if (ret != (int)BS) {
			printf("write %llu: %s (%d)\n", (unsigned long long)seq,
			       ret < 0 ? strerror(-ret) : "short", ret);
			bad = 3;
			break;
		}
		last[seq % NBLK] = seq;
		if (seq % 50 == 0)
			printf("acked %llu\n", (unsigned long long)seq);
	}
	for (uint32_t b = 0; !bad && b < NBLK && b < seq; b++) {
		pattern(want, last[b]);
		ret = rw(bdev, IORING_OP_READ, buf, b);
		if (ret != (int)BS || memcmp(buf, want, BS)) {
			printf("block %u: %s (%d)\n", b, ret != (int)BS ? "read failed" :
			       "not the last acked write", ret);
			bad = 4;
		}
	}
	ucmd_nvme_subsys_path_info(s, 1, 0, &i1);
	ucmd_nvme_subsys_path_info(s, 1, 1, &i2);
	if (!bad && argc == 3)
		printf("verified %u blocks after %llu writes, path1 %lu path2 %lu failovers %lu "
		       "ana-notices %lu %lu\n",
		       NBLK < seq ? NBLK : (unsigned)seq, (unsigned long long)seq, i1.dispatched,
		       i2.dispatched, i1.failovers, i1.ana_aens, i2.ana_aens);
	ucmd_close(e, bdev);
	ucmd_close(e, ng);
	ucmd_queue_exit(&ring);
	ucmd_nvme_subsys_detach(s);
	ucmd_engine_free(e);
	free(list);
	free(buf);
	free(bufs);
	free(want);
	printf("detached\n");
	return bad;
}
