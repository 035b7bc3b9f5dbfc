/* SPDX-License-Identifier: MIT */
/*
 * Disk statistics (Linux's iostats, what /sys/block/<disk>/stat shows and
 * fio's "Disk stats" and iostat read): per block device, the I/Os, sectors
 * and time of completed reads and writes, and the time the disk was busy.
 * Only requests from the block device are counted: passthrough requests are
 * not, as in Linux (blk_do_io_stat() skips them), which is part of what
 * passthrough saves.
 *
 * Time stamps cost what Linux's do: a request gets its start time from the
 * submitter's plug, read once per plug (blk_time_get_ns()), and the
 * completions of one CQ pass share one "now", as blk_mq_end_request_batch.
 */
#include "block/blk.h"
#include "ucmd/ucmd.h"

__thread struct blk_compl_time blk_compl_time;

uint64_t blk_time_get_ns(void)
{
	struct blk_plug *plug = blk_current_plug();

	if (!plug)
		return ktime_get_ns();
	if (!plug->cur_ktime)
		plug->cur_ktime = ktime_get_ns();
	return plug->cur_ktime;
}

static uint64_t blk_complete_time_ns(void)
{
	if (!blk_compl_time.depth)
		return ktime_get_ns();
	if (!blk_compl_time.now)
		blk_compl_time.now = ktime_get_ns();
	return blk_compl_time.now;
}

/*
 * Busy time, as Linux's update_io_ticks(): in whole milliseconds (its
 * jiffies), the clock's advance seen at a completion counts as busy; one
 * seen at a start after an idle spell only moves the stamp.
 */
static void update_io_ticks(struct blk_disk_stats *s, uint64_t now_ns, bool end)
{
	uint64_t ms = now_ns / 1000000u;
	uint64_t stamp = atomic_load_explicit(&s->stamp_ms, memory_order_relaxed);

	if (ms > stamp && atomic_compare_exchange_strong_explicit(&s->stamp_ms, &stamp, ms,
								  memory_order_relaxed,
								  memory_order_relaxed) && end)
		atomic_fetch_add_explicit(&s->io_ticks_ms, ms - stamp, memory_order_relaxed);
}

void __blk_account_io_start(struct request *rq)
{
	struct blk_disk_stats *s = rq->q->stats;

	if (!s)
		return;
	rq->start_time_ns = blk_time_get_ns();
	update_io_ticks(s, rq->start_time_ns, false);
}

void __blk_account_io_done(struct request *rq)
{
	struct blk_disk_stats *s = rq->q->stats;
	unsigned dir = (rq->cmd_flags & REQ_OP_DRV_OUT) ? 1 : 0;
	uint64_t now;

	if (!s)
		return;
	now = blk_complete_time_ns();
	/* a plug's cached start may be later than a fresh completion time */
	if (now < rq->start_time_ns)
		now = rq->start_time_ns;
	update_io_ticks(s, now, true);
	atomic_fetch_add_explicit(&s->ios[dir], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->sectors[dir], rq->data_len >> 9, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->nsecs[dir], now - rq->start_time_ns, memory_order_relaxed);
}

void blk_disk_stats_read(struct blk_disk_stats *s, struct ucmd_disk_stat *out)
{
	uint64_t nsecs = 0;

	for (unsigned d = 0; d < 2; d++) {
		/* one reading serves both the ticks and their sum */
		uint64_t ns = atomic_load_explicit(&s->nsecs[d], memory_order_relaxed);

		out->ios[d] = atomic_load_explicit(&s->ios[d], memory_order_relaxed);
		out->merges[d] = 0;	/* requests are never merged */
		out->sectors[d] = atomic_load_explicit(&s->sectors[d], memory_order_relaxed);
		out->ticks_ms[d] = ns / 1000000u;
		nsecs += ns;
	}
	out->io_ticks_ms = atomic_load_explicit(&s->io_ticks_ms, memory_order_relaxed);
	out->time_in_queue_ms = nsecs / 1000000u;
}
