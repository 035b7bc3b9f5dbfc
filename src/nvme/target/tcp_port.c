/* SPDX-License-Identifier: MIT */
/*
 * A port taken down and brought back by its owner (ucmdd's
 * UCMDD_PORT_STATE): down, it listens no more and every connection made
 * through it is closed, so its hosts lose their associations as if the
 * link or the target's port had gone; up, it listens again on the same
 * address and the hosts' reconnection finds it. The ports' other state
 * (ANA, the controller ID range) stays.
 */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nvme/target/tcp.h"

void nvmet_tcp_port_drop_conns(struct nvmet_tcp_port *t)
{
	pthread_mutex_lock(&t->lock);
	for (struct nvmet_tcp_conn *c = t->conns; c; c = c->next)
		shutdown(c->sock, SHUT_RDWR);
	while (t->nr_conns)
		pthread_cond_wait(&t->gone, &t->lock);
	pthread_mutex_unlock(&t->lock);
}

int nvmet_tcp_port_enable(struct nvmet_tcp_port *t, bool enable)
{
	int ret = 0;

	pthread_mutex_lock(&t->state_lock);
	if (atomic_load(&t->stopping)) {
		ret = -ESHUTDOWN;
	} else if (enable && atomic_load(&t->disabled)) {
		atomic_store(&t->disabled, false);
		ret = nvmet_tcp_listen(t);
		if (ret)
			atomic_store(&t->disabled, true);
		else if (t->log)
			t->log("nvme-tcp: port %u (%s:%s) up", t->portid, t->traddr, t->trsvcid);
	} else if (!enable && !atomic_load(&t->disabled)) {
		atomic_store(&t->disabled, true);
		/* the listener's poll wakes on the shut socket and sees disabled */
		shutdown(t->lfd, SHUT_RDWR);
		pthread_join(t->listener, NULL);
		close(t->lfd);
		t->lfd = -1;
		/* gone when this returns: a host that reconnects finds nothing */
		nvmet_tcp_port_drop_conns(t);
		if (t->log)
			t->log("nvme-tcp: port %u (%s:%s) down", t->portid, t->traddr, t->trsvcid);
	}
	pthread_mutex_unlock(&t->state_lock);
	return ret;
}

bool nvmet_tcp_port_enabled(struct nvmet_tcp_port *t)
{
	return !atomic_load(&t->disabled);
}
