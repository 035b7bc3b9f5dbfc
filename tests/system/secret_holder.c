/* SPDX-License-Identifier: MIT */
/*
 * The victim of tests/system/daemon_client_mm.sh and daemon_pid_reuse.sh:
 * built by them, set-user-ID root, a page of secret that a ucmdd client must
 * never reach through the daemon.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char pat[] = "ROOT-ONLY-SECRET-0123456789abcde";
static char secret[4096] __attribute__((aligned(4096)));

/* Prints "pid euid address", waits for a line, then says whether the page is intact. */
int main(void)
{
	char line[16];
	int intact = 1;

	for (size_t i = 0; i < sizeof(secret); i += sizeof(pat) - 1)
		memcpy(secret + i, pat, sizeof(pat) - 1);
	printf("%d %d %lx\n", (int)getpid(), (int)geteuid(), (unsigned long)secret);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (size_t i = 0; i < sizeof(secret); i += sizeof(pat) - 1)
		intact &= !memcmp(secret + i, pat, sizeof(pat) - 1);
	printf("%s\n", intact ? "intact" : "overwritten");
	return 0;
}
