/* SPDX-License-Identifier: MIT */
/*
 * How a provider's completion reaches the CQ: on an IOPOLL ring the request
 * is only marked, and the poller reaps it; otherwise it is completed by the
 * ring's owner: at once from the owner's task work, as task work otherwise.
 */
#include "core/core.h"
#include "core/provider_done.h"

static void io_req_complete_tw(struct ucmd_tw_node *node)
{
	io_req_complete_or_defer((struct ucmd_kiocb *)((char *)node - offsetof(struct ucmd_kiocb, tw)));
}

void io_req_provider_done(struct ucmd_kiocb *req)
{
	if (req->ctx->flags & IORING_SETUP_IOPOLL) {
		__atomic_fetch_or(&req->flags, REQ_F_IOPOLL_DONE, __ATOMIC_RELEASE);
		return;
	}
	/*
	 * The owner completes at once when it is running task work (the usual
	 * case: a provider's io_uring_cmd_complete_in_task() callback), as
	 * Linux does with IO_URING_F_COMPLETE_DEFER. While ->issue is still
	 * on the stack for this request it must not be freed under the
	 * provider, so that case (and every other thread) goes through task
	 * work. Another thread never reads req->issuing: the first test fails.
	 */
	if (current_ctx == req->ctx && !req->issuing) {
		io_req_complete_or_defer(req);
		return;
	}
	io_req_task_work_add(req, io_req_complete_tw);
}
