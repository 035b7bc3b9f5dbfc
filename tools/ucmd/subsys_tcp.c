/* SPDX-License-Identifier: MIT */
/*
 * The paths of a session over NVMe/TCP (--ctrl nvme-tcp://..., one URL or
 * several: a multipath subsystem) as Linux's sysfs shows an nvme-tcp
 * controller to nvme-cli's list-subsys: transport "tcp", the address as
 * nvme_tcp_get_address() writes it ("traddr=A,trsvcid=P" and, while the
 * admin connection is live, ",src_addr=S"), the state "live" or, while a
 * lost path is being connected again, "connecting"; and each path's ANA
 * state as the host's head knows it, none for a path that never connected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucmd/nvme.h>

#include "cli.h"

/*
 * traddr and trsvcid of "nvme-tcp://HOST[:PORT]/NQN", for a path that has
 * not connected yet (the library has no controller for it to ask).
 */
static void url_addr(const char *url, char *traddr, size_t tlen, char *port, size_t plen)
{
	const char *h = url + strlen("nvme-tcp://"), *end = strchr(h, '/'), *colon;
	size_t n = end ? (size_t)(end - h) : strlen(h);

	snprintf(port, plen, "4420");
	if (*h == '[' && memchr(h, ']', n)) {
		const char *rb = memchr(h, ']', n);

		snprintf(traddr, tlen, "%.*s", (int)(rb - h - 1), h + 1);
		if (rb + 1 < h + n && rb[1] == ':')
			snprintf(port, plen, "%.*s", (int)(h + n - rb - 2), rb + 2);
		return;
	}
	colon = memchr(h, ':', n);
	snprintf(traddr, tlen, "%.*s", (int)(colon ? colon - h : (long)n), h);
	if (colon)
		snprintf(port, plen, "%.*s", (int)(h + n - colon - 1), colon + 1);
}

static void one_path(struct cli *cli, const char *url, unsigned i, uint32_t nsid,
		     struct subsys_tcp_path *p)
{
	struct ucmd_nvme_host *h = cli->s.subsys ? ucmd_nvme_subsys_path(cli->s.subsys, i)
						 : cli->s.host;
	struct ucmd_nvme_path_info pi;
	struct ucmd_nvme_tcp_info ti;
	bool live;

	memset(&ti, 0, sizeof(ti));
	if (!h || ucmd_nvme_tcp_info(h, &ti))
		url_addr(url, ti.traddr, sizeof(ti.traddr), ti.trsvcid, sizeof(ti.trsvcid));
	live = ti.src_addr[0];
	p->inst = i;
	p->ana = "optimized";
	if (cli->s.subsys && !ucmd_nvme_subsys_path_info(cli->s.subsys, nsid, i, &pi)) {
		p->inst = pi.instance;
		/*
		 * a path never connected (still being tried) has no namespace:
		 * Linux makes a path when it scans a live controller's list
		 */
		p->ana = h ? subsys_ana_name(pi.ana_state) : NULL;
		live = pi.live;
	}
	p->state = live ? "live" : "connecting";
	snprintf(p->address, sizeof(p->address), "traddr=%s,trsvcid=%s%s%s", ti.traddr,
		 ti.trsvcid, ti.src_addr[0] ? ",src_addr=" : "", ti.src_addr);
}

unsigned subsys_tcp_paths(struct cli *cli, uint32_t nsid, struct subsys_tcp_path *p,
			  unsigned max)
{
	const char *dir = cli->s.dir;
	char *copy, *save = NULL, *tok;
	unsigned n = 0;

	if (cli->s.kernel || cli->s.daemon || !dir || strncmp(dir, "nvme-tcp://", 11))
		return 0;
	copy = strdup(dir);
	if (!copy)
		return 0;
	for (tok = strtok_r(copy, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
		one_path(cli, tok, n, nsid, &p[n]);
		n++;
	}
	free(copy);
	return n;
}

bool subsys_tcp_host(struct cli *cli, char *nqn, size_t nqn_len, char *id, size_t id_len)
{
	struct ucmd_nvme_tcp_info ti;

	if (cli->s.kernel || cli->s.daemon || !cli->s.dir || strncmp(cli->s.dir, "nvme-tcp://", 11))
		return false;
	for (unsigned i = 0; i < 8; i++) {
		struct ucmd_nvme_host *h = cli->s.subsys ? ucmd_nvme_subsys_path(cli->s.subsys, i)
							 : i ? NULL : cli->s.host;

		if (h && !ucmd_nvme_tcp_info(h, &ti)) {
			snprintf(nqn, nqn_len, "%s", ti.hostnqn);
			snprintf(id, id_len, "%s", ti.hostid);
			return true;
		}
	}
	return false;
}
