/* SPDX-License-Identifier: MIT */
/*
 * The NVMe host driver: attaches to an emulated controller (struct
 * ucmd_ctrl) the way nvme-pci attaches to a PCIe function, or to a remote
 * controller over NVMe/TCP the way nvme-tcp does, and registers
 * the devices Linux would create for it on an engine:
 *   nvme<X>     controller character device (NVME_URING_CMD_ADMIN[_VEC])
 *   ng<X>n<Y>   generic namespace character device (NVME_URING_CMD_IO[_VEC])
 *   nvme<X>n<Y> block device (READ/WRITE family)
 *
 * Interrupts: attach makes the host its controller's interrupt target, and
 * detach disconnects it, so no interrupt reaches a detached host. A
 * controller has one host at a time.
 *
 * Lifetime: detach every host before destroying its controller or engine.
 * Errors are negative errno values; ucmd_nvme_attach() also leaves the
 * reason in ucmd_last_error().
 */
#ifndef UCMD_NVME_H
#define UCMD_NVME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

struct ucmd_engine;
struct ucmd_ctrl;
struct ucmd_nvme_host;

struct ucmd_nvme_host_opts {
	unsigned instance;		/* X in nvmeX, ngXnY */
	unsigned nr_io_queues;		/* interrupt-driven queue pairs; 0: 2 */
	unsigned nr_poll_queues;	/* queue pairs without interrupts (IOPOLL) */
	unsigned queue_depth;		/* per I/O queue; 0: 64 */
};

/*
 * Enable the controller, create queues, scan namespaces, add the devices;
 * *out is the host until ucmd_nvme_detach(). opts NULL: all defaults
 * (instance 0). -EINVAL for a NULL e, ctrl or out,
 * -EBUSY when the controller already has a host, -EEXIST when the engine
 * already has devices of that instance, or the error of bring-up.
 */
int  ucmd_nvme_attach(struct ucmd_engine *e, struct ucmd_ctrl *ctrl,
		      const struct ucmd_nvme_host_opts *opts, struct ucmd_nvme_host **out);
/* Remove the devices, cancel what is in flight, disable the controller. */
void ucmd_nvme_detach(struct ucmd_nvme_host *host);
/*
 * A controller reset, as NVME_IOCTL_RESET on the controller's device
 * (nvme-cli's "nvme reset"): queues stopped, CC.EN cleared and CSTS.RDY
 * awaited, commands in flight ended (a passthrough command returns
 * -EINTR, as in Linux), then the controller enabled again with the same
 * queues. Firmware committed for activation at the next reset becomes
 * active. -EBUSY while another reset runs, -ENOTTY on a transport without
 * one (NVMe/TCP), -EIO when the controller does not come back (the host
 * is then stopped: detach it).
 */
int  ucmd_nvme_reset(struct ucmd_nvme_host *host);

/*
 * NVMe/TCP: the host's side of a fabrics connection. A zeroed struct (or
 * NULL) takes every default.
 */
struct ucmd_nvme_tcp_opts {
	const char *hostnqn;	/* NULL: /etc/nvme/hostnqn, else a generated
				 * nqn.2014-08.org.nvmexpress:uuid:<uuid> */
	const char *hostid;	/* a UUID; NULL: /etc/nvme/hostid, else the host NQN's UUID */
	bool hdr_digest;	/* ask for header digests (CRC32C) */
	bool data_digest;	/* ask for data digests */
	unsigned kato_ms;	/* keep-alive timeout; 0: 5000. Keep Alive every KATO/2 */
	/*
	 * A lost connection (target restarted, TCP reset): the association is
	 * re-established every reconnect_delay_ms (0: 10000) until
	 * ctrl_loss_tmo_ms (0: 600000; -1: forever) has passed, Linux's
	 * defaults. Commands in flight are sent again, new ones wait; after
	 * ctrl_loss_tmo_ms they fail with -ENOTCONN. no_reconnect: fail the
	 * commands of a lost connection with -EIO at once (ctrl_loss_tmo=0).
	 */
	unsigned reconnect_delay_ms;
	int ctrl_loss_tmo_ms;
	bool no_reconnect;
};

/*
 * Attach to the NVMe/TCP controller of url, "nvme-tcp://HOST[:PORT]/SUBNQN"
 * (PORT 4420 by default, HOST a name, an IPv4 or a [IPv6] address; the
 * options "?hdgst", "&ddgst" ask for the digests too, "reconnect_delay=S"
 * and "ctrl_loss_tmo=S" (seconds; -1 forever, 0 no reconnect) override
 * topts' reconnect settings, "icresp_timeout=S", "admin_timeout=S" and
 * "io_timeout=S" bound the waits for a silent controller: Linux's 10, 60
 * and 30 s; a command without timeout_ms gets the admin or I/O one,
 * -ETIMEDOUT for an attach that meets one): one connection per
 * queue, Connect, the controller enabled through Property Set, then the
 * same devices as ucmd_nvme_attach() makes, on e. ucmd_nvme_detach()
 * shuts the controller down and closes the connections. -EINVAL for a
 * NULL argument or a bad URL, -ECONNREFUSED when the target refuses the
 * connection or the Connect, -EPROTO for a malformed answer; the reason is
 * in ucmd_last_error(). Separate metadata buffers are refused (-EINVAL),
 * as NVMe over Fabrics has none.
 */
int  ucmd_nvme_attach_tcp(struct ucmd_engine *e, const char *url,
			  const struct ucmd_nvme_host_opts *opts,
			  const struct ucmd_nvme_tcp_opts *topts, struct ucmd_nvme_host **out);

/* What an NVMe/TCP attach negotiated (for tools and tests). */
struct ucmd_nvme_tcp_info {
	char hostnqn[224];
	char subnqn[224];
	uint16_t cntlid;
	unsigned nr_queues;		/* connections: admin + I/O */
	bool hdr_digest, data_digest;	/* in use on the admin connection */
	uint32_t io_inline_max;		/* in-capsule data bytes on I/O queues */
	unsigned long keep_alives;	/* Keep Alive commands sent so far */
	unsigned long reconnects;	/* associations re-established after a loss */
	unsigned long polled_completions; /* completed by a poller on a polled queue */
	unsigned long waited_completions; /* completed by a ring's waiter reading an I/O queue */
	/*
	 * Where the controller is, as Linux's sysfs "address" of an nvme-tcp
	 * controller names it: the URL's host ([v6] without brackets) and
	 * port, and the local address of the admin connection (numeric, no
	 * port) while the association is live, "" while it is reconnected.
	 */
	char traddr[256];
	char trsvcid[16];
	char src_addr[64];
	char hostid[37];		/* the Connect's host ID, as a UUID string */
};
/* -EINVAL unless host came from ucmd_nvme_attach_tcp(). */
int ucmd_nvme_tcp_info(struct ucmd_nvme_host *host, struct ucmd_nvme_tcp_info *info);

/*
 * Native multipath, as Linux's: the nr URLs (1 to 8) name controllers of
 * one NVM subsystem (the same subsystem NQN in every URL and in every
 * controller's Identify; else -EINVAL before or after connecting, naming
 * the path). Each is attached as ucmd_nvme_attach_tcp() does, with
 * instance opts->instance + i: nvme<X+i> is each controller's device, and
 * its namespaces get none of their own (Linux hides the per-path disks).
 * One head per namespace owns ng<X>n<Y> and nvme<X>n<Y>; each request
 * takes the path nvme_find_path() would: ANA optimized before
 * non-optimized, never inaccessible, persistent loss or change, nor a
 * controller being reconnected; the URL option "iopolicy=numa" (default:
 * the first usable optimized path), "round-robin" or "queue-depth" picks
 * among them. The ANA log (0Ch) is read at attach, on the ANA Change
 * notice (an Asynchronous Event Request is kept outstanding on each
 * path), when an I/O gets an ANA status, and every 10 s. A block I/O (nvme<X>n<Y>) that fails with
 * a path error (NVMe status 0x3xx without DNR, or its connection lost) is
 * sent again on another path, waiting while no path is usable and some
 * may become so (-EIO when none can); passthrough on ng<X>n<Y> is never
 * sent again: its status is the caller's, and with no usable path it is
 * -EINVAL (uring_cmd) or -EWOULDBLOCK (ioctl), Linux's. A path that
 * cannot be reached (refused, timed out, no route) is left out and tried
 * again every reconnect_delay until ctrl_loss_tmo, joining the heads once
 * connected (its device nvme<X+i> then); with none reachable, or another
 * error of a path, the call fails (the others detached), with the path in
 * ucmd_last_error().
 */
struct ucmd_nvme_subsys;
int  ucmd_nvme_attach_tcp_multipath(struct ucmd_engine *e, const char *const *urls, unsigned nr,
				    const struct ucmd_nvme_host_opts *opts,
				    const struct ucmd_nvme_tcp_opts *topts,
				    struct ucmd_nvme_subsys **out);
/*
 * The same over the controllers of an emulated NVM subsystem
 * (ucmd_ctrl_controllers(ctrl), ctrl being its controller 1): controller
 * i + 1 is path i, nvme<X+i>, attached as ucmd_nvme_attach() does; the
 * iopolicy is numa until ucmd_nvme_subsys_set_iopolicy(). All or nothing.
 */
int  ucmd_nvme_attach_multipath(struct ucmd_engine *e, struct ucmd_ctrl *ctrl,
				const struct ucmd_nvme_host_opts *opts,
				struct ucmd_nvme_subsys **out);
/* The heads' devices removed, then every path detached. */
void ucmd_nvme_subsys_detach(struct ucmd_nvme_subsys *s);
/* "numa", "round-robin" or "queue-depth" from now on; -EINVAL for another name. */
int  ucmd_nvme_subsys_set_iopolicy(struct ucmd_nvme_subsys *s, const char *iopolicy);
/* Path i's controller (for ucmd_nvme_tcp_info()), NULL past the last. */
struct ucmd_nvme_host *ucmd_nvme_subsys_path(struct ucmd_nvme_subsys *s, unsigned i);
struct ucmd_nvme_path_info {
	unsigned instance;		/* X of its nvmeX */
	uint8_t ana_state;		/* as the host last knew it: 1 optimized ... 15 change */
	bool live;			/* its association carries commands now */
	unsigned long dispatched;	/* the head's requests sent on this path */
	unsigned long failovers;	/* the subsystem's block requests sent again */
	unsigned long ana_aens;		/* ANA Change notices this path's controller sent */
};
/* What the head of namespace nsid knows of path i: -EINVAL, -ENODEV (no such head). */
int  ucmd_nvme_subsys_path_info(struct ucmd_nvme_subsys *s, uint32_t nsid, unsigned i,
				struct ucmd_nvme_path_info *info);

/*
 * The registers of the controller behind fd (a controller device, "nvmeX",
 * open on e) as a host reads them from BAR0, Linux's sysfs resource0:
 * len bytes from off, both multiples of 4, within the first 1000h bytes
 * (CAP at 0, VS at 8, ... ACQ at 30h; little-endian). On a daemon's
 * engine the daemon reads them (UCMDD_REGS_READ); an NVMe/TCP controller
 * answers through Property Get. 0, or -EBADF (no such fd), -ENOTTY (not a
 * controller's fd), -EINVAL (a range out of those bounds), -ENOTCONN.
 * Reading has no side effect.
 */
int ucmd_nvme_regs_read(struct ucmd_engine *e, int fd, uint32_t off, void *buf, size_t len);

/* Statistics of I/O queue qid (1-based) for tests: dispatched requests and batches. */
int ucmd_nvme_queue_stats(struct ucmd_nvme_host *host, unsigned qid, unsigned long *dispatched,
			  unsigned long *batches);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif /* UCMD_NVME_H */
