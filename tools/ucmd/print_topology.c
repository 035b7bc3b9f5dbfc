/* SPDX-License-Identifier: MIT */
/*
 * show-topology in nvme-cli 2.3's layouts: the text tree ranked by
 * namespace (each namespace, then its paths with the controller's state
 * and the path's ANA state) or by controller (each controller, then the
 * namespaces it is a path of), and the JSON document, which has no
 * ranking: Subsystems[].Namespaces[] with their Paths[] under a multipath
 * head, or, without one, each controller's namespaces with a one-element
 * "Controller" array and no ANA state.
 */
#include <stdio.h>

#include "print_priv.h"

static const char *ana_of(const struct print_topo *t, int ns, int k)
{
	return t->ana[ns * t->nr_ctrl + k];
}

static bool has_paths(const struct print_topo *t)
{
	if (!t->ana)
		return false;
	for (int i = 0; i < t->nr_ns * t->nr_ctrl; i++)
		if (t->ana[i])
			return true;
	return false;
}

/*
 * The namespaces of controller k without a head: all of them (ucmd has one
 * controller then); with a head the controllers' own lists are empty, as
 * libnvme's are (the namespaces hang from the subsystem).
 */
static int ctrl_nr_ns(const struct print_topo *t)
{
	return t->ana ? 0 : t->nr_ns;
}

static void ctrl_json(struct json_object *o, const struct print_ctrl *c)
{
	pj_str(o, "Name", c->name);
	pj_str(o, "Transport", c->transport);
	pj_str(o, "Address", c->address);
	pj_str(o, "State", c->state);
}

static void topo_json(const struct print_topo *t)
{
	struct json_object *root = json_object_new_array();
	struct json_object *host = json_object_new_object();
	struct json_object *subs = json_object_new_array();
	struct json_object *s = json_object_new_object();
	struct json_object *nss = json_object_new_array();

	pj_str(host, "HostNQN", t->hostnqn ? t->hostnqn : "");
	if (t->hostid)
		pj_str(host, "HostID", t->hostid);
	pj_str(s, "Name", t->name);
	pj_str(s, "NQN", t->nqn);
	/* a head's namespaces, each with its paths, whether it has any or not */
	for (int i = 0; t->ana && i < t->nr_ns; i++) {
		struct json_object *n = json_object_new_object();
		struct json_object *paths = json_object_new_array();

		pj_int(n, "NSID", t->nsid[i]);
		for (int k = 0; k < t->nr_ctrl; k++) {
			struct json_object *p;

			if (!ana_of(t, i, k))
				continue;
			p = json_object_new_object();
			ctrl_json(p, &t->ctrl[k]);
			pj_str(p, "ANAState", ana_of(t, i, k));
			json_object_array_add(paths, p);
		}
		json_object_object_add(n, "Paths", paths);
		json_object_array_add(nss, n);
	}
	/* no head namespace: each controller's own (the subsystem's list order) */
	for (int k = t->nr_ctrl - 1; !t->ana && k >= 0; k--)
		for (int i = 0; i < ctrl_nr_ns(t); i++) {
			struct json_object *n = json_object_new_object();
			struct json_object *ctrl = json_object_new_array();
			struct json_object *c = json_object_new_object();

			pj_int(n, "NSID", t->nsid[i]);
			ctrl_json(c, &t->ctrl[k]);
			json_object_array_add(ctrl, c);
			json_object_object_add(n, "Controller", ctrl);
			json_object_array_add(nss, n);
		}
	json_object_object_add(s, "Namespaces", nss);
	json_object_array_add(subs, s);
	json_object_object_add(host, "Subsystems", subs);
	json_object_array_add(root, host);
	pj_print(root);
}

static void topo_multipath(const struct print_topo *t, enum topo_ranking r)
{
	if (r == TOPO_NAMESPACE) {
		for (int i = 0; i < t->nr_ns; i++) {
			printf(" +- ns %d\n \\\n", (int)t->nsid[i]);
			for (int k = 0; k < t->nr_ctrl; k++)
				if (ana_of(t, i, k))
					printf("  +- %s %s %s %s %s\n", t->ctrl[k].name,
					       t->ctrl[k].transport, t->ctrl[k].address,
					       t->ctrl[k].state, ana_of(t, i, k));
		}
		return;
	}
	for (int k = t->nr_ctrl - 1; k >= 0; k--) {
		printf(" +- %s %s %s\n \\\n", t->ctrl[k].name, t->ctrl[k].transport,
		       t->ctrl[k].address);
		for (int i = 0; i < t->nr_ns; i++)
			if (ana_of(t, i, k))
				printf("  +- ns %d %s %s\n", (int)t->nsid[i], t->ctrl[k].state,
				       ana_of(t, i, k));
	}
}

static void topo_private(const struct print_topo *t, enum topo_ranking r)
{
	for (int k = t->nr_ctrl - 1; k >= 0; k--) {
		const struct print_ctrl *c = &t->ctrl[k];

		if (r == TOPO_CTRL)
			printf(" +- %s %s %s\n \\\n", c->name, c->transport, c->address);
		for (int i = 0; i < ctrl_nr_ns(t); i++) {
			if (r == TOPO_CTRL) {
				printf("  +- ns %d %s\n", (int)t->nsid[i], c->state);
				continue;
			}
			printf(" +- ns %d\n \\\n", (int)t->nsid[i]);
			printf("  +- %s %s %s %s\n", c->name, c->transport, c->address, c->state);
		}
	}
}

void print_topology(const struct print_topo *t, enum out_fmt f, enum topo_ranking r)
{
	if (f == OUT_JSON)
		return topo_json(t);
	printf("%s - NQN=%s\n\\\n", t->name, t->nqn);
	if (has_paths(t))
		topo_multipath(t, r);
	else
		topo_private(t, r);
}
