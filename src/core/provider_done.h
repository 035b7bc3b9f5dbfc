/* SPDX-License-Identifier: MIT */
#ifndef UCMD_CORE_PROVIDER_DONE_H
#define UCMD_CORE_PROVIDER_DONE_H

struct ucmd_kiocb;
void io_req_provider_done(struct ucmd_kiocb *req);

#endif
