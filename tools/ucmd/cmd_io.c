/* SPDX-License-Identifier: MIT */
/* I/O commands in nvme-cli's shape: read, write, flush, io-/admin-passthru. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvme/types.h>

#include "args.h"
#include "cli.h"

static int read_whole(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

static int write_whole(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* read/write: -s SLBA -c NLB(0-based) -z SIZE -d FILE [-f] */
static int do_rw(struct cli *cli, int argc, char **argv, uint8_t opcode)
{
	bool write = opcode != nvme_cmd_read;
	struct rw_args a;
	int ret = 1, fd = -1;
	const char *what = opcode == nvme_cmd_read ? "read" : opcode == nvme_cmd_write ? "write" : "compare";

	if (rw_args_parse(&a, argc, argv))
		goto bad;
	uint64_t slba = a.slba, size = a.size;
	uint32_t nlb = a.nlb;
	const char *path = a.path;
	bool fua = a.fua;
	if (!cli->s.lba_size) {
		fprintf(stderr, "%s: namespace %u is not active\n", what, cli->s.nsid);
		return 1;
	}
	uint64_t need = (uint64_t)(nlb + 1) * cli->s.lba_size;
	if (!size)
		size = need;
	if (size < need || size > (64u << 20)) {
		fprintf(stderr, "%s: --data-size %" PRIu64 " must hold %u blocks of %u bytes "
			"(%" PRIu64 ") and be at most 64 MiB\n", what, size, nlb + 1,
			cli->s.lba_size, need);
		return 1;
	}
	/* the engine's own I/O memory: shared with the daemon, so no copy there */
	void *buf = ucmd_buf_alloc(cli->s.e, size);
	if (!buf) {
		print_status_error(what, -errno);
		return 1;
	}
	if (write) {
		fd = path ? open(path, O_RDONLY) : STDIN_FILENO;
		if (fd < 0 || read_whole(fd, buf, need)) {
			fprintf(stderr, "%s: cannot read %" PRIu64 " bytes from %s\n", what, need,
				path ? path : "stdin");
			goto out;
		}
	}
	struct nvme_uring_cmd cmd = { 0 };
	cmd.opcode = opcode;
	cmd.nsid = cli->s.nsid;
	cmd.addr = (uint64_t)(uintptr_t)buf;
	cmd.data_len = (uint32_t)need;
	cmd.cdw10 = (uint32_t)slba;
	cmd.cdw11 = (uint32_t)(slba >> 32);
	cmd.cdw12 = nlb | (fua ? 1u << 30 : 0);
	int res = session_passthru(&cli->s, false, &cmd, NULL);
	if (res) {
		print_status_error(what, res);
		goto out;
	}
	if (!write) {
		if (fd >= 0 && fd != STDIN_FILENO)
			close(fd);
		fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : STDOUT_FILENO;
		if (fd < 0 || write_whole(fd, buf, need)) {
			fprintf(stderr, "read: cannot write to %s\n", path ? path : "stdout");
			goto out;
		}
	} else {
		fprintf(stderr, "%s: Success\n", what);
	}
	ret = 0;
out:
	if (fd > STDERR_FILENO)
		close(fd);
	ucmd_buf_free(cli->s.e, buf);
	return ret;
bad:
	fprintf(stderr, "usage: ucmd %s -s SLBA -c NLB(0-based) [-z SIZE] [-d FILE] [-f]\n", what);
	return 1;
}

int cmd_read(struct cli *cli, int argc, char **argv)
{
	return do_rw(cli, argc, argv, nvme_cmd_read);
}

int cmd_write(struct cli *cli, int argc, char **argv)
{
	return do_rw(cli, argc, argv, nvme_cmd_write);
}

int cmd_compare(struct cli *cli, int argc, char **argv)
{
	return do_rw(cli, argc, argv, nvme_cmd_compare);
}

int cmd_flush(struct cli *cli, int argc, char **argv)
{
	struct nvme_uring_cmd cmd = { .opcode = nvme_cmd_flush, .nsid = cli->s.nsid };

	(void)argc;
	(void)argv;
	int res = session_passthru(&cli->s, false, &cmd, NULL);
	if (res) {
		print_status_error("flush", res);
		return 1;
	}
	fprintf(stderr, "NVMe Flush: success\n");
	return 0;
}

/* nvme-cli's io-passthru / admin-passthru options */
static int do_passthru(struct cli *cli, int argc, char **argv, bool admin)
{
	struct passthru_args a;
	const char *what = admin ? "admin-passthru" : "io-passthru";
	int ret = 1;

	if (passthru_args_parse(&a, argc, argv))
		goto bad;
	struct nvme_uring_cmd cmd = a.cmd;
	bool rd = a.rd, wr = a.wr, raw = a.raw;
	const char *in = a.in;
	if (!a.have_nsid)
		cmd.nsid = admin ? 0 : cli->s.nsid;
	void *buf = NULL;
	if (cmd.data_len) {
		buf = aligned_alloc(4096, ((size_t)cmd.data_len + 4095) & ~(size_t)4095);
		if (!buf)
			return 1;
		memset(buf, 0, cmd.data_len);
		cmd.addr = (uint64_t)(uintptr_t)buf;
	}
	if (wr && buf) {
		int fd = in ? open(in, O_RDONLY) : STDIN_FILENO;
		if (fd < 0 || read_whole(fd, buf, cmd.data_len)) {
			fprintf(stderr, "%s: cannot read %u bytes of input\n", what, cmd.data_len);
			free(buf);
			return 1;
		}
		if (fd != STDIN_FILENO)
			close(fd);
	}
	uint64_t result = 0;
	int res = session_passthru(&cli->s, admin, &cmd, &result);
	if (res) {
		print_status_error(what, res);
		goto out;
	}
	if (cli->fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "opcode", json_object_new_int(cmd.opcode));
		json_object_object_add(o, "result", json_object_new_int64((int64_t)result));
		json_print(o);
	} else {
		fprintf(stderr, "NVMe command result:%08" PRIx64 "\n", result);
	}
	if (rd && buf) {
		if (raw) {
			write_whole(STDOUT_FILENO, buf, cmd.data_len);
		} else {
			const uint8_t *b = buf;
			for (uint32_t i = 0; i < cmd.data_len; i += 16) {
				printf("%04x:", i);
				for (uint32_t j = i; j < i + 16 && j < cmd.data_len; j++)
					printf(" %02x", b[j]);
				printf("\n");
			}
		}
	}
	ret = 0;
out:
	free(buf);
	return ret;
bad:
	fprintf(stderr, "usage: ucmd %s --opcode=OP [--namespace-id=N] [--data-len=L] "
		"[--cdw2..--cdw15=V] [--timeout=MS] [--read|--write [--input-file=F]] [--raw-binary]\n",
		what);
	return 1;
}

int cmd_io_passthru(struct cli *cli, int argc, char **argv)
{
	return do_passthru(cli, argc, argv, false);
}

int cmd_admin_passthru(struct cli *cli, int argc, char **argv)
{
	return do_passthru(cli, argc, argv, true);
}
