/* SPDX-License-Identifier: MIT */
/*
 * Describe a request's data to the controller: PRPs when every segment
 * boundary falls on a page boundary (what PRPs can express), SGLs otherwise
 * (any iovec array), a contiguous metadata pointer. Lists live in host
 * memory the request owns until it completes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define PRPS_PER_PAGE (NVME_PAGE_SIZE / sizeof(uint64_t))

static uint64_t seg_addr(const struct iovec *v)
{
	return (uint64_t)(uintptr_t)v->iov_base;
}

/* Non-empty segments only; zero-length iovecs carry nothing. */
static unsigned collect_segs(const struct iov_iter *it, const struct iovec **out,
			     unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < it->nr_segs && n < max; i++)
		if (it->iov[i].iov_len)
			out[n++] = &it->iov[i];
	return n;
}

static bool prp_capable(const struct iovec **segs, unsigned n)
{
	if (seg_addr(segs[0]) & 3)
		return false;	/* PRP entries are dword aligned */
	for (unsigned i = 0; i < n; i++) {
		uint64_t start = seg_addr(segs[i]), end = start + segs[i]->iov_len;

		if (i > 0 && (start & (NVME_PAGE_SIZE - 1)))
			return false;
		if (i < n - 1 && (end & (NVME_PAGE_SIZE - 1)))
			return false;
	}
	return true;
}

/*
 * The pages after the first byte's, in order, go straight where the
 * controller reads them: PRP2 for a second page, a PRP list for more. No
 * array of every page is built and thrown away (two pages took a malloc).
 */
static int nvme_setup_prps(struct nvme_request *req, const struct iovec **segs, unsigned n)
{
	const uint64_t mask = NVME_PAGE_SIZE - 1;
	uint64_t first = seg_addr(segs[0]);
	size_t nr_pages = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t s = seg_addr(segs[i]), e = s + segs[i]->iov_len;

		nr_pages += (size_t)(((e + mask) & ~mask) - (s & ~mask)) / NVME_PAGE_SIZE;
	}
	req->cmd.dptr.prp1 = first;
	req->cmd.dptr.prp2 = 0;
	if (nr_pages <= 1)
		return 0;
	if (nr_pages == 2) {
		/* the first segment's next page, or the second segment (page aligned) */
		bool spans = ((first & mask) + segs[0]->iov_len) > NVME_PAGE_SIZE;

		req->cmd.dptr.prp2 = spans ? (first & ~mask) + NVME_PAGE_SIZE
					   : seg_addr(segs[1]) & ~mask;
		return 0;
	}
	/* PRP list: 511 entries per page plus a chain pointer, or 512 on the last. */
	size_t entries = nr_pages - 1, nr_lists = 1;
	while (entries > nr_lists * (PRPS_PER_PAGE - 1) + 1)
		nr_lists++;
	uint64_t *lists = aligned_alloc(NVME_PAGE_SIZE, nr_lists * NVME_PAGE_SIZE);
	if (!lists)
		return -ENOMEM;
	memset(lists, 0, nr_lists * NVME_PAGE_SIZE);
	size_t li = 0, slot = 0, k = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t s = seg_addr(segs[i]) & ~mask, e = seg_addr(segs[i]) + segs[i]->iov_len;

		for (uint64_t p = s; p < e; p += NVME_PAGE_SIZE) {
			uint64_t *list = lists + li * PRPS_PER_PAGE;

			if (k++ == 0)
				continue;	/* PRP1's */
			if (slot == PRPS_PER_PAGE - 1 && k != nr_pages) {
				list[slot] = (uint64_t)(uintptr_t)(lists + (li + 1) * PRPS_PER_PAGE);
				li++;
				slot = 0;
				list = lists + li * PRPS_PER_PAGE;
			}
			list[slot++] = p;
		}
	}
	req->cmd.dptr.prp2 = (uint64_t)(uintptr_t)lists;
	req->dma_list = lists;
	req->dma_list_len = (uint32_t)(nr_lists * NVME_PAGE_SIZE);
	return 0;
}

static void sgl_set_data(struct ucmd_nvme_sgl_desc *d, const struct iovec *v)
{
	d->addr = seg_addr(v);
	d->length = (uint32_t)v->iov_len;
	memset(d->rsvd, 0, sizeof(d->rsvd));
	d->type = UCMD_NVME_SGL_DATA_BLOCK << 4;
}

static int nvme_setup_sgls(struct nvme_request *req, const struct iovec **segs, unsigned n)
{
	struct ucmd_nvme_sgl_desc *d = (struct ucmd_nvme_sgl_desc *)(void *)req->cmd.dptr.sgl1;

	req->cmd.flags = (uint8_t)((req->cmd.flags & ~UCMD_NVME_PSDT_MASK) |
				   UCMD_NVME_PSDT_SGL_MPTR_CONTIG);
	if (n == 1) {
		sgl_set_data(d, segs[0]);
		return 0;
	}
	/* One last segment holding every data block descriptor. */
	struct ucmd_nvme_sgl_desc *list = aligned_alloc(16, (size_t)n * sizeof(*list));
	if (!list)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		sgl_set_data(&list[i], segs[i]);
	d->addr = (uint64_t)(uintptr_t)list;
	d->length = n * (uint32_t)sizeof(*list);
	memset(d->rsvd, 0, sizeof(d->rsvd));
	d->type = UCMD_NVME_SGL_LAST_SEGMENT << 4;
	req->dma_list = list;
	req->dma_list_len = n * (uint32_t)sizeof(*list);
	return 0;
}

int nvme_pci_map_data(struct nvme_host *h, struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);
	const struct iovec *stack[UCMD_FAST_IOV], **segs = stack;
	unsigned n;
	int ret;

	req->cmd.mptr = rq->meta_len ? (uint64_t)(uintptr_t)rq->meta : 0;
	if (!req->has_data || !req->data.count)
		return 0;
	if (req->data.nr_segs == 1) {
		/* a flat buffer (the rule): count > 0, so its one segment is not empty */
		stack[0] = &req->data.iov[0];
		n = 1;
	} else {
		if (req->data.nr_segs > UCMD_FAST_IOV) {
			segs = malloc(req->data.nr_segs * sizeof(*segs));
			if (!segs)
				return -ENOMEM;
		}
		n = collect_segs(&req->data, segs, req->data.nr_segs);
	}
	if (!n)
		ret = 0;	/* count > 0 means a non-empty segment; this keeps gcc sure */
	else if (!req->sgl_only && prp_capable(segs, n))
		ret = nvme_setup_prps(req, segs, n);
	else if (h->sgl_supported)
		ret = nvme_setup_sgls(req, segs, n);
	else
		ret = -EINVAL;	/* not expressible as PRPs (or not to be) and no SGL support */
	if (segs != stack)
		free(segs);
	return ret;
}

void nvme_unmap_data(struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);

	/* one PRP page or none is the rule: skip free(NULL)'s call */
	if (req->dma_list) {
		free(req->dma_list);
		req->dma_list = NULL;
	}
}
