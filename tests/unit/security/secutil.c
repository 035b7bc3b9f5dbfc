/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/uring_cmd.h"
#include "secutil.h"
#include "security/desc.h"

#define TP_LOG_MAX 32768

static pthread_mutex_t tp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tp_exec tp_execs[TP_LOG_MAX];
static unsigned tp_nexec, tp_nwrites;

/* Both describe and execute decode the same bytes: the engine's snapshot. */
static struct tp_cmd tp_decode(const struct io_uring_cmd *cmd)
{
	struct tp_cmd c;

	memcpy(&c, io_uring_sqe_cmd(cmd->sqe), sizeof(c));
	return c;
}

static int tp_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	struct tp_cmd c = tp_decode(cmd);

	(void)issue_flags;
	pthread_mutex_lock(&tp_lock);
	if (tp_nexec < TP_LOG_MAX)
		tp_execs[tp_nexec] = (struct tp_exec){ c.opcode, c.slba, c.nlb };
	tp_nexec++;
	if (c.opcode == TP_WRITE)
		tp_nwrites++;
	pthread_mutex_unlock(&tp_lock);
	return 0;
}

static int tp_describe(const struct io_uring_cmd *cmd, struct ucmd_cmd_desc *d)
{
	struct tp_cmd c = tp_decode(cmd);

	ucmd_desc_init(d, "", cmd->cmd_op, c.opcode);
	d->nsid = c.nsid;
	d->admin = cmd->cmd_op == TP_ADMIN;
	if (d->admin) {
		d->verb = c.opcode == TP_IDENTIFY ? UCMD_VERB_IDENTIFY :
			  c.opcode == TP_FORMAT ? UCMD_VERB_FORMAT :
			  c.opcode >= 0xc0 ? UCMD_VERB_VENDOR : UCMD_VERB_UNKNOWN;
		d->dir = c.opcode == TP_FORMAT ? UCMD_DIR_NONE : UCMD_DIR_FROM_DEVICE;
		d->destructive = c.opcode == TP_FORMAT;
		d->has_select = c.opcode == TP_IDENTIFY;
		d->select = c.cns;
		return 0;
	}
	switch (c.opcode) {
	case TP_FLUSH:
		d->verb = UCMD_VERB_FLUSH;
		return 0;
	case TP_WRITE:
		d->verb = UCMD_VERB_WRITE;
		d->dir = UCMD_DIR_TO_DEVICE;
		d->destructive = true;
		break;
	case TP_READ:
		d->verb = UCMD_VERB_READ;
		d->dir = UCMD_DIR_FROM_DEVICE;
		break;
	default:
		d->verb = c.opcode >= 0x80 ? UCMD_VERB_VENDOR : UCMD_VERB_UNKNOWN;
		return 0;
	}
	d->has_range = true;
	d->slba = c.slba;
	d->nlb = c.nlb;
	d->offset = c.slba * 512;
	d->length = (uint64_t)c.nlb * 512;
	return 0;
}

static const struct ucmd_file_ops tp_fops = {
	.name = "tp",
	.uring_cmd = tp_uring_cmd,
	.describe = tp_describe,
};

void tp_register(struct ucmd_engine *e, const char *name)
{
	assert_int_equal(engine_add_device(e, name, &tp_fops, NULL), 0);
}

void tp_reset(void)
{
	pthread_mutex_lock(&tp_lock);
	tp_nexec = tp_nwrites = 0;
	pthread_mutex_unlock(&tp_lock);
}

unsigned tp_nr_exec(void)
{
	pthread_mutex_lock(&tp_lock);
	unsigned n = tp_nexec;
	pthread_mutex_unlock(&tp_lock);
	return n;
}

unsigned tp_nr_writes(void)
{
	pthread_mutex_lock(&tp_lock);
	unsigned n = tp_nwrites;
	pthread_mutex_unlock(&tp_lock);
	return n;
}

unsigned tp_log(struct tp_exec *out, unsigned max)
{
	pthread_mutex_lock(&tp_lock);
	unsigned n = tp_nexec < max ? tp_nexec : max;
	if (n > TP_LOG_MAX)
		n = TP_LOG_MAX;
	memcpy(out, tp_execs, n * sizeof(*out));
	pthread_mutex_unlock(&tp_lock);
	return n;
}

void sec_ring(struct ucmd_engine *e, struct ucmd_ring *ring, unsigned entries)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	assert_int_equal(ucmd_queue_init_engine(e, entries, ring, &p), 0);
}

struct io_uring_sqe *tp_prep(struct ucmd_ring *ring, int fd, uint32_t cmd_op, uint8_t opcode,
			     uint64_t slba, uint32_t nlb)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);
	struct tp_cmd c = { .opcode = opcode, .nsid = 1, .slba = slba, .nlb = nlb };

	assert_non_null(sqe);
	ucmd_prep_uring_cmd(sqe, (int)cmd_op, fd);
	sqe->user_data = 0;
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, &c, sizeof(c));
	return sqe;
}

int sec_submit_one(struct ucmd_ring *ring)
{
	struct io_uring_cqe *cqe;
	int res;

	assert_int_equal(ucmd_submit(ring), 1);
	assert_int_equal(ucmd_wait_cqe(ring, &cqe), 0);
	res = cqe->res;
	ucmd_cqe_seen(ring, cqe);
	return res;
}

const char *sec_tmpfile(const char *text)
{
	static char paths[8][64];
	static unsigned next;
	char *path = paths[next++ % 8];
	int fd;

	snprintf(path, 64, "/tmp/ucmd-sec-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	/* readable by the unprivileged children of test_policy_rings */
	assert_int_equal(fchmod(fd, 0644), 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

unsigned sec_read_lines(const char *path, char **lines, unsigned max)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0 && n < max) {
		lines[n++] = line;
		line = NULL;
		cap = 0;
	}
	free(line);
	fclose(f);
	return n;
}

void sec_free_lines(char **lines, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(lines[i]);
}
