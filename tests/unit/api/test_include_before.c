/* SPDX-License-Identifier: MIT */
/* <ucmd/ucmd.h> first, then <liburing.h>: both compile, and work together. */
#include <fcntl.h>
#include <ucmd/ucmd.h>
#include <liburing.h>

#include "include_body.h"

int main(void)
{
	int ret = include_order_run();

	if (ret)
		fprintf(stderr, "ucmd before liburing: step %d failed\n", ret);
	return ret;
}
