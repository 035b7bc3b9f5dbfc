/* SPDX-License-Identifier: MIT */
/*
 * A zoned namespace's devices as Linux makes them: ngXnY always, nvmeXnY
 * only for a zone size that is a power of two (and no zone operation
 * characteristics); the zone geometry the host reads from the ZNS Identify
 * Namespace; the CSI found in the Namespace Identification Descriptor list.
 */
#include "lib/nvme_desc.h"
#include "host_fixture.h"
#include "nvme/host/host.h"

#include <errno.h>
#include <fcntl.h>
#include <nvme/types.h>
#include <stdlib.h>
#include <string.h>

static bool has_device(struct fx *f, const char *name)
{
	const char *names[64];
	int n = ucmd_device_names(f->e, names, 64);

	for (int i = 0; i < n && i < 64; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static struct nvme_ns *ns0(struct fx *f)
{
	struct nvme_host *h = (struct nvme_host *)f->host;

	assert_int_equal(h->nr_ns, 1);
	return h->ns[0];
}

static void test_zoned_pow2_has_block_device(void **state)
{
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE, .nsze = 4096, .zone_size = 512,
			     .max_open = 3, .max_active = 5 };
	struct nvme_ns *ns;
	struct fx f;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	assert_true(has_device(&f, "ng0n1"));
	assert_true(has_device(&f, "nvme0n1"));
	ns = ns0(&f);
	assert_true(ns->zoned);
	assert_false(ns->no_bdev);
	assert_int_equal(ns->zone_blocks, 512);
	assert_int_equal(ns->max_open_zones, 3);
	assert_int_equal(ns->max_active_zones, 5);
	fx_teardown(&f);
}

static void test_zoned_not_pow2_generic_only(void **state)
{
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE, .nsze = 4608, .zone_size = 768,
			     .no_bdev = true };
	struct nvme_ns *ns;
	struct fx f;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	assert_true(has_device(&f, "ng0n1"));
	assert_false(has_device(&f, "nvme0n1"));
	assert_int_equal(ucmd_open(f.e, "nvme0n1", O_RDWR), -ENOENT);
	ns = ns0(&f);
	assert_true(ns->zoned);
	assert_true(ns->no_bdev);
	assert_int_equal(ns->zone_blocks, 768);
	/* no limit: all ones in MOR/MAR, 0 as Linux's sysfs says it */
	assert_int_equal(ns->max_open_zones, 0);
	assert_int_equal(ns->max_active_zones, 0);
	fx_teardown(&f);
}

static void test_nvm_not_zoned(void **state)
{
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE };
	struct nvme_ns *ns;
	struct fx f;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	ns = ns0(&f);
	assert_false(ns->zoned);
	assert_false(ns->no_bdev);
	assert_true(has_device(&f, "nvme0n1"));
	fx_teardown(&f);
}

static void test_csi_from_desc(void **state)
{
	uint8_t l[4096];

	(void)state;
	memset(l, 0, sizeof(l));
	/* empty list: NVM */
	assert_int_equal(nvme_ns_csi_from_desc(l, sizeof(l)), NVME_CSI_NVM);
	/* an EUI-64 then the CSI */
	l[0] = NVME_NIDT_EUI64;
	l[1] = 8;
	l[12] = NVME_NIDT_CSI;
	l[13] = 1;
	l[16] = NVME_CSI_ZNS;
	assert_int_equal(nvme_ns_csi_from_desc(l, sizeof(l)), NVME_CSI_ZNS);
	/* a CSI descriptor cut off by the end of the buffer is not read */
	assert_int_equal(nvme_ns_csi_from_desc(l, 16), NVME_CSI_NVM);
	/* a zero length ends the list before the CSI */
	l[1] = 0;
	assert_int_equal(nvme_ns_csi_from_desc(l, sizeof(l)), NVME_CSI_NVM);
	/* a CSI descriptor of the wrong length is skipped */
	memset(l, 0, sizeof(l));
	l[0] = NVME_NIDT_CSI;
	l[1] = 2;
	l[4] = NVME_CSI_ZNS;
	assert_int_equal(nvme_ns_csi_from_desc(l, sizeof(l)), NVME_CSI_NVM);
	/*
	 * a CSI descriptor of the wrong length (5 bytes in all, so the next
	 * starts at an odd offset, read by bytes), then the real one
	 */
	l[1] = 1;
	l[5] = NVME_NIDT_CSI;
	l[6] = 1;
	l[9] = NVME_CSI_ZNS;
	l[4] = NVME_CSI_NVM;
	l[0] = NVME_NIDT_EUI64;	/* the first is no CSI: skipped, 5 bytes */
	assert_int_equal(nvme_ns_csi_from_desc(l, sizeof(l)), NVME_CSI_ZNS);
}

static void test_zns_ns_info_rules(void **state)
{
	struct nvme_zns_id_ns *z = calloc(1, sizeof(*z));
	struct nvme_ns ns;

	(void)state;
	assert_non_null(z);
	memset(&ns, 0, sizeof(ns));
	z->lbafe[1].zsze = htole64(1024);
	z->mor = htole32(13);
	z->mar = htole32(0xffffffffu);
	assert_int_equal(nvme_zns_ns_info(&ns, z, 1), 0);
	assert_false(ns.no_bdev);
	assert_int_equal(ns.zone_blocks, 1024);
	assert_int_equal(ns.max_open_zones, 14);
	assert_int_equal(ns.max_active_zones, 0);
	/* zone operation characteristics Linux does not handle: no disk */
	z->zoc = htole16(1);
	assert_int_equal(nvme_zns_ns_info(&ns, z, 1), -ENODEV);
	assert_true(ns.no_bdev);
	z->zoc = 0;
	/* zone size not a power of two, or none: no disk */
	z->lbafe[1].zsze = htole64(1000);
	assert_int_equal(nvme_zns_ns_info(&ns, z, 1), -ENODEV);
	z->lbafe[1].zsze = 0;
	assert_int_equal(nvme_zns_ns_info(&ns, z, 1), -ENODEV);
	free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zoned_pow2_has_block_device),
		cmocka_unit_test(test_zoned_not_pow2_generic_only),
		cmocka_unit_test(test_nvm_not_zoned),
		cmocka_unit_test(test_csi_from_desc),
		cmocka_unit_test(test_zns_ns_info_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
