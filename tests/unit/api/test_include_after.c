/* SPDX-License-Identifier: MIT */
/* <liburing.h> first, then <ucmd/ucmd.h>: both compile, and work together. */
#include <fcntl.h>
#include <liburing.h>
#include <ucmd/ucmd.h>
#include <ucmd/kernel.h>

#include "include_body.h"

int main(void)
{
	int ret = include_order_run();

	if (ret)
		fprintf(stderr, "liburing before ucmd: step %d failed\n", ret);
	return ret;
}
