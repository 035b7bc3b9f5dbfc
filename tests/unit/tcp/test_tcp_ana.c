// SPDX-License-Identifier: MIT
/*
 * src/nvme/target/tcp_ana.c without a connection: the state names, a port's
 * state and change count, the status I/O gets in each state, and the
 * Identify fields the target adds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvme/target/tcp.h"

static void test_state_names(void **state)
{
	static const char *names[] = { "optimized", "non-optimized", "inaccessible",
				       "persistent-loss", "change" };
	static const int values[] = { 1, 2, 3, 4, 0xf };

	(void)state;
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(nvmet_tcp_ana_state_parse(names[i]), values[i]);
		assert_string_equal(nvmet_tcp_ana_state_name((uint8_t)values[i]), names[i]);
	}
	assert_int_equal(nvmet_tcp_ana_state_parse("Optimized"), -EINVAL);
	assert_int_equal(nvmet_tcp_ana_state_parse(""), -EINVAL);
	assert_int_equal(nvmet_tcp_ana_state_parse("degraded"), -EINVAL);
	assert_null(nvmet_tcp_ana_state_name(0));
	assert_null(nvmet_tcp_ana_state_name(5));
}

static void test_set_and_status(void **state)
{
	struct nvmet_tcp_port *t = calloc(1, sizeof(*t));

	(void)state;
	assert_non_null(t);
	nvmet_tcp_ana_init(t);
	assert_int_equal(nvmet_tcp_ana_get(t, 1), NVME_ANA_STATE_OPTIMIZED);
	assert_int_equal(nvmet_tcp_ana_io_status(t, 1), 0);
	assert_int_equal(atomic_load(&t->ana_chgcnt), 0);

	/* no such group, no such state: refused, nothing changes */
	assert_int_equal(nvmet_tcp_ana_set(t, 0, NVME_ANA_STATE_INACCESSIBLE), -EINVAL);
	assert_int_equal(nvmet_tcp_ana_set(t, NVMET_TCP_ANA_GRPS + 1, NVME_ANA_STATE_INACCESSIBLE), -EINVAL);
	assert_int_equal(nvmet_tcp_ana_set(t, 1, 5), -EINVAL);
	assert_int_equal(nvmet_tcp_ana_set(t, 1, 0), -EINVAL);
	assert_int_equal(nvmet_tcp_ana_get(t, 0), 0);
	assert_int_equal(nvmet_tcp_ana_get(t, NVMET_TCP_ANA_GRPS + 1), 0);
	assert_int_equal(nvmet_tcp_ana_get(t, 1), NVME_ANA_STATE_OPTIMIZED);
	assert_int_equal(atomic_load(&t->ana_chgcnt), 0);

	/* each state's I/O status: path related, never DNR */
	static const struct { uint8_t s; uint16_t st; } want[] = {
		{ NVME_ANA_STATE_NONOPTIMIZED, 0 },
		{ NVME_ANA_STATE_INACCESSIBLE, 0x302 },
		{ NVME_ANA_STATE_PERSISTENT_LOSS, 0x301 },
		{ NVME_ANA_STATE_CHANGE, 0x303 },
		{ NVME_ANA_STATE_OPTIMIZED, 0 },
	};
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(nvmet_tcp_ana_set(t, 1, want[i].s), 0);
		assert_int_equal(nvmet_tcp_ana_get(t, 1), want[i].s);
		assert_int_equal(nvmet_tcp_ana_io_status(t, 1), want[i].st);
		assert_int_equal(atomic_load(&t->ana_chgcnt), i + 1);
	}
	/* the same state again is no change: no count, no notice */
	assert_int_equal(nvmet_tcp_ana_set(t, 1, NVME_ANA_STATE_OPTIMIZED), 0);
	assert_int_equal(atomic_load(&t->ana_chgcnt), 5);
	free(t);
}

static void test_identify(void **state)
{
	struct nvme_id_ctrl *c = calloc(1, 4096);
	struct nvme_id_ns *ns = calloc(1, 4096);
	struct nvme_id_independent_id_ns *ind = calloc(1, 4096);
	uint8_t *zero = calloc(1, 4096);

	(void)state;
	assert_non_null(c);
	assert_non_null(ns);
	assert_non_null(ind);
	assert_non_null(zero);
	c->oaes = htole32(0x100);
	nvmet_tcp_ana_id_ctrl(c);
	assert_int_equal(c->cmic, 0xb);
	assert_int_equal(le32toh(c->oaes), 0x900);
	assert_int_equal(c->anacap, 0x1f);
	assert_int_equal(c->anatt, NVMET_TCP_ANATT);
	assert_int_equal(le32toh(c->anagrpmax), NVMET_TCP_ANA_GRPS);
	assert_int_equal(le32toh(c->nanagrpid), NVMET_TCP_ANA_GRPS);

	/* an inactive namespace's all-zero data stays so */
	nvmet_tcp_ana_id_ns(NVME_IDENTIFY_CNS_NS, ns);
	nvmet_tcp_ana_id_ns(NVME_IDENTIFY_CNS_CSI_INDEPENDENT_ID_NS, ind);
	assert_memory_equal(ns, zero, 4096);
	assert_memory_equal(ind, zero, 4096);
	ns->nsze = htole64(100);
	nvmet_tcp_ana_id_ns(NVME_IDENTIFY_CNS_NS, ns);
	assert_int_equal(ns->nmic, 1);
	assert_int_equal(le32toh(ns->anagrpid), 1);
	ind->nstat = 1;
	nvmet_tcp_ana_id_ns(NVME_IDENTIFY_CNS_CSI_INDEPENDENT_ID_NS, ind);
	assert_int_equal(ind->nmic, 1);
	assert_int_equal(le32toh(ind->anagrpid), 1);
	/* other structures are not namespaces' */
	memset(ns, 0, 4096);
	ns->nsze = htole64(100);
	nvmet_tcp_ana_id_ns(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, ns);
	assert_int_equal(ns->nmic, 0);
	assert_int_equal(ns->anagrpid, 0);
	free(c);
	free(ns);
	free(ind);
	free(zero);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_names),
		cmocka_unit_test(test_set_and_status),
		cmocka_unit_test(test_identify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
