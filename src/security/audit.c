/* SPDX-License-Identifier: MIT */
/*
 * The "audit" security module: one JSON line per decision worth keeping
 * (every denial, and allowed decisions a rule asks to record), written with
 * one write(2) so that lines from several threads never interleave. A record
 * that cannot be written is counted, and the next record that is written
 * carries "lost": N, so a gap in the trail is always visible.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/uring_cmd.h"
#include "security/security.h"

struct ucmd_audit {
	pthread_mutex_t lock;		/* one record at a time; guards the counts */
	int fd;
	bool own_fd;
	uint64_t written, lost;
	struct ucmd_security_ops ops;
};

static const char *const hook_names[] = {
	[UCMD_HOOK_URING_CMD] = "uring_cmd",
	[UCMD_HOOK_URING_RW] = "uring_rw",
	[UCMD_HOOK_URING_SQPOLL] = "uring_sqpoll",
	[UCMD_HOOK_URING_OVERRIDE_CREDS] = "uring_override_creds",
	[UCMD_HOOK_FILE_IOCTL] = "file_ioctl",
};

/* RFC 3339 in UTC with nanoseconds: 2024-05-01T12:00:00.123456789Z */
static void rfc3339(char *buf, size_t len, const struct timespec *ts)
{
	struct tm tm;
	char base[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09ldZ", base, ts->tv_nsec);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len > n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/*
 * A string value from bytes that may come from anywhere (device names,
 * policy paths and rule names): JSON text is UTF-8 (RFC 8259), so each byte
 * that is not part of a valid sequence becomes U+FFFD, and the record stays
 * readable by any strict parser. json-c escapes the control characters.
 */
static json_object *new_text(const char *v, size_t len)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t i = 0, n, out = 0;
	json_object *j;
	char *buf;

	while (i < len && (n = utf8_seq(s + i, len - i)))
		i += n;
	if (i == len)
		return json_object_new_string_len(v, (int)len);
	buf = malloc(3 * len);
	if (!buf)
		return NULL;
	for (i = 0; i < len; i += n ? n : 1) {
		n = utf8_seq(s + i, len - i);
		if (n) {
			memcpy(buf + out, s + i, n);
			out += n;
		} else {
			memcpy(buf + out, "\xef\xbf\xbd", 3);
			out += 3;
		}
	}
	j = json_object_new_string_len(buf, (int)out);
	free(buf);
	return j;
}

static void add_text(json_object *o, const char *k, const char *v, size_t len)
{
	json_object_object_add(o, k, new_text(v, len));
}

static void add_str(json_object *o, const char *k, const char *v)
{
	add_text(o, k, v, strlen(v));
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_desc(json_object *o, const struct ucmd_cmd_desc *d)
{
	/* a provider's name need not be terminated within the field */
	add_text(o, "device", d->device, strnlen(d->device, sizeof(d->device)));
	add_u64(o, "cmd_op", d->cmd_op);
	add_u64(o, "opcode", d->opcode);
	add_str(o, "verb", desc_verb_name(d->verb));
	add_str(o, "dir", desc_dir_name(d->dir));
	json_object_object_add(o, "admin_cmd", json_object_new_boolean(d->admin));
	add_u64(o, "nsid", d->nsid);
	if (d->has_range || d->length) {
		json_object *r = json_object_new_object();
		add_u64(r, "offset", d->offset);
		add_u64(r, "length", d->length);
		if (d->has_range) {
			add_u64(r, "slba", d->slba);
			add_u64(r, "nlb", d->nlb);
		}
		json_object_object_add(o, "range", r);
	}
	if (d->nr_ranges && d->ranges) {
		json_object *a = json_object_new_array();

		for (unsigned i = 0; i < d->nr_ranges; i++) {
			json_object *r = json_object_new_object();

			add_u64(r, "offset", d->ranges[i].offset);
			add_u64(r, "length", d->ranges[i].length);
			add_u64(r, "slba", d->ranges[i].slba);
			add_u64(r, "nlb", d->ranges[i].nlb);
			json_object_array_add(a, r);
		}
		json_object_object_add(o, "ranges", a);
	}
	if (d->range_unknown)
		json_object_object_add(o, "range_unknown", json_object_new_boolean(true));
	json_object_object_add(o, "destructive", json_object_new_boolean(d->destructive));
}

static void add_cred(json_object *o, const struct ucmd_cred *c, const char *prefix)
{
	char k[32];

	snprintf(k, sizeof(k), "%suid", prefix);
	add_u64(o, k, c->euid);
	snprintf(k, sizeof(k), "%sgid", prefix);
	add_u64(o, k, c->egid);
}

/* The description the chain judged, or, if no module noted one, ours. */
static bool event_desc(const struct ucmd_security_event *ev, struct ucmd_cmd_desc *d)
{
	if (ev->desc) {
		*d = *ev->desc;
		return true;
	}
	if (ev->hook == UCMD_HOOK_URING_CMD) {
		ucmd_desc_init(d, ev->cmd->file->dev ? ev->cmd->file->dev->name : "",
			       ev->cmd->cmd_op, 0);
		if (ev->cmd->file->ops->describe)
			ev->cmd->file->ops->describe(ev->cmd, d);
		return true;
	}
	if (ev->hook == UCMD_HOOK_FILE_IOCTL) {
		const struct ucmd_file *f = ev->ioctl->file;

		ucmd_desc_init(d, f->dev ? f->dev->name : "", (uint32_t)ev->ioctl->cmd, 0);
		if (f->ops->describe_ioctl)
			f->ops->describe_ioctl(f, ev->ioctl->cmd, ev->ioctl->karg, d);
		return true;
	}
	if (ev->hook == UCMD_HOOK_URING_RW) {
		ucmd_desc_init(d, ev->kiocb->file->dev ? ev->kiocb->file->dev->name : "", 0, 0);
		if (ev->kiocb->file->ops->describe_rw)
			ev->kiocb->file->ops->describe_rw(ev->kiocb, d);
		return true;
	}
	return false;
}

static json_object *event_record(const struct ucmd_security_event *ev)
{
	json_object *o = json_object_new_object();
	struct ucmd_cmd_desc d;
	struct timespec ts;
	char t[48];

	clock_gettime(CLOCK_REALTIME, &ts);
	rfc3339(t, sizeof(t), &ts);
	add_str(o, "time", t);
	add_u64(o, "time_ns", (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	add_str(o, "hook", hook_names[ev->hook]);
	if (ev->cred) {
		add_u64(o, "pid", (uint64_t)ev->cred->pid);
		add_cred(o, ev->cred, "");
		json_object_object_add(o, "cap_sys_admin",
				       json_object_new_boolean(ev->cred->cap_sys_admin));
		/* an NVMe/TCP host: the NQN it gave in Connect (any bytes: add_text cleans) */
		if (ev->cred->hostnqn[0])
			add_text(o, "hostnqn", ev->cred->hostnqn,
				 strnlen(ev->cred->hostnqn, sizeof(ev->cred->hostnqn)));
		if (ev->cred->hostid[0])
			add_text(o, "hostid", ev->cred->hostid,
				 strnlen(ev->cred->hostid, sizeof(ev->cred->hostid)));
	}
	if (ev->new_cred)
		add_cred(o, ev->new_cred, "target_");
	if (event_desc(ev, &d))
		add_desc(o, &d);
	add_str(o, "decision", ev->ret ? "deny" : "allow");
	if (ev->ret)
		/* 64 bits: a module returning INT_MIN must not overflow the negation */
		json_object_object_add(o, "errno", json_object_new_int64(-(int64_t)ev->ret));
	add_str(o, "module", ev->module ? ev->module : "none");
	add_str(o, "rule", ev->rule ? ev->rule : "");
	return o;
}

static bool write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		s += n;
		len -= (size_t)n;
	}
	return true;
}

/* Append o (taking it) as one line, with the count of records lost. */
static int emit(struct ucmd_audit *a, json_object *o)
{
	const char *s;
	char *line;
	size_t len;
	int ret = 0;

	pthread_mutex_lock(&a->lock);
	if (a->lost)
		add_u64(o, "lost", a->lost);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	line = malloc(len + 2);
	if (line) {
		memcpy(line, s, len);
		line[len] = '\n';
	}
	if (line && write_all(a->fd, line, len + 1)) {
		a->written++;
		a->lost = 0;
	} else {
		a->lost++;
		ret = line ? -EIO : -ENOMEM;
	}
	pthread_mutex_unlock(&a->lock);
	free(line);
	json_object_put(o);
	return ret;
}

static void audit_decided(void *priv, const struct ucmd_security_event *ev)
{
	json_object *o;

	if (!ev->ret && !ev->audit)
		return;
	o = event_record(ev);
	if (!o) {
		struct ucmd_audit *a = priv;
		pthread_mutex_lock(&a->lock);
		a->lost++;
		pthread_mutex_unlock(&a->lock);
		return;
	}
	emit(priv, o);
}

int ucmd_audit_write_record(struct ucmd_audit *a, const struct ucmd_audit_record *r)
{
	json_object *o = json_object_new_object();
	struct ucmd_cmd_desc d;
	struct timespec ts;
	char t[48];

	if (!o) {
		ucmd_audit_add_lost(a, 1);
		return -ENOMEM;
	}
	if (r->time_ns) {
		ts.tv_sec = (time_t)(r->time_ns / 1000000000u);
		ts.tv_nsec = (long)(r->time_ns % 1000000000u);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
	}
	rfc3339(t, sizeof(t), &ts);
	add_str(o, "time", t);
	add_u64(o, "time_ns", (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	add_str(o, "hook", hook_names[r->ioctl ? UCMD_HOOK_FILE_IOCTL : UCMD_HOOK_URING_CMD]);
	add_u64(o, "pid", (uint64_t)(int64_t)r->pid);
	add_u64(o, "uid", r->uid);
	add_u64(o, "gid", r->gid);
	json_object_object_add(o, "cap_sys_admin", json_object_new_boolean(r->cap_sys_admin));
	ucmd_desc_init(&d, r->device ? r->device : "", r->cmd_op, r->opcode);
	d.verb = r->verb < UCMD_VERB_NR ? (enum ucmd_verb)r->verb : UCMD_VERB_UNKNOWN;
	d.dir = (enum ucmd_dir)(r->dir & 3);
	d.admin = r->admin;
	d.nsid = r->nsid;
	d.has_range = r->has_range;
	d.range_unknown = r->range_unknown;
	d.destructive = r->destructive;
	d.offset = r->offset;
	d.length = r->length;
	d.slba = r->slba;
	d.nlb = r->nlb;
	add_desc(o, &d);
	add_str(o, "decision", r->allow ? "allow" : "deny");
	if (!r->allow)
		json_object_object_add(o, "errno", json_object_new_int64(r->err));
	add_str(o, "module", r->module ? r->module : "none");
	add_str(o, "rule", r->rule ? r->rule : "");
	return emit(a, o);
}

void ucmd_audit_add_lost(struct ucmd_audit *a, uint64_t n)
{
	pthread_mutex_lock(&a->lock);
	a->lost += n;
	pthread_mutex_unlock(&a->lock);
}

/* The trail holds denials and asked-for records: a constant allow has neither. */
static bool audit_constant_allow(void *priv, const struct ucmd_file *f,
				 enum ucmd_security_hook hook, bool cap)
{
	(void)priv;
	(void)f;
	(void)hook;
	(void)cap;
	return true;
}

int ucmd_audit_flush_lost(struct ucmd_audit *a)
{
	json_object *o;
	struct timespec ts;
	char t[48];
	bool any;

	pthread_mutex_lock(&a->lock);
	any = a->lost != 0;
	pthread_mutex_unlock(&a->lock);
	if (!any)
		return 0;
	o = json_object_new_object();
	clock_gettime(CLOCK_REALTIME, &ts);
	rfc3339(t, sizeof(t), &ts);
	add_str(o, "time", t);
	add_u64(o, "time_ns", (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	add_str(o, "record", "lost");
	return emit(a, o);
}

struct ucmd_audit *ucmd_audit_open_fd(int fd, bool own_fd)
{
	struct ucmd_audit *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	a->fd = fd;
	a->own_fd = own_fd;
	a->ops.name = "audit";
	a->ops.decided = audit_decided;
	a->ops.file_constant_allow = audit_constant_allow;
	return a;
}

int audit_open(const char *path, struct ucmd_audit **out, char *err, size_t errlen)
{
	struct ucmd_audit *a;
	int fd;

	if (!strcmp(path, "-")) {
		a = ucmd_audit_open_fd(STDERR_FILENO, false);
		if (!a)
			snprintf(err, errlen, "%s: out of memory", path);
		*out = a;
		return a ? 0 : -ENOMEM;
	}
	/*
	 * Never through a symbolic link: whoever runs with --audit (root, the
	 * daemon) would append to wherever the link points. A FIFO is a log
	 * pipe and is fine, but without a reader its open must fail (ENXIO)
	 * rather than hang: O_NONBLOCK, cleared once open so records wait for
	 * a slow reader as they would for a slow disk.
	 */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
			O_NOCTTY, 0600);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", path,
			 e == ELOOP ? "a symbolic link; name the audit file itself"
			 : e == ENXIO ? "a FIFO nobody reads" : strerror(e));
		return -e;
	}
	struct stat st;

	if (fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) ||
	    fcntl(fd, F_SETFL, O_APPEND) < 0) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file, FIFO or character device", path);
		return -EINVAL;
	}
	a = ucmd_audit_open_fd(fd, true);
	if (!a) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

void ucmd_audit_free(struct ucmd_audit *a)
{
	if (!a)
		return;
	/* a trail must not end in silence: say what was lost, if we can */
	ucmd_audit_flush_lost(a);
	if (a->own_fd)
		close(a->fd);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int ucmd_audit_register(struct ucmd_engine *e, struct ucmd_audit *a)
{
	return security_register(e, &a->ops, a);
}

uint64_t ucmd_audit_written(struct ucmd_audit *a)
{
	uint64_t n;

	pthread_mutex_lock(&a->lock);
	n = a->written;
	pthread_mutex_unlock(&a->lock);
	return n;
}

uint64_t ucmd_audit_lost(struct ucmd_audit *a)
{
	uint64_t n;

	pthread_mutex_lock(&a->lock);
	n = a->lost;
	pthread_mutex_unlock(&a->lock);
	return n;
}
