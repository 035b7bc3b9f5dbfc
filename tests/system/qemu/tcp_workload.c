/* SPDX-License-Identifier: MIT */
/*
 * tcp_workload URL STOPFILE: one ucmd host on an NVMe/TCP controller
 * (ucmd_nvme_attach_tcp, the URL's reconnect options) writing 512-byte
 * blocks 0..NBLK-1 of namespace 1 over and over, one at a time, each
 * write a pattern of its sequence number, until STOPFILE exists. After
 * each acknowledged write it prints "acked N" (the shell watches these to
 * kill and restart the target while writes run). Then it reads every
 * block back on the same association and checks it holds the last write
 * acknowledged for it. A write that fails ends the run: "write N: ERROR",
 * exit 3 (after the detach, which must not hang either). Exit 0 when every
 * block reads back intact, 4 when one does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ucmd/nvme.h"
#include "ucmd/uapi/nvme_ioctl.h"
#include "ucmd/ucmd.h"

#define NBLK	256u
#define BS	512u

static void pattern(uint8_t *b, uint64_t seq)
{
	for (unsigned i = 0; i < BS; i += 8) {
		uint64_t v = seq * 0x9e3779b97f4a7c15ull + i;

		memcpy(b + i, &v, 8);
	}
}

static int rw(struct ucmd_engine *e, int fd, uint8_t opc, uint32_t lba, uint8_t *buf)
{
	struct nvme_passthru_cmd64 c = {
		.opcode = opc, .nsid = 1, .addr = (uint64_t)(uintptr_t)buf, .data_len = BS,
		.cdw10 = lba, .cdw11 = 0, .cdw12 = 0,	/* one block */
	};
	int ret = ucmd_ioctl(e, fd, NVME_IOCTL_IO64_CMD, &c);

	return ret;	/* -errno, or the NVMe status */
}

int main(int argc, char **argv)
{
	struct ucmd_nvme_host_opts ho = { .instance = 0 };
	struct ucmd_nvme_host *h;
	struct ucmd_nvme_tcp_info info;
	struct ucmd_engine *e;
	static uint8_t buf[BS] __attribute__((aligned(4096))), want[BS];
	uint64_t last[NBLK], seq;
	int fd, ret, bad = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: tcp_workload URL STOPFILE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	e = ucmd_engine_new();
	if (!e || ucmd_nvme_attach_tcp(e, argv[1], &ho, NULL, &h) < 0) {
		fprintf(stderr, "tcp_workload: attach: %s\n", ucmd_last_error());
		return 1;
	}
	fd = ucmd_open(e, "ng0n1", O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "tcp_workload: ng0n1: %s\n", strerror(-fd));
		return 1;
	}
	for (seq = 0; access(argv[2], F_OK); seq++) {
		pattern(buf, seq);
		ret = rw(e, fd, 0x01, (uint32_t)(seq % NBLK), buf);
		if (ret) {
			printf("write %llu: %s (%d)\n", (unsigned long long)seq,
			       ret < 0 ? strerror(-ret) : "NVMe status", ret);
			bad = 3;
			break;
		}
		last[seq % NBLK] = seq;
		printf("acked %llu\n", (unsigned long long)seq);
	}
	for (uint32_t b = 0; !bad && b < NBLK && b < seq; b++) {
		pattern(want, last[b]);
		ret = rw(e, fd, 0x02, b, buf);
		if (ret || memcmp(buf, want, BS)) {
			printf("block %u: %s\n", b, ret ? "read failed" : "not the last acked write");
			bad = 4;
		}
	}
	ucmd_nvme_tcp_info(h, &info);
	if (!bad)
		printf("verified %u blocks after %llu writes, %lu reconnects\n",
	       NBLK < seq ? NBLK : (unsigned)seq, (unsigned long long)seq, info.reconnects);
	ucmd_close(e, fd);
	ucmd_nvme_detach(h);
	ucmd_engine_free(e);
	printf("detached\n");
	return bad;
}
