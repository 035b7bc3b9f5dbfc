// SPDX-License-Identifier: MIT
/*
 * ucmdd-ports.json (ana_keep.h):
 *
 *   { "version": 1, "ports": [ { "port": 2, "ana_states": [3] }, ... ] }
 *
 * port 1..16, each once; ana_states one per ANA group (group 1 first),
 * each 1 optimized, 2 non-optimized, 3 inaccessible, 4 persistent loss or
 * 15 change. Nothing else is accepted: a hand edit that is wrong stops the
 * start, saying where, rather than serving hosts a state nobody set.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "server/ana_keep.h"

#define TMP_NAME ".ucmdd-ports.json.tmp"

static int why(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int why(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool valid_state(int64_t s)
{
	return s == 1 || s == 2 || s == 3 || s == 4 || s == 15;
}

/* obj has only the keys named (NULL-terminated) */
static const char *unknown_key(json_object *o, const char *const *keys)
{
	json_object_object_foreach(o, k, v) {
		bool known = false;

		(void)v;
		for (const char *const *p = keys; *p && !known; p++)
			known = !strcmp(k, *p);
		if (!known)
			return k;
	}
	return NULL;
}

static int int_member(json_object *o, const char *key, json_object **v)
{
	return json_object_object_get_ex(o, key, v) && json_object_is_type(*v, json_type_int);
}

static int parse(json_object *root, uint8_t states[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS],
		 char *err, size_t len)
{
	static const char *const top[] = { "version", "ports", NULL };
	static const char *const port_keys[] = { "port", "ana_states", NULL };
	json_object *v, *ports;
	const char *k;

	if (!json_object_is_type(root, json_type_object))
		return why(err, len, "not a JSON object");
	if ((k = unknown_key(root, top)))
		return why(err, len, "%s: unknown member", k);
	if (!int_member(root, "version", &v) || json_object_get_int64(v) != 1)
		return why(err, len, "version: missing or not 1");
	if (!json_object_object_get_ex(root, "ports", &ports) ||
	    !json_object_is_type(ports, json_type_array))
		return why(err, len, "ports: missing or not an array");
	if (json_object_array_length(ports) > ANA_KEEP_MAX_PORTS)
		return why(err, len, "ports: %zu entries, at most %d", json_object_array_length(ports),
			   ANA_KEEP_MAX_PORTS);
	for (size_t i = 0; i < json_object_array_length(ports); i++) {
		json_object *p = json_object_array_get_idx(ports, i), *a;
		int64_t n;

		if (!json_object_is_type(p, json_type_object))
			return why(err, len, "ports[%zu]: not an object", i);
		if ((k = unknown_key(p, port_keys)))
			return why(err, len, "ports[%zu].%s: unknown member", i, k);
		if (!int_member(p, "port", &v) || (n = json_object_get_int64(v)) < 1 ||
		    n > ANA_KEEP_MAX_PORTS)
			return why(err, len, "ports[%zu].port: missing or not 1..%d", i,
				   ANA_KEEP_MAX_PORTS);
		if (states[n - 1][0])
			return why(err, len, "ports[%zu].port: port %lld given twice", i, (long long)n);
		if (!json_object_object_get_ex(p, "ana_states", &a) ||
		    !json_object_is_type(a, json_type_array) ||
		    json_object_array_length(a) != ANA_KEEP_GRPS)
			return why(err, len, "ports[%zu].ana_states: missing or not %d state%s", i,
				   ANA_KEEP_GRPS, ANA_KEEP_GRPS == 1 ? "" : "s");
		for (size_t g = 0; g < ANA_KEEP_GRPS; g++) {
			json_object *s = json_object_array_get_idx(a, g);

			if (!json_object_is_type(s, json_type_int) ||
			    !valid_state(json_object_get_int64(s)))
				return why(err, len, "ports[%zu].ana_states[%zu]: no ANA state "
					   "(1, 2, 3, 4 or 15)", i, g);
			states[n - 1][g] = (uint8_t)json_object_get_int64(s);
		}
	}
	return 0;
}

int ana_keep_load(int dirfd, uint8_t states[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS], char *err,
		  size_t errlen)
{
	char *buf = NULL;
	struct stat sb;
	json_object *root;
	ssize_t n;
	int fd, ret;

	memset(states, 0, sizeof(uint8_t[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS]));
	fd = openat(dirfd, ANA_KEEP_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		if (ret == -ELOOP)
			why(err, errlen, "a symbolic link");
		else
			snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	/* the daemon's own, as the directory: nobody else writes what hosts are told */
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		ret = why(err, errlen, "not a regular file");
		goto out;
	}
	if ((sb.st_uid != geteuid() && sb.st_uid != 0) || (sb.st_mode & 022)) {
		why(err, errlen, "owned by uid %u, mode %04o: must be this user's (or root's) and "
		    "writable by no one else", (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777));
		ret = -EPERM;
		goto out;
	}
	if (sb.st_size > ANA_KEEP_MAX_BYTES) {
		ret = why(err, errlen, "%lld bytes, at most %d", (long long)sb.st_size,
			  ANA_KEEP_MAX_BYTES);
		goto out;
	}
	buf = calloc(1, (size_t)sb.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	n = pread(fd, buf, (size_t)sb.st_size, 0);
	if (n != sb.st_size) {
		ret = n < 0 ? -errno : why(err, errlen, "short read");
		if (n < 0)
			snprintf(err, errlen, "%s", strerror(-ret));
		goto out;
	}
	root = json_tokener_parse(buf);
	if (!root) {
		ret = why(err, errlen, "not JSON");
		goto out;
	}
	ret = parse(root, states, err, errlen);
	json_object_put(root);
	if (ret)
		memset(states, 0, sizeof(uint8_t[ANA_KEEP_MAX_PORTS][ANA_KEEP_GRPS]));
out:
	free(buf);
	close(fd);
	return ret;
}

int ana_keep_save(int dirfd, const uint8_t states[][ANA_KEEP_GRPS], unsigned nr)
{
	json_object *root = json_object_new_object(), *ports = json_object_new_array();
	const char *text;
	size_t len;
	int fd, ret = 0;

	if (nr > ANA_KEEP_MAX_PORTS)
		nr = ANA_KEEP_MAX_PORTS;
	json_object_object_add(root, "version", json_object_new_int(1));
	for (unsigned p = 0; p < nr; p++) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		json_object_object_add(o, "port", json_object_new_int((int)p + 1));
		for (unsigned g = 0; g < ANA_KEEP_GRPS; g++)
			json_object_array_add(a, json_object_new_int(states[p][g]));
		json_object_object_add(o, "ana_states", a);
		json_object_array_add(ports, o);
	}
	json_object_object_add(root, "ports", ports);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	len = strlen(text);
	fd = openat(dirfd, TMP_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	errno = 0;
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		ret = errno ? -errno : -ENOSPC;	/* a short write: the disk is full */
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, TMP_NAME, dirfd, ANA_KEEP_FILE))
		ret = -errno;
	/* the rename reaches the disk too */
	if (!ret && fsync(dirfd))
		ret = -errno;
	if (ret)
		unlinkat(dirfd, TMP_NAME, 0);
out:
	json_object_put(root);
	return ret;
}
