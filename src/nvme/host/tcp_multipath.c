/* SPDX-License-Identifier: MIT */
/*
 * Several nvme-tcp:// URLs naming controllers of one subsystem: each is
 * attached as a path (its namespaces hidden) and multipath.c makes the
 * heads, as Linux's nvme connect to each port of one subsystem does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/error.h"
#include "multipath.h"
#include "tcp.h"
#include "ucmd/ucmd.h"

/*
 * Paths that could not be reached at attach (tcp_multipath's retry state):
 * each is tried again every reconnect_delay until ctrl_loss_tmo has passed
 * since the attach, as Linux retries a controller it lost; once connected
 * (and a controller of the same subsystem) it joins the heads.
 */
struct mpath_connect {
	struct nvme_subsys *s;
	pthread_t thr;
	bool started, stop;			/* under s->lock */
	struct ucmd_nvme_host_opts ho;
	struct ucmd_nvme_tcp_opts to;
	char *hostnqn, *hostid;
	char subnqn[257];			/* the first attached path's Identify subnqn */
	char *url[NVME_MPATH_MAX_PATHS];
	uint64_t next_ms[NVME_MPATH_MAX_PATHS], until_ms[NVME_MPATH_MAX_PATHS];	/* 0: forever */
	uint32_t delay_ms[NVME_MPATH_MAX_PATHS];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A path that is there but could not be reached: retried, not the attach's failure. */
static bool unreachable(int err)
{
	return err == -ECONNREFUSED || err == -ETIMEDOUT || err == -EHOSTUNREACH ||
	       err == -ENETUNREACH || err == -ECONNRESET || err == -ECONNABORTED ||
	       err == -ENOTCONN || err == -EPIPE || err == -EHOSTDOWN || err == -ENETDOWN;
}

static void give_up(struct mpath_connect *mc, unsigned p)
{
	free(mc->url[p]);
	mc->url[p] = NULL;
	mc->s->pending[p] = false;
	/* requests waiting for a path look again: one fewer may come */
	pthread_cond_broadcast(&mc->s->cond);
}

static void *connect_thread(void *arg)
{
	struct mpath_connect *mc = arg;
	struct nvme_subsys *s = mc->s;

	pthread_mutex_lock(&s->lock);
	while (!mc->stop) {
		uint64_t now = now_ms(), wake = UINT64_MAX;
		struct timespec ts;

		for (unsigned p = 0; p < s->nr_paths && !mc->stop; p++) {
			struct ucmd_nvme_host_opts ho = mc->ho;
			struct nvme_host *h = NULL;
			int ret;

			if (!mc->url[p])
				continue;
			if (mc->until_ms[p] && now >= mc->until_ms[p]) {
				give_up(mc, p);
				continue;
			}
			if (now < mc->next_ms[p]) {
				wake = mc->next_ms[p] < wake ? mc->next_ms[p] : wake;
				continue;
			}
			pthread_mutex_unlock(&s->lock);
			ho.instance += p;
			ret = nvme_tcp_attach(s->engine, mc->url[p], &ho, &mc->to, true,
					      (struct ucmd_nvme_host **)&h);
			if (!ret && strncmp(h->id->subnqn, mc->subnqn, sizeof(h->id->subnqn)))
				ret = -EINVAL;	/* another subsystem there now: never this path */
			if (!ret)
				ret = nvme_mpath_add_path(s, p, h);
			if (ret && h)
				ucmd_nvme_detach((struct ucmd_nvme_host *)h);
			pthread_mutex_lock(&s->lock);
			now = now_ms();
			if (!ret) {
				free(mc->url[p]);
				mc->url[p] = NULL;
			} else if (!unreachable(ret)) {
				give_up(mc, p);
			} else {
				mc->next_ms[p] = now + mc->delay_ms[p];
				wake = mc->next_ms[p] < wake ? mc->next_ms[p] : wake;
			}
		}
		if (mc->stop)
			break;
		if (wake == UINT64_MAX) {
			bool any = false;

			for (unsigned p = 0; p < s->nr_paths; p++)
				any |= mc->url[p] != NULL;
			if (!any)
				break;
			continue;
		}
		ts.tv_sec = (time_t)(wake / 1000u);
		ts.tv_nsec = (long)(wake % 1000u) * 1000000L;
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void connect_free(struct mpath_connect *mc)
{
	if (!mc)
		return;
	for (unsigned p = 0; p < NVME_MPATH_MAX_PATHS; p++)
		free(mc->url[p]);
	free(mc->hostnqn);
	free(mc->hostid);
	free(mc);
}

/* Stop retrying (an attempt under way ends first) and free the state. */
static void connect_stop(struct nvme_subsys *s)
{
	struct mpath_connect *mc = s->connect;

	if (!mc)
		return;
	pthread_mutex_lock(&s->lock);
	mc->stop = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (mc->started)
		pthread_join(mc->thr, NULL);
	pthread_mutex_lock(&s->lock);
	for (unsigned p = 0; p < s->nr_paths; p++)
		s->pending[p] = false;
	pthread_mutex_unlock(&s->lock);
	s->connect = NULL;
	connect_free(mc);
}

int ucmd_nvme_attach_tcp_multipath(struct ucmd_engine *e, const char *const *urls, unsigned nr,
				   const struct ucmd_nvme_host_opts *opts,
				   const struct ucmd_nvme_tcp_opts *topts,
				   struct ucmd_nvme_subsys **out)
{
	static const char fn[] = "ucmd_nvme_attach_tcp_multipath";
	struct nvme_host *paths[NVME_MPATH_MAX_PATHS] = { 0 };
	struct ucmd_nvme_host_opts ho = { 0 };
	struct nvmf_ctrl_options *o, *first;
	struct nvme_subsys *s = NULL;
	struct mpath_connect *mc = NULL;
	unsigned done = 0, attached = 0;
	int pol = 0, ret, first_err = 0;
	char first_why[512] = "";
	int lead = -1;

	last_error_clear();
	if (!e || !urls || !out)
		return last_error_set(-EINVAL, "%s: %s is NULL", fn,
				      !e ? "the engine" : !urls ? "the URL list" : "out");
	if (!nr || nr > NVME_MPATH_MAX_PATHS)
		return last_error_set(-EINVAL, "%s: %u paths (1 to %u)", fn, nr,
				      NVME_MPATH_MAX_PATHS);
	o = calloc(nr, sizeof(*o));
	mc = calloc(1, sizeof(*mc));
	if (!o || !mc) {
		free(o);
		free(mc);
		return last_error_set(-ENOMEM, "%s: out of memory", fn);
	}
	first = &o[0];
	/* every URL parsed and naming the same subsystem before any connection */
	for (unsigned i = 0; i < nr; i++) {
		const char *why = NULL;

		if (!urls[i]) {
			ret = last_error_set(-EINVAL, "%s: URL %u is NULL", fn, i + 1);
			goto out;
		}
		/* the reconnect settings the attach gives it: a missing path's retries */
		o[i].reconnect_delay_ms = topts && topts->reconnect_delay_ms ?
					  topts->reconnect_delay_ms : NVMF_DEFAULT_RECONNECT_MS;
		o[i].ctrl_loss_tmo_ms = topts && topts->ctrl_loss_tmo_ms ?
					(topts->ctrl_loss_tmo_ms < 0 ? -1 : topts->ctrl_loss_tmo_ms) :
					NVMF_DEFAULT_CTRL_LOSS_MS;
		if (topts && topts->no_reconnect)
			o[i].ctrl_loss_tmo_ms = 0;
		ret = nvmf_parse_url(&o[i], urls[i], NVME_TCP_DEFAULT_PORT, &why);
		if (ret) {
			last_error_set(ret, "%s: %s: %s", fn, urls[i], why);
			goto out;
		}
		if (strcmp(o[i].subsysnqn, first->subsysnqn)) {
			ret = last_error_set(-EINVAL, "%s: path %u names subsystem %s, path 1 %s: "
					     "the paths of a list are controllers of one subsystem",
					     fn, i + 1, o[i].subsysnqn, first->subsysnqn);
			goto out;
		}
		if (o[i].iopolicy && pol && o[i].iopolicy != pol) {
			ret = last_error_set(-EINVAL, "%s: the URLs give two different iopolicy=",
					     fn);
			goto out;
		}
		if (o[i].iopolicy)
			pol = o[i].iopolicy;
	}
	if (opts)
		ho = *opts;
	for (; done < nr; done++) {
		char why[256];

		ho.instance = (opts ? opts->instance : 0) + done;
		ret = nvme_tcp_attach(e, urls[done], &ho, topts, true,
				      (struct ucmd_nvme_host **)&paths[done]);
		if (ret && unreachable(ret) && o[done].ctrl_loss_tmo_ms) {
			/* Linux would leave this path out: it is retried meanwhile */
			if (!first_err) {
				first_err = ret;
				snprintf(first_why, sizeof(first_why), "%s: path %u (%s): %s", fn,
					 done + 1, urls[done], ucmd_last_error());
			}
			mc->url[done] = strdup(urls[done]);
			if (!mc->url[done]) {
				ret = last_error_set(-ENOMEM, "%s: out of memory", fn);
				goto out;
			}
			mc->delay_ms[done] = o[done].reconnect_delay_ms;
			mc->until_ms[done] = o[done].ctrl_loss_tmo_ms < 0 ? 0 :
					     now_ms() + (uint64_t)o[done].ctrl_loss_tmo_ms;
			mc->next_ms[done] = now_ms() + o[done].reconnect_delay_ms;
			continue;
		}
		if (ret) {
			snprintf(why, sizeof(why), "%s", ucmd_last_error());
			last_error_set(ret, "%s: path %u (%s): %s", fn, done + 1, urls[done], why);
			goto out;
		}
		attached++;
		if (lead < 0) {
			lead = (int)done;
			continue;
		}
		/* the target's own word, not only the URL's: one subsystem */
		if (strncmp(paths[done]->id->subnqn, paths[lead]->id->subnqn,
			    sizeof(paths[lead]->id->subnqn))) {
			ret = last_error_set(-EINVAL, "%s: path %u (%s) is a controller of "
					     "subsystem %.*s, path %d of %.*s", fn, done + 1,
					     urls[done], (int)sizeof(paths[0]->id->subnqn),
					     paths[done]->id->subnqn, lead + 1,
					     (int)sizeof(paths[0]->id->subnqn), paths[lead]->id->subnqn);
			done++;
			goto out;
		}
	}
	if (!attached) {
		/* none reached: the first one's reason */
		ret = last_error_set(first_err, "%s", first_why);
		goto out;
	}
	ret = nvme_mpath_create(e, paths, nr, pol ? (enum nvme_iopolicy)(pol - 1) :
				NVME_IOPOLICY_NUMA, &s);
	if (ret) {
		last_error_set(ret, "%s: making the namespace heads", fn);
		goto out;
	}
	if (first_err) {
		mc->s = s;
		mc->ho = opts ? *opts : (struct ucmd_nvme_host_opts){ 0 };
		if (topts)
			mc->to = *topts;
		mc->hostnqn = topts && topts->hostnqn ? strdup(topts->hostnqn) : NULL;
		mc->hostid = topts && topts->hostid ? strdup(topts->hostid) : NULL;
		mc->to.hostnqn = mc->hostnqn;
		mc->to.hostid = mc->hostid;
		snprintf(mc->subnqn, sizeof(mc->subnqn), "%.*s",
			 (int)sizeof(paths[lead]->id->subnqn), paths[lead]->id->subnqn);
		for (unsigned p = 0; p < nr; p++)
			s->pending[p] = mc->url[p] != NULL;
		s->connect = mc;
		ret = -pthread_create(&mc->thr, NULL, connect_thread, mc);
		if (ret) {
			s->connect = NULL;
			/* as a detach: the paths' event requests end into s, then s goes */
			nvme_mpath_stop(s);
			while (done)
				if (paths[--done])
					ucmd_nvme_detach((struct ucmd_nvme_host *)paths[done]);
			nvme_mpath_free(s);
			last_error_set(ret, "%s: a thread", fn);
			goto out;
		}
		mc->started = true;
		mc = NULL;
	}
	*out = (struct ucmd_nvme_subsys *)s;
out:
	if (ret)
		while (done)
			if (paths[--done])
				ucmd_nvme_detach((struct ucmd_nvme_host *)paths[done]);
	connect_free(mc);
	free(o);
	return ret;
}

void ucmd_nvme_subsys_detach(struct ucmd_nvme_subsys *subsys)
{
	struct nvme_subsys *s = (struct nvme_subsys *)subsys;
	struct nvme_host *paths[NVME_MPATH_MAX_PATHS];
	unsigned nr;

	if (!s)
		return;
	/* no path joins any more: then the set of paths is fixed */
	connect_stop(s);
	nr = s->nr_paths;
	memcpy(paths, s->paths, nr * sizeof(paths[0]));
	nvme_mpath_stop(s);
	/* their event requests end now, into s */
	for (unsigned i = nr; i--;)
		if (paths[i])
			ucmd_nvme_detach((struct ucmd_nvme_host *)paths[i]);
	nvme_mpath_free(s);
}

int ucmd_nvme_subsys_set_iopolicy(struct ucmd_nvme_subsys *subsys, const char *name)
{
	struct nvme_subsys *s = (struct nvme_subsys *)subsys;
	int pol = nvme_iopolicy_parse(name);

	if (!s || pol < 0)
		return -EINVAL;
	atomic_store(&s->iopolicy, pol);
	return 0;
}

struct ucmd_nvme_host *ucmd_nvme_subsys_path(struct ucmd_nvme_subsys *subsys, unsigned path)
{
	struct nvme_subsys *s = (struct nvme_subsys *)subsys;

	return s && path < s->nr_paths ?
	       (struct ucmd_nvme_host *)__atomic_load_n(&s->paths[path], __ATOMIC_ACQUIRE) : NULL;
}

int ucmd_nvme_subsys_path_info(struct ucmd_nvme_subsys *subsys, uint32_t nsid, unsigned path,
			       struct ucmd_nvme_path_info *info)
{
	struct nvme_subsys *s = (struct nvme_subsys *)subsys;
	struct nvme_ns_head *head = NULL;

	if (!s || !info || path >= s->nr_paths)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	/*
	 * a rescan adds heads under the lock; a head, once added, stays
	 * allocated until stop, a removed one (its namespace on no path) is none
	 */
	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->nr_heads; i++)
		if (s->heads[i]->nsid == nsid && !atomic_load(&s->heads[i]->removed))
			head = s->heads[i];
	info->ana_aens = s->ana_aens[path];
	pthread_mutex_unlock(&s->lock);
	if (!head)
		return -ENODEV;
	struct nvme_host *h = __atomic_load_n(&s->paths[path], __ATOMIC_ACQUIRE);

	/* a path not connected yet: the instance it will have, not live */
	info->instance = h ? h->opts.instance : head->rep.host->opts.instance + path;
	for (unsigned i = 0; !h && i < s->nr_paths; i++)
		if (s->paths[i] == head->rep.host)
			info->instance = head->rep.host->opts.instance - i + path;
	info->ana_state = atomic_load(&head->ana_state[path]);
	info->live = h && (h->ops->path_state ? h->ops->path_state(h) == NVME_PATH_LIVE : true);
	info->dispatched = atomic_load(&head->dispatched[path]);
	info->failovers = atomic_load(&s->failovers);
	return 0;
}
