/* SPDX-License-Identifier: MIT */
/*
 * list and list-subsys in nvme-cli 2.3's layouts. nvme-cli builds them
 * from sysfs (libnvme's scan), where the controller's serial, model and
 * firmware are the Identify Controller strings without their padding,
 * and a namespace's sizes come from Identify Namespace: MaximumLBA is
 * NSZE, UsedBytes NUSE times the LBA size, PhysicalSize NSZE times it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nvme/util.h>

#include "print_priv.h"

static const char dashes[] =
	"----------------------------------------------------------------------------------------------------";

/* an Identify string as sysfs shows it: up to NUL, trailing spaces cut */
static void trimmed(char *out, const char *in, size_t len)
{
	size_t n = strnlen(in, len);

	while (n && in[n - 1] == ' ')
		n--;
	memcpy(out, in, n);
	out[n] = '\0';
}

struct ns_sizes {
	uint64_t lba_size, nsze, nuse;
	unsigned meta;
};

static struct ns_sizes ns_sizes(const struct print_ns *n)
{
	struct ns_sizes z = { 512, 0, 0, 0 };
	uint8_t idx;

	if (!n->id)
		return z;
	nvme_id_ns_flbas_to_lbaf_inuse(n->id->flbas, &idx);
	/* an LBADS the spec does not allow (< 9 or >= 64) is shown as 0 bytes */
	z.lba_size = n->id->lbaf[idx].ds < 64 ? 1ull << n->id->lbaf[idx].ds : 0;
	z.meta = pl16(&n->id->lbaf[idx].ms);
	z.nsze = pl64(&n->id->nsze);
	z.nuse = pl64(&n->id->nuse);
	return z;
}

static const char *ns_name(const struct print_ns *n, char *buf, size_t len)
{
	const char *slash = n->blkdev ? strrchr(n->blkdev, '/') : NULL;

	snprintf(buf, len, "%s", slash ? slash + 1 : n->blkdev ? n->blkdev : "");
	return buf;
}

static void usage_format(const struct print_ns *n, char *usage, char *format, size_t len)
{
	struct ns_sizes z = ns_sizes(n);
	double used = (double)(z.nuse * z.lba_size), size = (double)(z.nsze * z.lba_size);
	double lba = (double)z.lba_size;
	const char *us = p_si_suffix(&used), *ss = p_si_suffix(&size), *ls = p_bin_suffix(&lba);

	snprintf(usage, len, "%6.2f %2sB / %6.2f %2sB", used, us, size, ss);
	snprintf(format, len, "%3.0f %2sB + %2d B", lba, ls, z.meta);
}

static void ns_json_sizes(struct json_object *o, const struct print_ns *n)
{
	struct ns_sizes z = ns_sizes(n);

	pj_u64(o, "UsedBytes", z.nuse * z.lba_size);
	pj_u64(o, "MaximumLBA", z.nsze);
	pj_u64(o, "PhysicalSize", z.nsze * z.lba_size);
	pj_int(o, "SectorSize", (int64_t)z.lba_size);
}

struct ids { char sn[21], mn[41], fr[9], nqn[257]; };

static struct ids ctrl_ids(const struct print_ctrl *c)
{
	struct ids x = { "", "", "", "" };

	if (c->id) {
		trimmed(x.sn, c->id->sn, sizeof(c->id->sn));
		trimmed(x.mn, c->id->mn, sizeof(c->id->mn));
		trimmed(x.fr, c->id->fr, sizeof(c->id->fr));
		trimmed(x.nqn, c->id->subnqn, sizeof(c->id->subnqn));
	}
	return x;
}

static void list_json_simple(const struct print_ctrl *c, int nr)
{
	struct json_object *root = json_object_new_object();
	struct json_object *devs = json_object_new_array();

	for (int i = 0; i < nr; i++) {
		struct ids x = ctrl_ids(&c[i]);

		for (int j = 0; j < c[i].nr_ns; j++) {
			struct json_object *d = json_object_new_object();

			pj_int(d, "NameSpace", c[i].ns[j].nsid);
			pj_str(d, "DevicePath", c[i].ns[j].blkdev ? c[i].ns[j].blkdev : "");
			pj_str(d, "Firmware", x.fr);
			pj_str(d, "ModelNumber", x.mn);
			pj_str(d, "SerialNumber", x.sn);
			ns_json_sizes(d, &c[i].ns[j]);
			json_object_array_add(devs, d);
		}
	}
	json_object_object_add(root, "Devices", devs);
	pj_print(root);
}

static void host_keys(struct json_object *o, const struct print_ctrl *c, int nr)
{
	pj_str(o, "HostNQN", nr && c[0].hostnqn ? c[0].hostnqn : "");
	if (nr && c[0].hostid)
		pj_str(o, "HostID", c[0].hostid);
}

/* both in one subsystem (NULL: filtered out, in none) */
static bool same_subsys(const struct print_ctrl *a, const struct print_ctrl *b)
{
	return a->subsys && b->subsys && !strcmp(a->subsys, b->subsys);
}

/* the controllers of one subsystem are those with its name, in order */
static bool first_of_subsys(const struct print_ctrl *c, int i)
{
	for (int k = 0; k < i; k++)
		if (same_subsys(&c[k], &c[i]))
			return false;
	return true;
}

static void list_json_verbose(const struct print_ctrl *c, int nr)
{
	struct json_object *root = json_object_new_object();
	struct json_object *devs = json_object_new_array();
	struct json_object *host = json_object_new_object();
	struct json_object *subs = json_object_new_array();
	char name[64];

	host_keys(host, c, nr);
	for (int i = 0; i < nr; i++) {
		struct json_object *s, *ctrls;

		if (!first_of_subsys(c, i))
			continue;
		s = json_object_new_object();
		ctrls = json_object_new_array();
		pj_str(s, "Subsystem", c[i].subsys);
		pj_str(s, "SubsystemNQN", ctrl_ids(&c[i]).nqn);
		for (int k = i; k < nr; k++) {
			struct json_object *jc, *nss;
			struct ids x = ctrl_ids(&c[k]);

			if (!same_subsys(&c[k], &c[i]))
				continue;
			jc = json_object_new_object();
			nss = json_object_new_array();
			pj_str(jc, "Controller", c[k].name);
			pj_str(jc, "SerialNumber", x.sn);
			pj_str(jc, "ModelNumber", x.mn);
			pj_str(jc, "Firmware", x.fr);
			pj_str(jc, "Transport", c[k].transport);
			pj_str(jc, "Address", c[k].address);
			for (int j = 0; j < c[k].nr_ns; j++) {
				struct json_object *n = json_object_new_object();

				pj_str(n, "NameSpace", ns_name(&c[k].ns[j], name, sizeof(name)));
				pj_int(n, "NSID", c[k].ns[j].nsid);
				ns_json_sizes(n, &c[k].ns[j]);
				json_object_array_add(nss, n);
			}
			json_object_object_add(jc, "Namespaces", nss);
			/* no multipath heads: ucmd's namespaces are private to a controller */
			json_object_object_add(jc, "Paths", json_object_new_array());
			json_object_array_add(ctrls, jc);
		}
		json_object_object_add(s, "Controllers", ctrls);
		json_object_object_add(s, "Namespaces", json_object_new_array());
		json_object_array_add(subs, s);
	}
	json_object_object_add(host, "Subsystems", subs);
	json_object_array_add(devs, host);
	json_object_object_add(root, "Devices", devs);
	pj_print(root);
}

static void list_normal_simple(const struct print_ctrl *c, int nr)
{
	char usage[128], format[128];

	printf("%-21s %-21s %-20s %-40s %-9s %-26s %-16s %-8s\n", "Node", "Generic", "SN",
	       "Model", "Namespace", "Usage", "Format", "FW Rev");
	printf("%-.21s %-.21s %-.20s %-.40s %-.9s %-.26s %-.16s %-.8s\n", dashes, dashes,
	       dashes, dashes, dashes, dashes, dashes, dashes);
	for (int i = 0; i < nr; i++) {
		struct ids x = ctrl_ids(&c[i]);

		for (int j = 0; j < c[i].nr_ns; j++) {
			const struct print_ns *n = &c[i].ns[j];

			usage_format(n, usage, format, sizeof(usage));
			printf("%-21s %-21s %-20s %-40s %-9d %-26s %-16s %-8s\n",
			       n->blkdev ? n->blkdev : "", n->gendev ? n->gendev : "", x.sn, x.mn,
			       (int)n->nsid, usage, format, x.fr);
		}
	}
}

static void list_normal_verbose(const struct print_ctrl *c, int nr)
{
	char usage[128], format[128], name[64];

	printf("%-16s %-96s %-.16s\n", "Subsystem", "Subsystem-NQN", "Controllers");
	printf("%-.16s %-.96s %-.16s\n", dashes, dashes, dashes);
	for (int i = 0; i < nr; i++) {
		bool first = true;

		if (!first_of_subsys(c, i))
			continue;
		printf("%-16s %-96s ", c[i].subsys, ctrl_ids(&c[i]).nqn);
		for (int k = i; k < nr; k++) {
			if (!same_subsys(&c[k], &c[i]))
				continue;
			printf("%s%s", first ? "" : ", ", c[k].name);
			first = false;
		}
		printf("\n");
	}
	printf("\n");
	printf("%-8s %-20s %-40s %-8s %-6s %-14s %-12s %-16s\n", "Device", "SN", "MN", "FR",
	       "TxPort", "Address", "Subsystem", "Namespaces");
	printf("%-.8s %-.20s %-.40s %-.8s %-.6s %-.14s %-.12s %-.16s\n", dashes, dashes, dashes,
	       dashes, dashes, dashes, dashes, dashes);
	for (int i = 0; i < nr; i++) {
		struct ids x = ctrl_ids(&c[i]);

		printf("%-8s %-20s %-40s %-8s %-6s %-14s %-12s ", c[i].name, x.sn, x.mn, x.fr,
		       c[i].transport, c[i].address, c[i].subsys);
		for (int j = 0; j < c[i].nr_ns; j++)
			printf("%s%s", j ? ", " : "", ns_name(&c[i].ns[j], name, sizeof(name)));
		printf("\n");
	}
	printf("\n");
	printf("%-12s %-12s %-8s %-26s %-16s %-16s\n", "Device", "Generic", "NSID", "Usage",
	       "Format", "Controllers");
	printf("%-.12s %-.12s %-.8s %-.26s %-.16s %-.16s\n", dashes, dashes, dashes, dashes,
	       dashes, dashes);
	for (int i = 0; i < nr; i++)
		for (int j = 0; j < c[i].nr_ns; j++) {
			const struct print_ns *n = &c[i].ns[j];

			usage_format(n, usage, format, sizeof(usage));
			printf("%-12s %-12s %-8x %-26s %-16s %s\n", n->blkdev ? n->blkdev : "",
			       n->gendev ? n->gendev : "", n->nsid, usage, format, c[i].name);
		}
}

void print_list(const struct print_ctrl *c, int nr, enum out_fmt f, unsigned flags)
{
	if (nr < 0)
		nr = 0;
	if (f == OUT_JSON)
		return flags & PRINT_VERBOSE ? list_json_verbose(c, nr) : list_json_simple(c, nr);
	/* nvme-cli's list has no binary form: the table */
	if (flags & PRINT_VERBOSE)
		list_normal_verbose(c, nr);
	else
		list_normal_simple(c, nr);
}

void print_list_subsys(const struct print_ctrl *c, int nr, enum out_fmt f, unsigned flags)
{
	(void)flags;
	if (nr < 0)
		nr = 0;
	if (f == OUT_JSON) {
		struct json_object *root = json_object_new_array();
		struct json_object *host = json_object_new_object();
		struct json_object *subs = json_object_new_array();

		host_keys(host, c, nr);
		for (int i = 0; i < nr; i++) {
			struct json_object *s, *paths;

			if (!c[i].subsys || !first_of_subsys(c, i))
				continue;
			s = json_object_new_object();
			paths = json_object_new_array();
			pj_str(s, "Name", c[i].subsys);
			pj_str(s, "NQN", ctrl_ids(&c[i]).nqn);
			for (int k = i; k < nr; k++) {
				struct json_object *p;

				if (!same_subsys(&c[k], &c[i]))
					continue;
				p = json_object_new_object();
				pj_str(p, "Name", c[k].name);
				pj_str(p, "Transport", c[k].transport);
				pj_str(p, "Address", c[k].address);
				pj_str(p, "State", c[k].state);
				if (c[k].ana_state && *c[k].ana_state)
					pj_str(p, "ANAState", c[k].ana_state);
				json_object_array_add(paths, p);
			}
			json_object_object_add(s, "Paths", paths);
			json_object_array_add(subs, s);
		}
		json_object_object_add(host, "Subsystems", subs);
		json_object_array_add(root, host);
		return pj_print(root);
	}
	for (int i = 0; i < nr; i++) {
		if (!c[i].subsys || !first_of_subsys(c, i))
			continue;
		printf("%s - NQN=%s\n", c[i].subsys, ctrl_ids(&c[i]).nqn);
		printf("\\\n");
		for (int k = i; k < nr; k++) {
			if (!same_subsys(&c[k], &c[i]))
				continue;
			printf(" +- %s %s %s %s", c[k].name, c[k].transport, c[k].address,
			       c[k].state);
			/* a path has the state's field even when it is empty */
			if (c[k].ana_state)
				printf(" %s", c[k].ana_state);
			printf("\n");
		}
	}
}
