/* SPDX-License-Identifier: MIT */
/*
 * Copy's and Dataset Management's range lists, fetched from user memory
 * once per uring_cmd request. The security hook judges describe()'s view of
 * the list and the controller executes the list: if each read the user's
 * buffer, a thread could rewrite the list between the two (a double fetch)
 * and make the policy's decision stale. So both read one copy in engine
 * memory, attached to the request, and the controller's DMA is pointed at
 * that copy instead of the user's buffer (a bounce buffer, as a driver
 * bounces data a device must not see change).
 */
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "security/desc.h"

uint32_t nvme_range_list_bytes(uint8_t opcode, uint32_t cdw10, uint32_t cdw12)
{
	if (opcode == nvme_cmd_dsm)
		return ((cdw10 & 0xff) + 1) * (uint32_t)sizeof(struct nvme_dsm_range);
	if (opcode == nvme_cmd_copy) {
		/* formats 0h and 2h are 32 bytes an entry, 1h and 3h 40 */
		unsigned fmt = (cdw12 >> 8) & 0xf;
		uint32_t esz = (fmt == 0 || fmt == 2) ? sizeof(struct nvme_copy_range)
						      : sizeof(struct nvme_copy_range_f1);

		return ((cdw12 & 0xff) + 1) * esz;
	}
	return 0;
}

static struct nvme_range_list *range_list_fetch(struct nvme_host *h,
						const struct io_uring_cmd *ioucmd,
						const struct nvme_uring_cmd *u, bool vec)
{
	uint32_t bytes = nvme_range_list_bytes(u->opcode, u->cdw10, u->cdw12);
	unsigned nr = (u->opcode == nvme_cmd_dsm ? u->cdw10 : u->cdw12) % 256 + 1;
	/* bytes is a multiple of 8: the descriptions after the list are aligned */
	size_t desc_off = sizeof(struct nvme_range_list) + bytes;
	/* zeroed: a list longer than the user's data reads as zeros past it */
	struct nvme_range_list *l = calloc(1, desc_off + nr * sizeof(struct ucmd_desc_range));
	struct iov_iter it;
	size_t n;

	if (!l)
		return NULL;
	l->bytes = bytes;
	l->nr = nr;
	l->desc = (struct ucmd_desc_range *)(void *)((char *)l + desc_off);
	if (!u->data_len) {
		l->no_data = true;
		return l;
	}
	/* the same checks, in the same order, as a direct import */
	l->err = nvme_import_user_data(h, u, UCMD_WRITE, vec, ioucmd, &it);
	if (l->err)
		return l;
	l->user_count = it.count;
	n = it.count < bytes ? it.count : bytes;
	if (copy_from_iter(l->list, n, &it) != n)
		l->err = -EFAULT;
	iov_iter_release(&it);
	return l;
}

struct nvme_range_list *nvme_range_list_get(struct nvme_host *h,
						  const struct io_uring_cmd *ioucmd,
						  const struct nvme_uring_cmd *u, bool vec)
{
	struct nvme_range_list *l = io_uring_cmd_snap(ioucmd);

	if (l)
		return l;	/* fetched before, for this very request: never again */
	l = range_list_fetch(h, ioucmd, u, vec);
	if (l)
		io_uring_cmd_set_snap(ioucmd, l);
	return l;
}

int nvme_range_list_import(struct nvme_host *h, const struct io_uring_cmd *ioucmd,
			   const struct nvme_uring_cmd *u, bool vec, struct iov_iter *it,
			   size_t *user_count)
{
	const struct nvme_range_list *l = nvme_range_list_get(h, ioucmd, u, vec);

	if (!l)
		return -ENOMEM;
	if (l->err)
		return l->err;
	*user_count = l->user_count;
	/* the controller reads exactly the list: bytes, from engine memory */
	return import_ubuf(UCMD_WRITE, (uint64_t)(uintptr_t)l->list, l->bytes, it);
}
