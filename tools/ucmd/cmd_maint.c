/* SPDX-License-Identifier: MIT */
/*
 * Maintenance: sanitize, device-self-test, fw-download, fw-commit, reset,
 * show-regs, with nvme-cli's options and messages.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nvme/types.h>

#include "cli.h"
#include "ucmd/daemon.h"
#include "ucmd/nvme.h"
#include "ucmd/ctrl.h"

/* Linux's controller reset ioctl (include/uapi/linux/nvme_ioctl.h) */
#ifndef NVME_IOCTL_RESET
#define NVME_IOCTL_RESET _IO('N', 0x44)
#endif

/*
 * The embedded controller runs only while a ucmd command has it open, so a
 * sanitize started in this process would stand still between CLI calls
 * (and a read-only sanitize-log cannot move it on). The command that
 * started it therefore stays until the Sanitize Status log says it ended.
 * Ctrl-C leaves it in progress, persisted: the next command that opens the
 * controller read-write goes on with it. Through ucmdd or on a real device
 * the device works on alone and the command returns at once, as nvme-cli's.
 */
static int sanitize_wait(struct cli *cli)
{
	struct nvme_sanitize_log_page *log = cli_zalloc(sizeof(*log));
	int ret = 1;

	if (!log)
		return 1;
	for (;;) {
		if (cli_get_log(cli, "sanitize-log", NVME_LOG_LID_SANITIZE, NVME_NSID_ALL, log,
				sizeof(*log)))
			break;
		if ((le16toh(log->sstat) & NVME_SANITIZE_SSTAT_STATUS_MASK) !=
		    NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS) {
			ret = 0;
			break;
		}
		usleep(20000);
	}
	free(log);
	return ret;
}

int cmd_sanitize(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_sanitize_nvm };

	(void)argc;
	(void)argv;
	/* the overwrite parameters mean something only to an overwrite, as nvme-cli says */
	if (a->sanact != NVME_SANITIZE_SANACT_START_OVERWRITE &&
	    (a->owpass || a->oipbp || a->ovrpat)) {
		fprintf(stderr, "sanitize: --owpass, --oipbp and --ovrpat need --sanact=3 "
			"(start-overwrite)\n");
		return 2;
	}
	c.cdw10 = a->sanact | (a->ause ? 1u << 3 : 0) | (a->owpass << 4) |
		  (a->oipbp ? 1u << 8 : 0) | (a->no_dealloc ? 1u << 9 : 0);
	c.cdw11 = a->ovrpat;
	if (cli_admin(cli, "sanitize", &c, NULL))
		return 1;
	if (a->sanact == NVME_SANITIZE_SANACT_EXIT_FAILURE || cli->s.daemon || cli->s.kernel)
		return 0;
	return sanitize_wait(cli);
}

int cmd_device_self_test(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_dev_self_test, .cdw10 = a->stc };

	(void)argc;
	(void)argv;
	c.nsid = a->nsid_given ? a->nsid : NVME_NSID_ALL;
	if (cli_admin(cli, "device-self-test", &c, NULL))
		return 1;
	if (a->stc == NVME_DST_STC_ABORT)
		printf("Aborting device self-test operation\n");
	else if (a->stc == NVME_DST_STC_LONG)
		printf("Extended Device self-test started\n");
	else if (a->stc == NVME_DST_STC_SHORT)
		printf("Short Device self-test started\n");
	else
		printf("Device self-test %#x started\n", a->stc);
	return 0;
}

int cmd_fw_download(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct stat sb;
	uint8_t *img = NULL, *buf = NULL;
	int fd, ret = 1;

	(void)argc;
	(void)argv;
	if (!a->xfer || a->xfer % 4) {
		fprintf(stderr, "fw-download: --xfer must be a non-zero multiple of 4\n");
		return 2;
	}
	fd = open(a->fw, O_RDONLY);
	if (fd < 0 || fstat(fd, &sb)) {
		fprintf(stderr, "fw-download: %s: %s\n", a->fw, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size <= 0 || sb.st_size % 4 ||
	    sb.st_size > (64 << 20)) {
		fprintf(stderr, "fw-download: %s: invalid size %lld for a firmware image (a "
			"regular file, a non-zero multiple of 4 bytes, at most 64 MiB)\n", a->fw,
			(long long)sb.st_size);
		close(fd);
		return 1;
	}
	size_t size = (size_t)sb.st_size, done = 0;
	img = malloc(size);
	buf = cli_zalloc(a->xfer);
	if (!img || !buf || read(fd, img, size) != (ssize_t)size) {
		fprintf(stderr, "fw-download: cannot read %s\n", a->fw);
		goto out;
	}
	while (done < size) {
		uint32_t n = size - done < a->xfer ? (uint32_t)(size - done) : a->xfer;
		struct nvme_uring_cmd c = { .opcode = nvme_admin_fw_download };

		memcpy(buf, img + done, n);
		c.addr = (uint64_t)(uintptr_t)buf;
		c.data_len = n;
		c.cdw10 = n / 4 - 1;				/* NUMD, 0-based */
		c.cdw11 = a->fw_offset + (uint32_t)(done / 4);	/* OFST, dwords */
		if (cli_admin(cli, "fw-download", &c, NULL))
			goto out;
		done += n;
	}
	printf("Firmware download success\n");
	ret = 0;
out:
	close(fd);
	free(img);
	free(buf);
	return ret;
}

int cmd_fw_commit(struct cli *cli, int argc, char **argv)
{
	const struct cmd_args *a = &cli->a;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_fw_commit };
	uint64_t result = 0;
	int res;

	(void)argc;
	(void)argv;
	c.cdw10 = a->slot | (a->action << 3) | (a->bpid << 31);
	res = session_passthru(&cli->s, true, &c, &result);
	/* the "needs a reset" statuses: committed, activation waits for that reset */
	int sc = res > 0 ? res & 0x7ff : 0;
	if (res > 0 && (sc == 0x10b || sc == 0x110 || sc == 0x111)) {
		printf("Success committing firmware action:%u slot:%u, but firmware requires "
		       "%s reset\n", a->action, a->slot, sc == 0x10b ? "conventional" :
		       sc == 0x110 ? "subsystem" : "controller level");
		return 0;
	}
	if (res) {
		print_status_error("fw-commit", res);
		return 1;
	}
	printf("Success committing firmware action:%u slot:%u\n", a->action, a->slot);
	return 0;
}

/* NVME_IOCTL_RESET on the controller device, as nvme-cli's reset does on /dev/nvmeX */
int cmd_reset(struct cli *cli, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	int ret = ucmd_ioctl(cli->s.e, cli->s.ctrl_fd, NVME_IOCTL_RESET, NULL);
	if (ret < 0) {
		print_status_error("reset", ret);
		return 1;
	}
	return 0;
}

/*
 * show-regs: the embedded controller's register file through
 * ucmd_ctrl_regs_read() (as Linux's nvme-cli maps BAR0), ucmdd's through
 * ucmd_nvme_regs_read() (the daemon reads them); an NVMe/TCP controller
 * through Property Get (fabrics command
 * 7Fh, type 04h); one that does not take it says so with its status.
 */
static int prop_get(struct cli *cli, uint32_t off, bool eight, uint64_t *v)
{
	struct nvme_uring_cmd c = { .opcode = nvme_admin_fabrics };

	c.nsid = nvme_fabrics_type_property_get;	/* FCTYPE: byte 4 of the command */
	c.cdw10 = eight ? 1 : 0;			/* ATTRIB: size 8 or 4 bytes */
	c.cdw11 = off;
	return session_passthru(&cli->s, true, &c, v);
}

int cmd_show_regs(struct cli *cli, int argc, char **argv)
{
	static const struct { uint32_t off; bool eight; } regs[] = {
		{ NVME_REG_CAP, true }, { NVME_REG_VS, false }, { NVME_REG_CC, false },
		{ NVME_REG_CSTS, false }, { NVME_REG_NSSR, false },
	};
	uint8_t *bar = cli_zalloc(0x1000);

	(void)argc;
	(void)argv;
	if (!bar)
		return 1;
	if (cli->s.ctrl) {
		int res = ucmd_ctrl_regs_read(cli->s.ctrl, 0, bar, 0x1000);

		if (res) {
			print_status_error("show-regs", res);
			free(bar);
			return 1;
		}
		goto print;
	}
	if (ucmd_engine_is_daemon(cli->s.e)) {
		/* ucmdd reads them for whoever holds the controller open (resource0) */
		int res = ucmd_nvme_regs_read(cli->s.e, cli->s.ctrl_fd, 0, bar, 0x1000);

		if (res) {
			print_status_error("show-regs", res);
			free(bar);
			return 1;
		}
		goto print;
	}
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		uint64_t v = 0;
		int res = prop_get(cli, regs[i].off, regs[i].eight, &v);

		if (res) {
			print_status_error("show-regs: Property Get", res);
			free(bar);
			return 1;
		}
		memcpy(bar + regs[i].off, &v, regs[i].eight ? 8 : 4);	/* little endian */
	}
print:
	print_show_regs(bar, cli_fmt(cli), cli_pflags(cli));
	free(bar);
	return 0;
}
