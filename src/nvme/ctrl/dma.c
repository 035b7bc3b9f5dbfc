/* SPDX-License-Identifier: MIT */
/*
 * Host memory for data transfers: PRP entries and lists, SGL descriptors and
 * segments, and the metadata pointer, all turned into iovecs that point
 * straight into host memory (through dma->map) so that stores copy once.
 *
 * Host memory is the application's: it may be unmapped at any time, and
 * nothing the host driver checked before submission still holds. Every
 * access to it, here and in the stores, goes through the user memory
 * accessor (uaccess/uaccess.h), and one that cannot be made completes the
 * command with Data Transfer Error, as a device whose DMA met an IOMMU fault
 * would, instead of crashing the process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"
#include "uaccess/uaccess.h"

#define MAX_SGL_DESCS	4096	/* bounds a malicious descriptor chain */
#define ST_XFER		(UCMD_GEN(NVME_SC_DATA_XFER_ERROR) | UCMD_DNR)
#define PRPS_PER_PAGE	(UCMD_PAGE_SIZE / 8)

/*
 * One command's DMA window (ctrl_set_dma_window): the host is asked once per
 * command, its answer kept in the request, so that data, metadata and a
 * short transfer's mapping share it.
 */
struct dma_win {
	bool on;
	const struct ucmd_dma_window *w;
};

/*
 * Whether [addr, addr + len) lies in the pages of [base, base + blen): an
 * IOMMU maps pages, and Linux's PRPs are page-granular too, so a device may
 * write a one-block read into the rest of a 100-byte buffer's page. The
 * host's buffers for another's command are whole pages of their own (a
 * bounce, a shared region's, the NVMe/TCP target's); only the pages are
 * the limit.
 */
static bool range_in(uint64_t addr, uint64_t len, uint64_t base, uint64_t blen)
{
	const uint64_t mask = UCMD_PAGE_SIZE - 1;
	uint64_t lo = base & ~mask, end = base + blen;

	if (!blen || end < base || end > UINT64_MAX - mask)
		return false;
	end = (end + mask) & ~mask;
	return addr >= lo && len <= end - lo && addr - lo <= end - lo - len;
}

static bool window_has(const struct ucmd_dma_window *w, uint64_t addr, uint64_t len)
{
	if (addr + len < addr)
		return false;
	for (unsigned i = 0; i < w->nr_seg; i++)
		if (range_in(addr, len, (uint64_t)(uintptr_t)w->seg[i].iov_base, w->seg[i].iov_len))
			return true;
	return range_in(addr, len, w->list, w->list_len) ||
	       range_in(addr, len, w->meta, w->meta_len);
}

static inline __attribute__((always_inline)) void win_get(struct ucmd_ctrl *c, struct ctrl_req *req,
						    struct dma_win *w)
{
	if (req->win_state == CTRL_WIN_UNASKED)
		req->win_state = c->dma_window &&
				 c->dma_window(c->dma_window_arg, req->sqid, req->cmd.cid, &req->win) ?
				 CTRL_WIN_ON : CTRL_WIN_NONE;
	w->on = req->win_state == CTRL_WIN_ON;
	w->w = &req->win;
}

bool ctrl_dma_windowed(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct dma_win w;

	win_get(c, req, &w);
	return w.on;
}

/* dma->map, within the command's window when it has one */
static inline void *win_map(struct ucmd_ctrl *c, const struct dma_win *w, uint64_t addr, uint64_t len)
{
	if (__builtin_expect(w->on, 0) && !window_has(w->w, addr, len))
		return NULL;
	return c->dma->map(c->dma, addr, len);
}

void ctrl_iovs_init(struct ctrl_iovs *v)
{
	memset(v, 0, sizeof(*v));
}

void ctrl_iovs_free(struct ctrl_iovs *v)
{
	free(v->iov);
	ctrl_iovs_init(v);
}

void ctrl_iovs_init_spare(struct ucmd_ctrl *c, struct ctrl_iovs *v)
{
	ctrl_iovs_init(v);
	if (c->iov_spare) {
		v->iov = c->iov_spare;
		v->cap = c->iov_spare_cap;
		c->iov_spare = NULL;
	}
}

void ctrl_iovs_free_spare(struct ucmd_ctrl *c, struct ctrl_iovs *v)
{
	if (v->iov && !c->iov_spare) {
		c->iov_spare = v->iov;
		c->iov_spare_cap = v->cap;
		ctrl_iovs_init(v);
		return;
	}
	ctrl_iovs_free(v);
}

int ctrl_iovs_add(struct ctrl_iovs *v, void *base, size_t len)
{
	if (!len)
		return 0;
	/* Adjacent host pages usually are contiguous: merge them. */
	if (v->cnt && (char *)v->iov[v->cnt - 1].iov_base + v->iov[v->cnt - 1].iov_len == base) {
		v->iov[v->cnt - 1].iov_len += len;
		v->len += len;
		return 0;
	}
	if (v->cnt == v->cap) {
		int cap = v->cap ? v->cap * 2 : 8;
		struct iovec *n = realloc(v->iov, (size_t)cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->iov = n;
		v->cap = cap;
	}
	v->iov[v->cnt].iov_base = base;
	v->iov[v->cnt].iov_len = len;
	v->cnt++;
	v->len += len;
	return 0;
}

static uint16_t add_host(struct ucmd_ctrl *c, const struct dma_win *w, struct ctrl_iovs *out,
			 uint64_t addr, uint64_t len)
{
	void *p = win_map(c, w, addr, len);

	if (!p)
		return UCMD_GEN(NVME_SC_DATA_XFER_ERROR) | UCMD_DNR;
	if (ctrl_iovs_add(out, p, len))
		return UCMD_GEN(NVME_SC_INTERNAL);
	return 0;
}

/*
 * PRP1's page and, when the rest fits in one page, PRP2's: every check of
 * those two entries, into iov[2] (a second page adjacent to the first
 * merges, as ctrl_iovs_add merges). *rest is what is left for a PRP list at
 * PRP2 (0: none). Shared by map_prp and the short path (ctrl_map_prp_short).
 */
static inline uint16_t prp_pages(struct ucmd_ctrl *c, const struct dma_win *w, uint64_t prp1,
				 uint64_t prp2, uint64_t len, struct iovec iov[2], int *cnt,
				 uint64_t *rest)
{
	uint64_t chunk;
	void *p;

	*cnt = 0;
	*rest = 0;
	/* PRP1 may start anywhere in a page, but dword aligned. */
	if (prp1 & 3)
		return UCMD_GEN(NVME_SC_PRP_INVALID_OFFSET) | UCMD_DNR;
	chunk = UCMD_PAGE_SIZE - (prp1 & (UCMD_PAGE_SIZE - 1));
	if (chunk > len)
		chunk = len;
	if (!(p = win_map(c, w, prp1, chunk)))
		return ST_XFER;
	iov[0].iov_base = p;
	iov[0].iov_len = chunk;
	*cnt = 1;
	len -= chunk;
	if (!len)
		return 0;
	if (len > UCMD_PAGE_SIZE) {
		*rest = len;
		return 0;
	}
	/* PRP2 is the second (and last) data page. */
	if (prp2 & (UCMD_PAGE_SIZE - 1))
		return UCMD_GEN(NVME_SC_PRP_INVALID_OFFSET) | UCMD_DNR;
	if (!(p = win_map(c, w, prp2, len)))
		return ST_XFER;
	if (p == (char *)iov[0].iov_base + chunk) {
		iov[0].iov_len += len;
		return 0;
	}
	iov[1].iov_base = p;
	iov[1].iov_len = len;
	*cnt = 2;
	return 0;
}

static uint16_t map_prp(struct ucmd_ctrl *c, const struct dma_win *w, uint64_t prp1, uint64_t prp2,
			uint64_t len, struct ctrl_iovs *out)
{
	struct iovec head[2];
	uint64_t chunk, rem;
	uint16_t st;
	int n;

	st = prp_pages(c, w, prp1, prp2, len, head, &n, &rem);
	for (int i = 0; i < n; i++)
		if (ctrl_iovs_add(out, head[i].iov_base, head[i].iov_len))
			return UCMD_GEN(NVME_SC_INTERNAL);
	if (st || !rem)
		return st;
	/* PRP2 points to a PRP list; its last entry chains to the next list page. */
	if (prp2 & 7)
		return UCMD_GEN(NVME_SC_PRP_INVALID_OFFSET) | UCMD_DNR;
	uint64_t list = prp2;
	while (rem) {
		unsigned nent = (UCMD_PAGE_SIZE - (list & (UCMD_PAGE_SIZE - 1))) / 8;
		/* The entries this list page can still supply: the data pages left, and a chain. */
		uint64_t want = (rem + UCMD_PAGE_SIZE - 1) / UCMD_PAGE_SIZE;
		uint64_t ents[PRPS_PER_PAGE];
		const uint64_t *ent;

		if (want < nent)
			nent = (unsigned)want;
		/* only the entries read: a window (ctrl.h) may end with the list */
		ent = win_map(c, w, list, (uint64_t)nent * 8);
		if (!ent || copy_from_user(ents, ent, (size_t)nent * 8))
			return ST_XFER;
		for (unsigned i = 0; i < nent && rem; i++) {
			uint64_t e = ents[i];

			if (i == nent - 1 && rem > UCMD_PAGE_SIZE) {
				/*
				 * The next list page starts at offset 0 (QEMU's
				 * nvme_map_prp checks the same): a list starting
				 * in its page's last slot could otherwise chain to
				 * itself and walk forever under the lock; page
				 * aligned, every list page maps 511 data pages.
				 */
				if (e & (UCMD_PAGE_SIZE - 1))
					return UCMD_GEN(NVME_SC_PRP_INVALID_OFFSET) | UCMD_DNR;
				list = e;
				break;
			}
			if (e & (UCMD_PAGE_SIZE - 1))
				return UCMD_GEN(NVME_SC_PRP_INVALID_OFFSET) | UCMD_DNR;
			chunk = rem < UCMD_PAGE_SIZE ? rem : UCMD_PAGE_SIZE;
			if ((st = add_host(c, w, out, e, chunk)))
				return st;
			rem -= chunk;
		}
	}
	return 0;
}

/*
 * Walk an SGL starting at one descriptor. Bit bucket descriptors are not
 * supported (SGLS bit 16 clear), so every data byte lands in host memory.
 */
static uint16_t map_sgl(struct ucmd_ctrl *c, const struct dma_win *w,
			const struct ucmd_nvme_sgl_desc *first, uint64_t len, struct ctrl_iovs *out)
{
	struct ucmd_nvme_sgl_desc d = *first;
	const struct ucmd_nvme_sgl_desc *seg = NULL;
	unsigned nseg = 0, idx = 0, total = 0;
	bool last_seg = false;
	uint64_t got = 0, take;
	uint16_t st;

	for (;;) {
		uint8_t type = d.type >> 4, sub = d.type & 0xf;

		if (++total > MAX_SGL_DESCS)
			return UCMD_GEN(NVME_SC_SGL_INVALID_COUNT) | UCMD_DNR;
		switch (type) {
		case UCMD_NVME_SGL_DATA_BLOCK:
			if (sub != 0)	/* only "address" subtype: no keyed/offset SGLs */
				return UCMD_GEN(NVME_SC_SGL_INVALID_TYPE) | UCMD_DNR;
			/*
			 * Longer than the transfer: the rest is not touched
			 * (SGLS bit 18, NVME_CTRL_SGLS_OVERSIZE), as a read of
			 * one block into a larger buffer is on Linux.
			 */
			take = d.length < len - got ? d.length : len - got;
			if (take && (st = add_host(c, w, out, d.addr, take)))
				return st;
			got += take;
			break;
		case UCMD_NVME_SGL_SEGMENT:
		case UCMD_NVME_SGL_LAST_SEGMENT:
			if (sub != 0)
				return UCMD_GEN(NVME_SC_SGL_INVALID_TYPE) | UCMD_DNR;
			/* A segment pointer must be the last descriptor of its segment,
			 * and a last segment may not point further. */
			if (last_seg || (seg && idx != nseg))
				return UCMD_GEN(NVME_SC_SGL_INVALID_LAST) | UCMD_DNR;
			if (!d.length || d.length % sizeof(d))
				return UCMD_GEN(NVME_SC_SGL_INVALID_LAST) | UCMD_DNR;
			seg = win_map(c, w, d.addr, d.length);
			if (!seg)
				return UCMD_GEN(NVME_SC_DATA_XFER_ERROR) | UCMD_DNR;
			nseg = d.length / sizeof(d);
			idx = 0;
			last_seg = type == UCMD_NVME_SGL_LAST_SEGMENT;
			break;
		default:
			return UCMD_GEN(NVME_SC_SGL_INVALID_TYPE) | UCMD_DNR;
		}
		if (!seg || idx == nseg)
			break;
		if (copy_from_user(&d, &seg[idx++], sizeof(d)))
			return ST_XFER;
	}
	if (got != len)
		return UCMD_GEN(NVME_SC_SGL_INVALID_DATA) | UCMD_DNR;
	return 0;
}

static uint16_t map_data(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t len,
			 struct ctrl_iovs *out)
{
	struct dma_win w;

	if (!len)
		return 0;
	if (c->p.mdts && len > ((uint64_t)UCMD_PAGE_SIZE << c->p.mdts))
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	win_get(c, req, &w);
	if ((req->cmd.flags & UCMD_NVME_PSDT_MASK) == UCMD_NVME_PSDT_PRP)
		return map_prp(c, &w, req->cmd.dptr.prp1, req->cmd.dptr.prp2, len, out);
	struct ucmd_nvme_sgl_desc d;

	memcpy(&d, req->cmd.dptr.sgl1, sizeof(d));
	return map_sgl(c, &w, &d, len, out);
}

bool ctrl_prp_short(const struct ctrl_req *req, uint64_t len)
{
	uint64_t prp1 = req->cmd.dptr.prp1;

	/* PRP1's page holds PAGE - offset bytes, PRP2's one page more */
	return (req->cmd.flags & UCMD_NVME_PSDT_MASK) == UCMD_NVME_PSDT_PRP &&
	       len <= 2 * UCMD_PAGE_SIZE - (prp1 & (UCMD_PAGE_SIZE - 1));
}

uint16_t ctrl_map_prp_short(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t len,
			    struct iovec iov[2], int *cnt)
{
	struct dma_win w;
	uint64_t rest;

	/* map_data's checks, in its order (a short transfer is within any MDTS) */
	*cnt = 0;
	if (!len)
		return 0;
	if (c->p.mdts && len > ((uint64_t)UCMD_PAGE_SIZE << c->p.mdts))
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	win_get(c, req, &w);
	return prp_pages(c, &w, req->cmd.dptr.prp1, req->cmd.dptr.prp2, len, iov, cnt, &rest);
}

/*
 * A PRP list or SGL can turn out bad after some entries were mapped: the
 * partial list is released here, so that no caller has to (and none leaks).
 */
uint16_t ctrl_map_data(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t len,
			struct ctrl_iovs *out)
{
	uint16_t st = map_data(c, req, len, out);

	if (st)
		ctrl_iovs_free(out);
	return st;
}

static uint16_t map_meta(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t len,
			 struct ctrl_iovs *out)
{
	uint8_t psdt = req->cmd.flags & UCMD_NVME_PSDT_MASK;
	struct dma_win w;

	if (!len)
		return 0;
	win_get(c, req, &w);
	if (psdt == UCMD_NVME_PSDT_SGL_MPTR_SGL) {
		/* MPTR addresses one SGL descriptor describing the metadata. */
		const struct ucmd_nvme_sgl_desc *d = win_map(c, &w, req->cmd.mptr, sizeof(*d));
		struct ucmd_nvme_sgl_desc copy;

		if (!d || copy_from_user(&copy, d, sizeof(copy)))
			return ST_XFER;
		uint16_t st = map_sgl(c, &w, &copy, len, out);

		if ((st & 0xff) == NVME_SC_SGL_INVALID_DATA && !(st & 0x700))
			st = UCMD_GEN(NVME_SC_SGL_INVALID_METADATA) | UCMD_DNR;
		return st;
	}
	/* PRPs or PSDT 01b: MPTR is one contiguous buffer. */
	return add_host(c, &w, out, req->cmd.mptr, len);
}

uint16_t ctrl_map_meta(struct ucmd_ctrl *c, struct ctrl_req *req, uint64_t len,
			struct ctrl_iovs *out)
{
	uint16_t st = map_meta(c, req, len, out);

	if (st)
		ctrl_iovs_free(out);
	return st;
}

uint16_t ctrl_iovs_copy_out(const struct ctrl_iovs *v, const void *buf, uint64_t len)
{
	const char *s = buf;

	for (int i = 0; i < v->cnt && len; i++) {
		size_t n = v->iov[i].iov_len < len ? v->iov[i].iov_len : len;

		if (copy_to_user(v->iov[i].iov_base, s, n))
			return ST_XFER;
		s += n;
		len -= n;
	}
	return 0;
}

uint16_t ctrl_iovs_zero_from(const struct ctrl_iovs *v, uint64_t start)
{
	for (int i = 0; i < v->cnt; i++) {
		size_t l = v->iov[i].iov_len;

		if (start >= l) {
			start -= l;
			continue;
		}
		if (clear_user((char *)v->iov[i].iov_base + start, l - start))
			return ST_XFER;
		start = 0;
	}
	return 0;
}

uint16_t ctrl_iovs_copy_in(const struct ctrl_iovs *v, void *buf, uint64_t len)
{
	char *d = buf;

	for (int i = 0; i < v->cnt && len; i++) {
		size_t n = v->iov[i].iov_len < len ? v->iov[i].iov_len : len;

		if (copy_from_user(d, v->iov[i].iov_base, n))
			return ST_XFER;
		d += n;
		len -= n;
	}
	return 0;
}

uint16_t ctrl_data_to_host(struct ucmd_ctrl *c, struct ctrl_req *req, const void *buf,
			    uint64_t len)
{
	struct ctrl_iovs v;
	uint16_t st;

	ctrl_iovs_init(&v);
	st = ctrl_map_data(c, req, len, &v);
	if (!st)
		st = ctrl_iovs_copy_out(&v, buf, len);
	ctrl_iovs_free(&v);
	return st;
}

uint16_t ctrl_data_from_host(struct ucmd_ctrl *c, struct ctrl_req *req, void *buf, uint64_t len)
{
	struct ctrl_iovs v;
	uint16_t st;

	ctrl_iovs_init(&v);
	st = ctrl_map_data(c, req, len, &v);
	if (!st)
		st = ctrl_iovs_copy_in(&v, buf, len);
	ctrl_iovs_free(&v);
	return st;
}

int ctrl_iov_take(struct ctrl_iov_cursor *cur, uint64_t len, struct ctrl_iovs *dst)
{
	while (len) {
		const struct iovec *src;
		size_t n;

		if (cur->idx >= cur->v->cnt)
			return -EINVAL;
		src = &cur->v->iov[cur->idx];
		n = src->iov_len - cur->off;
		if (n > len)
			n = len;
		if (ctrl_iovs_add(dst, (char *)src->iov_base + cur->off, n))
			return -ENOMEM;
		cur->off += n;
		len -= n;
		if (cur->off == src->iov_len) {
			cur->idx++;
			cur->off = 0;
		}
	}
	return 0;
}

int ctrl_store_xfer(struct store *st, const struct ctrl_iovs *v, uint64_t off, bool write,
		     bool fua)
{
	for (int i = 0; i < v->cnt; i += UCMD_IOV_CHUNK) {
		int n = v->cnt - i < UCMD_IOV_CHUNK ? v->cnt - i : UCMD_IOV_CHUNK;
		uint64_t bytes = 0;
		int ret;

		for (int j = 0; j < n; j++)
			bytes += v->iov[i + j].iov_len;
		ret = write ? st->ops->writev(st, &v->iov[i], n, off, fua)
			    : st->ops->readv(st, &v->iov[i], n, off);
		if (ret < 0)
			return ret;
		off += bytes;
	}
	return 0;
}
