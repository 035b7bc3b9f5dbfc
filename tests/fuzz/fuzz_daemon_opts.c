/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: ucmdd's option strings that carry settings, decoded
 * from the command line (or a systemd unit) -- `--nvme-tcp
 * ADDR[:PORT][,KEY=VALUE...]` (nvmet_tcp_parse, src/nvme/target/tcp.c) and `--limit
 * KEY=N[,...]` (srv_limits_parse, src/server/quota.c).
 *
 * Input: one byte choosing the decoder, then the string (cut at its first
 * NUL; libFuzzer's copy is exactly as long as the input, so ASan sees a
 * read past the string's end).
 *
 * Invariants: the answer is 0 or -EINVAL (-ENOMEM allowed for --limit);
 * the same string gets the same answer twice; nvmet_tcp_parse with and without
 * limits agree (the limits never make an address valid); an accepted
 * address is AF_INET or AF_INET6 with the length of its sockaddr and a
 * port from 1 to 65535; an accepted --limit leaves every limit at most
 * 1000000, and a single refused KEY=N changes nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/quota.h"
#include "nvme/target/tcp.h"

static void check_tcp(const char *s)
{
	struct sockaddr_storage ss, ss2;
	struct nvmet_tcp_limits lim;
	socklen_t len = 0, len2 = 0;
	int r = nvmet_tcp_parse(s, &ss, &len, &lim), r2 = nvmet_tcp_parse_addr(s, &ss2, &len2);

	if ((r != 0 && r != -EINVAL) || r != r2)
		abort();
	if (r)
		return;
	if (len != len2 || memcmp(&ss, &ss2, len))
		abort();
	if (ss.ss_family == AF_INET) {
		if (len != sizeof(struct sockaddr_in) || !((struct sockaddr_in *)&ss)->sin_port)
			abort();
	} else if (ss.ss_family == AF_INET6) {
		if (len != sizeof(struct sockaddr_in6) || !((struct sockaddr_in6 *)&ss)->sin6_port)
			abort();
	} else {
		abort();
	}
}

static void check_limits(const char *s)
{
	struct srv_limits lim = srv_limits_default, again = srv_limits_default;
	int r = srv_limits_parse(s, &lim), r2 = srv_limits_parse(s, &again);

	if ((r != 0 && r != -EINVAL && r != -ENOMEM) || (r != r2 && r != -ENOMEM && r2 != -ENOMEM))
		abort();
	if (r == -EINVAL && memcmp(&lim, &srv_limits_default, sizeof(lim)) &&
	    !memchr(s, ',', strlen(s)))
		abort();	/* one bad KEY=N alone changes nothing */
	if (r)
		return;
	if (memcmp(&lim, &again, sizeof(lim)))
		abort();
	for (unsigned i = 0; i < SRV_RES_NR; i++)
		if (lim.max[i] > 1000000)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	if (data[0] & 1)
		check_limits(s);
	else
		check_tcp(s);
	free(s);
	return 0;
}
