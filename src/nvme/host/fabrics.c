/* SPDX-License-Identifier: MIT */
/*
 * nvme-fabrics' role for the host: the address of a remote controller
 * (an nvme-tcp:// URL), the host's identity (host NQN and host ID, as
 * nvme-cli keeps them in /etc/nvme), the Connect command, the controller's
 * registers as Property Get/Set commands on the admin queue, and the
 * keep-alive that tells the controller this host is still there.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "fabrics.h"
#include "mpath_select.h"
#include "tcp/pdu.h"	/* the fabrics commands' layouts */

/*
 * "NAME=SECONDS" in opt[0, len): 0 and the value (min..86400) in *v,
 * -ENOENT when opt is another option, -EINVAL (and *why) when the value is
 * not a number in range.
 */
static int url_seconds(const char *opt, size_t len, const char *name, long min, long *v,
		       const char **why)
{
	size_t n = strlen(name);
	char num[16], *end;

	if (len < n || strncmp(opt, name, n))
		return -ENOENT;
	if (len - n == 0 || len - n >= sizeof(num)) {
		*why = "reconnect_delay=, ctrl_loss_tmo=, icresp_timeout=, admin_timeout= and "
		       "io_timeout= need a number of seconds";
		return -EINVAL;
	}
	memcpy(num, opt + n, len - n);
	num[len - n] = 0;
	errno = 0;
	*v = strtol(num, &end, 10);
	if (*end || errno || *v < min || *v > 86400) {
		*why = min < 0 ? "ctrl_loss_tmo= must be -1 (forever) or 0..86400 seconds" :
		       "reconnect_delay=, icresp_timeout=, admin_timeout= and io_timeout= must be "
		       "1..86400 seconds";
		return -EINVAL;
	}
	return 0;
}

int nvmf_parse_url(struct nvmf_ctrl_options *o, const char *url, unsigned default_port,
		   const char **why)
{
	static const char scheme[] = "nvme-tcp://";
	const char *p, *slash, *colon, *host_end, *q;
	size_t n;

	*why = NULL;
	if (strncmp(url, scheme, sizeof(scheme) - 1)) {
		*why = "the URL does not start with nvme-tcp://";
		return -EINVAL;
	}
	p = url + sizeof(scheme) - 1;
	slash = strchr(p, '/');
	if (!slash) {
		*why = "the URL has no /SUBNQN after HOST:PORT";
		return -EINVAL;
	}
	if (*p == '[') {	/* [IPv6]:port */
		host_end = memchr(p, ']', (size_t)(slash - p));
		if (!host_end) {
			*why = "an IPv6 address without its closing ]";
			return -EINVAL;
		}
		p++;
		colon = host_end + 1 < slash && host_end[1] == ':' ? host_end + 1 : NULL;
	} else {
		colon = memchr(p, ':', (size_t)(slash - p));
		host_end = colon ? colon : slash;
	}
	n = (size_t)(host_end - p);
	if (!n || n >= sizeof(o->traddr)) {
		*why = "the host is empty or too long";
		return -EINVAL;
	}
	memcpy(o->traddr, p, n);
	o->traddr[n] = 0;
	if (colon) {
		n = (size_t)(slash - colon - 1);
		if (!n || n >= sizeof(o->trsvcid)) {
			*why = "the port is empty or too long";
			return -EINVAL;
		}
		memcpy(o->trsvcid, colon + 1, n);
		o->trsvcid[n] = 0;
		for (size_t i = 0; i < n; i++)
			if (!isdigit((unsigned char)o->trsvcid[i])) {
				*why = "the port is not a number";
				return -EINVAL;
			}
	} else {
		snprintf(o->trsvcid, sizeof(o->trsvcid), "%u", default_port);
	}
	p = slash + 1;
	q = strchr(p, '?');
	n = q ? (size_t)(q - p) : strlen(p);
	if (!n || n > NVMF_NQN_SIZE) {
		*why = "the subsystem NQN is empty or longer than 223 bytes";
		return -EINVAL;
	}
	memcpy(o->subsysnqn, p, n);
	o->subsysnqn[n] = 0;
	/*
	 * Options after '?', '&'-separated: hdgst, ddgst (the digests to ask
	 * for), reconnect_delay=S and ctrl_loss_tmo=S (nvme-cli's names),
	 * icresp_timeout=S, admin_timeout=S and io_timeout=S (the deadlines,
	 * Linux's defaults 10, 60 and 30 s; the last two nvme_core's names).
	 */
	while (q && *q) {
		const char *opt = q + 1, *end = strchr(opt, '&');
		size_t len = end ? (size_t)(end - opt) : strlen(opt);
		long v;

		if (len == 5 && !strncmp(opt, "hdgst", 5))
			o->hdr_digest = true;
		else if (len == 5 && !strncmp(opt, "ddgst", 5))
			o->data_digest = true;
		else if (!url_seconds(opt, len, "reconnect_delay=", 1, &v, why))
			o->reconnect_delay_ms = (uint32_t)v * 1000u;
		else if (!url_seconds(opt, len, "ctrl_loss_tmo=", -1, &v, why))
			o->ctrl_loss_tmo_ms = v < 0 ? -1 : (int64_t)v * 1000;
		else if (!url_seconds(opt, len, "icresp_timeout=", 1, &v, why))
			o->handshake_tmo_ms = (uint32_t)v * 1000u;
		else if (!url_seconds(opt, len, "admin_timeout=", 1, &v, why))
			o->admin_tmo_ms = (uint32_t)v * 1000u;
		else if (!url_seconds(opt, len, "io_timeout=", 1, &v, why))
			o->io_tmo_ms = (uint32_t)v * 1000u;
		else if (len > 9 && !strncmp(opt, "iopolicy=", 9)) {
			char name[16];
			int pol;

			snprintf(name, sizeof(name), "%.*s", (int)(len - 9), opt + 9);
			pol = len - 9 < sizeof(name) ? nvme_iopolicy_parse(name) : -EINVAL;
			if (pol < 0) {
				*why = "iopolicy= is numa, round-robin or queue-depth";
				return -EINVAL;
			}
			o->iopolicy = pol + 1;
		} else {
			if (!*why)
				*why = "an unknown URL option (hdgst, ddgst, reconnect_delay=S, "
				       "ctrl_loss_tmo=S, icresp_timeout=S, admin_timeout=S, "
				       "io_timeout=S and iopolicy=NAME are known)";
			return -EINVAL;
		}
		q = end;
	}
	return 0;
}

/* The first line of a file, without its newline; false when absent or empty. */
static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok = false;

	if (!f)
		return false;
	if (fgets(buf, (int)len, f)) {
		buf[strcspn(buf, "\r\n")] = 0;
		ok = buf[0] != 0;
	}
	fclose(f);
	return ok;
}

static int parse_uuid(const char *s, uint8_t out[16])
{
	unsigned n = 0;

	for (; *s && n < 32; s++) {
		int v;

		if (*s == '-')
			continue;
		if (!isxdigit((unsigned char)*s))
			return -EINVAL;
		v = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);
		out[n / 2] = (uint8_t)(n % 2 ? out[n / 2] | v : v << 4);
		n++;
	}
	return n == 32 && !*s ? 0 : -EINVAL;
}

int nvmf_host_identity(struct nvmf_ctrl_options *o, const char *hostnqn, const char *hostid)
{
	char buf[NVMF_NQN_MAX + 2];
	const char *uuid;

	if (hostnqn) {
		if (!*hostnqn || strlen(hostnqn) > NVMF_NQN_SIZE)
			return -EINVAL;
		snprintf(o->hostnqn, sizeof(o->hostnqn), "%s", hostnqn);
	} else if (read_line("/etc/nvme/hostnqn", buf, sizeof(buf)) &&
		   strlen(buf) <= NVMF_NQN_SIZE) {
		snprintf(o->hostnqn, sizeof(o->hostnqn), "%s", buf);
	} else {
		/* nvme-cli's form of a generated NQN: a random (version 4) UUID */
		uint8_t u[16];

		if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
			return -EIO;
		u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
		u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
		snprintf(o->hostnqn, sizeof(o->hostnqn),
			 "nqn.2014-08.org.nvmexpress:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-"
			 "%02x%02x-%02x%02x%02x%02x%02x%02x",
			 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			 u[12], u[13], u[14], u[15]);
	}
	if (hostid)
		return parse_uuid(hostid, o->hostid);
	/*
	 * The host ID of an NQN that carries a UUID is that UUID, as nvme-cli
	 * derives it; an NQN given by the caller keeps its own identity rather
	 * than this machine's /etc/nvme/hostid.
	 */
	uuid = strstr(o->hostnqn, ":uuid:");
	if (hostnqn && uuid && !parse_uuid(uuid + 6, o->hostid))
		return 0;
	if (read_line("/etc/nvme/hostid", buf, sizeof(buf)) && !parse_uuid(buf, o->hostid))
		return 0;
	if (uuid && !parse_uuid(uuid + 6, o->hostid))
		return 0;
	return getrandom(o->hostid, sizeof(o->hostid), 0) == (ssize_t)sizeof(o->hostid) ? 0 : -EIO;
}

void nvmf_build_connect(const struct nvmf_ctrl *f, uint16_t qid, uint16_t sqsize, uint8_t cattr,
			struct ucmd_nvme_sqe *sqe, struct nvmf_connect_data *data)
{
	struct nvmf_connect_sqe *cs = (struct nvmf_connect_sqe *)(void *)sqe;

	memset(sqe, 0, sizeof(*sqe));
	cs->opcode = NVMF_OPC_FABRICS;
	cs->fctype = NVMF_FCTYPE_CONNECT;
	cs->qid = htole16(qid);
	cs->sqsize = htole16(sqsize);
	cs->cattr = cattr;
	/* KATO on the admin queue only; it bounds the controller's patience with us */
	if (!qid)
		cs->kato = htole32(f->opts.kato_ms);
	memset(data, 0, sizeof(*data));
	memcpy(data->hostid, f->opts.hostid, sizeof(data->hostid));
	data->cntlid = htole16(qid ? f->cntlid : NVMF_CNTLID_DYNAMIC);
	snprintf(data->subsysnqn, sizeof(data->subsysnqn), "%s", f->opts.subsysnqn);
	snprintf(data->hostnqn, sizeof(data->hostnqn), "%s", f->opts.hostnqn);
}

/* Property Get/Set on the admin queue: an NVMe status is -EIO, as a dead link is. */
static int nvmf_prop(struct nvme_host *h, uint8_t fctype, uint32_t off, bool size8,
		     uint64_t value, uint64_t *result)
{
	struct ucmd_nvme_sqe sqe;
	struct nvmf_prop_sqe *p = (struct nvmf_prop_sqe *)(void *)&sqe;
	int st;

	memset(&sqe, 0, sizeof(sqe));
	p->opcode = NVMF_OPC_FABRICS;
	p->fctype = fctype;
	p->attrib = size8 ? NVMF_PROP_ATTR_SIZE8 : 0;
	p->offset = htole32(off);
	p->value = htole64(value);
	st = nvme_submit_sync_cmd(h, &sqe, NULL, 0, result);
	return st > 0 ? -EIO : st;
}

int nvmf_reg_read32(struct nvme_host *h, uint32_t off, uint32_t *val)
{
	uint64_t r = 0;
	int ret = nvmf_prop(h, NVMF_FCTYPE_PROP_GET, off, false, 0, &r);

	*val = (uint32_t)r;
	return ret;
}

int nvmf_reg_read64(struct nvme_host *h, uint32_t off, uint64_t *val)
{
	return nvmf_prop(h, NVMF_FCTYPE_PROP_GET, off, true, 0, val);
}

int nvmf_reg_write32(struct nvme_host *h, uint32_t off, uint32_t val)
{
	return nvmf_prop(h, NVMF_FCTYPE_PROP_SET, off, false, val, NULL);
}

/*
 * Keep Alive every KATO/2 (Linux sends at KATO/2 too, so one late command
 * never lets the controller's timer expire).
 */
static void *nvmf_keep_alive_thread(void *arg)
{
	struct nvmf_ctrl *c = arg;
	uint32_t period = c->opts.kato_ms / 2 ? c->opts.kato_ms / 2 : 1;

	pthread_mutex_lock(&c->ka_lock);
	while (!c->ka_stop) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += period / 1000;
		ts.tv_nsec += (long)(period % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		while (!c->ka_stop && pthread_cond_timedwait(&c->ka_cond, &c->ka_lock, &ts) == 0)
			;
		if (c->ka_stop)
			break;
		pthread_mutex_unlock(&c->ka_lock);
		struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_keep_alive };
		nvme_submit_sync_cmd(c->host, &sqe, NULL, 0, NULL);
		atomic_fetch_add(&c->ka_sent, 1);
		pthread_mutex_lock(&c->ka_lock);
	}
	pthread_mutex_unlock(&c->ka_lock);
	return NULL;
}

int nvmf_start_keep_alive(struct nvmf_ctrl *c)
{
	pthread_condattr_t ca;
	int ret;

	if (!c->opts.kato_ms)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->ka_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&c->ka_lock, NULL);
	c->ka_stop = false;
	ret = pthread_create(&c->ka_thread, NULL, nvmf_keep_alive_thread, c);
	if (ret) {
		pthread_cond_destroy(&c->ka_cond);
		pthread_mutex_destroy(&c->ka_lock);
		return -ret;
	}
	c->ka_started = true;
	return 0;
}

void nvmf_stop_keep_alive(struct nvmf_ctrl *c)
{
	if (!c->ka_started)
		return;
	pthread_mutex_lock(&c->ka_lock);
	c->ka_stop = true;
	pthread_cond_signal(&c->ka_cond);
	pthread_mutex_unlock(&c->ka_lock);
	pthread_join(c->ka_thread, NULL);
	pthread_cond_destroy(&c->ka_cond);
	pthread_mutex_destroy(&c->ka_lock);
	c->ka_started = false;
}
