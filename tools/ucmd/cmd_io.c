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

/* -v / -s: the command as nvme-cli's --show-command prints it */
static void show_command(const struct nvme_uring_cmd *c)
{
	fprintf(stderr, "opcode       : %02x\nflags        : %02x\nnsid         : %08x\n"
		"addr         : %" PRIx64 "\ndata_len     : %08x\ncdw2         : %08x\n"
		"cdw3         : %08x\ncdw10        : %08x\ncdw11        : %08x\n"
		"cdw12        : %08x\ncdw13        : %08x\ncdw14        : %08x\n"
		"cdw15        : %08x\ntimeout_ms   : %08x\n", c->opcode, c->flags, c->nsid,
		(uint64_t)c->addr, c->data_len, c->cdw2, c->cdw3, c->cdw10, c->cdw11, c->cdw12,
		c->cdw13, c->cdw14, c->cdw15, c->timeout_ms);
}

/* Metadata to or from the --metadata file: short input is zero-padded */
static int meta_file(const char *path, void *buf, size_t len, bool in)
{
	int fd = open(path, in ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	if (in) {
		while (n >= 0 && (size_t)n < len) {
			ssize_t r = read(fd, (char *)buf + n, len - (size_t)n);

			if (r <= 0) {
				n = r < 0 ? -1 : n;
				break;
			}
			n += r;
		}
	} else {
		n = write_whole(fd, buf, len) ? -1 : 0;
	}
	close(fd);
	return n < 0 ? -EIO : 0;
}

/* read/write: -s SLBA -c NLB(0-based) -z SIZE -d FILE [-M FILE] [-f] [PI] */
static int do_rw(struct cli *cli, uint8_t opcode)
{
	bool write = opcode != nvme_cmd_read;
	const struct cmd_args *a = &cli->a;
	int ret = 1, fd = -1;
	const char *what = opcode == nvme_cmd_read ? "read" : opcode == nvme_cmd_write ? "write" : "compare";
	uint64_t slba = a->slba, size = a->data_size;
	uint32_t nlb = a->nlb;
	const char *path = a->data;
	bool fua = a->fua;
	void *mbuf = NULL;
	if (!cli->s.lba_size) {
		fprintf(stderr, "%s: namespace %u is not active\n", what, cli->s.nsid);
		return 1;
	}
	/*
	 * The metadata travels in the data (extended LBAs) or its own buffer,
	 * except that with PRACT a metadata that is the tuple alone does not
	 * travel at all (the controller inserts and strips it)
	 */
	unsigned ms = cli->s.meta_size;
	bool no_md = ms && (a->prinfo & 0x8) && ms == cli_pi_tuple_size(cli);
	uint64_t mlen = ms && !no_md && !cli->s.extended ? (uint64_t)(nlb + 1) * ms : 0;
	uint64_t need = (uint64_t)(nlb + 1) * (cli->s.lba_size + (cli->s.extended && !no_md ? ms : 0));
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
	if (cli_pi_fields(cli, what, &cmd)) {
		ret = 2;
		goto out;
	}
	if (mlen) {
		mbuf = cli_zalloc(mlen);
		if (!mbuf)
			goto out;
		if (write && a->metadata && meta_file(a->metadata, mbuf, mlen, true)) {
			fprintf(stderr, "%s: cannot read metadata from %s\n", what, a->metadata);
			goto out;
		}
		cmd.metadata = (uint64_t)(uintptr_t)mbuf;
		cmd.metadata_len = (uint32_t)mlen;
	}
	if (a->show_cmd)
		show_command(&cmd);
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
		if (mbuf && a->metadata && meta_file(a->metadata, mbuf, mlen, false)) {
			fprintf(stderr, "read: cannot write metadata to %s\n", a->metadata);
			goto out;
		}
	} else {
		fprintf(stderr, "%s: Success\n", what);
	}
	ret = 0;
out:
	if (fd > STDERR_FILENO)
		close(fd);
	free(mbuf);
	ucmd_buf_free(cli->s.e, buf);
	return ret;
}

int cmd_read(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return do_rw(cli, nvme_cmd_read);
}

int cmd_write(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return do_rw(cli, nvme_cmd_write);
}

int cmd_compare(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return do_rw(cli, nvme_cmd_compare);
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
static int do_passthru(struct cli *cli, bool admin)
{
	const struct cmd_args *a = &cli->a;
	const char *what = admin ? "admin-passthru" : "io-passthru";
	struct nvme_uring_cmd cmd = { 0 };
	void *buf = NULL;
	int ret = 1;

	if (a->rd && a->wr) {
		fprintf(stderr, "%s: --read and --write exclude each other\n", what);
		return 2;
	}
	cmd.opcode = (uint8_t)a->opcode;
	cmd.flags = (uint8_t)a->flags;
	cmd.nsid = a->nsid_given ? a->nsid : admin ? 0 : cli->s.nsid;
	cmd.data_len = a->data_len;
	cmd.timeout_ms = a->timeout;
	cmd.cdw2 = a->cdw[2];
	cmd.cdw3 = a->cdw[3];
	cmd.cdw10 = a->cdw[10];
	cmd.cdw11 = a->cdw[11];
	cmd.cdw12 = a->cdw[12];
	cmd.cdw13 = a->cdw[13];
	cmd.cdw14 = a->cdw[14];
	cmd.cdw15 = a->cdw[15];
	if (cmd.data_len) {
		buf = cli_zalloc(cmd.data_len);
		if (!buf)
			return 1;
		cmd.addr = (uint64_t)(uintptr_t)buf;
	}
	if (a->wr && buf) {
		int fd = a->data ? open(a->data, O_RDONLY) : STDIN_FILENO;
		if (fd < 0 || read_whole(fd, buf, cmd.data_len)) {
			fprintf(stderr, "%s: cannot read %u bytes of input\n", what, cmd.data_len);
			if (fd > STDERR_FILENO)
				close(fd);
			free(buf);
			return 1;
		}
		if (fd != STDIN_FILENO)
			close(fd);
	}
	if (a->show_cmd)
		show_command(&cmd);
	uint64_t result = 0;
	int res = session_passthru(&cli->s, admin, &cmd, &result);
	if (res) {
		print_status_error(what, res);
		goto out;
	}
	fprintf(stderr, "NVMe command result:%08" PRIx64 "\n", result);
	if (a->rd && buf) {
		/* the data read: raw with -b, else nvme-cli's hex dump */
		if (a->raw) {
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
}

int cmd_io_passthru(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return do_passthru(cli, false);
}

int cmd_admin_passthru(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return do_passthru(cli, true);
}
