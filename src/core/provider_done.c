/* SPDX-License-Identifier: MIT */
/*
 * How a provider's completion reaches the CQ: on an IOPOLL ring the request
 * is only marked, and the poller reaps it; otherwise it is completed by the
 * ring's owner, at once when the provider runs in the owner's context and
 * as task work when it runs on any other thread.
 */
#include "core/core.h"
#include "core/provider_done.h"

static void io_req_complete_tw(struct ucmd_tw_node *node)
{
	io_req_complete((struct ucmd_kiocb *)((char *)node - offsetof(struct ucmd_kiocb, tw)));
}

void io_req_provider_done(struct ucmd_kiocb *req)
{
	if (req->ctx->flags & IORING_SETUP_IOPOLL) {
		__atomic_fetch_or(&req->flags, REQ_F_IOPOLL_DONE, __ATOMIC_RELEASE);
		return;
	}
	/*
	 * Even in the owner's context this goes through the (local) task work
	 * list: the provider may still be inside ->issue for this request.
	 */
	io_req_task_work_add(req, io_req_complete_tw);
}
