/* SPDX-License-Identifier: MIT */
/*
 * Several nvme-tcp:// URLs naming controllers of one subsystem: each is
 * attached as a path (its namespaces hidden) and multipath.c makes the
 * heads, as Linux's nvme connect to each port of one subsystem does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "multipath.h"
#include "tcp.h"
#include "ucmd/ucmd.h"

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
	unsigned done = 0;
	int pol = 0, ret;

	last_error_clear();
	if (!e || !urls || !out)
		return last_error_set(-EINVAL, "%s: %s is NULL", fn,
				      !e ? "the engine" : !urls ? "the URL list" : "out");
	if (!nr || nr > NVME_MPATH_MAX_PATHS)
		return last_error_set(-EINVAL, "%s: %u paths (1 to %u)", fn, nr,
				      NVME_MPATH_MAX_PATHS);
	o = calloc(nr, sizeof(*o));
	if (!o)
		return last_error_set(-ENOMEM, "%s: out of memory", fn);
	first = &o[0];
	/* every URL parsed and naming the same subsystem before any connection */
	for (unsigned i = 0; i < nr; i++) {
		const char *why = NULL;

		if (!urls[i]) {
			ret = last_error_set(-EINVAL, "%s: URL %u is NULL", fn, i + 1);
			goto out;
		}
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
		if (ret) {
			snprintf(why, sizeof(why), "%s", ucmd_last_error());
			last_error_set(ret, "%s: path %u (%s): %s", fn, done + 1, urls[done], why);
			goto out;
		}
		/* the target's own word, not only the URL's: one subsystem */
		if (done && strncmp(paths[done]->id->subnqn, paths[0]->id->subnqn,
				    sizeof(paths[0]->id->subnqn))) {
			done++;
			ret = last_error_set(-EINVAL, "%s: path %u (%s) is a controller of "
					     "subsystem %.*s, path 1 of %.*s", fn, done, urls[done - 1],
					     (int)sizeof(paths[0]->id->subnqn),
					     paths[done - 1]->id->subnqn,
					     (int)sizeof(paths[0]->id->subnqn), paths[0]->id->subnqn);
			goto out;
		}
	}
	ret = nvme_mpath_create(e, paths, nr, pol ? (enum nvme_iopolicy)(pol - 1) :
				NVME_IOPOLICY_NUMA, &s);
	if (ret) {
		last_error_set(ret, "%s: making the namespace heads", fn);
		goto out;
	}
	*out = (struct ucmd_nvme_subsys *)s;
out:
	if (ret)
		while (done)
			ucmd_nvme_detach((struct ucmd_nvme_host *)paths[--done]);
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
	nr = s->nr_paths;
	memcpy(paths, s->paths, nr * sizeof(paths[0]));
	nvme_mpath_stop(s);
	/* their event requests end now, into s */
	for (unsigned i = nr; i--;)
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

	return s && path < s->nr_paths ? (struct ucmd_nvme_host *)s->paths[path] : NULL;
}

int ucmd_nvme_subsys_path_info(struct ucmd_nvme_subsys *subsys, uint32_t nsid, unsigned path,
			       struct ucmd_nvme_path_info *info)
{
	struct nvme_subsys *s = (struct nvme_subsys *)subsys;
	struct nvme_ns_head *head = NULL;

	if (!s || !info || path >= s->nr_paths)
		return -EINVAL;
	for (unsigned i = 0; i < s->nr_heads; i++)
		if (s->heads[i]->nsid == nsid)
			head = s->heads[i];
	if (!head)
		return -ENODEV;
	memset(info, 0, sizeof(*info));
	info->instance = s->paths[path]->opts.instance;
	info->ana_state = atomic_load(&head->ana_state[path]);
	info->live = s->paths[path]->ops->path_state ?
		     s->paths[path]->ops->path_state(s->paths[path]) == NVME_PATH_LIVE : true;
	info->dispatched = atomic_load(&head->dispatched[path]);
	info->failovers = atomic_load(&s->failovers);
	pthread_mutex_lock(&s->lock);
	info->ana_aens = s->ana_aens[path];
	pthread_mutex_unlock(&s->lock);
	return 0;
}
