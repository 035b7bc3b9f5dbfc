/* SPDX-License-Identifier: MIT */
/*
 * The path strings of libucmd-preload (src/preload/pathname.c): which
 * spellings of a device or /sys path paths.c sees as the same path, which
 * names it asks the daemon about, and which it never does (/dev/null must
 * cost nothing, ".." must stay for the kernel to resolve).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "preload/preload.h"

static void folds(const char *in, const char *want)
{
	char out[256];

	pl_path_fold(out, in);
	if (strcmp(out, want))
		fail_msg("fold(\"%s\") = \"%s\", want \"%s\"", in, out, want);
}

static void test_fold(void **state)
{
	(void)state;
	folds("/dev/ng0n1", "/dev/ng0n1");
	folds("//dev///ng0n1", "/dev/ng0n1");
	folds("/dev/./ng0n1", "/dev/ng0n1");
	folds("/./dev/././nvme0", "/dev/nvme0");
	folds("/sys/class/nvme/.", "/sys/class/nvme");
	folds("/sys/class/nvme/", "/sys/class/nvme/");
	folds("/", "/");
	folds("/.", "/");
	folds("//", "/");
	/* ".." is the kernel's: /dev/x/../ng0n1 may not be /dev/ng0n1 if x is a link */
	folds("/dev/x/../ng0n1", "/dev/x/../ng0n1");
	/* "..." and ".hidden" are names, not dots */
	folds("/dev/.../a", "/dev/.../a");
	folds("/dev/.hidden", "/dev/.hidden");
}

static void test_dev_name(void **state)
{
	(void)state;
	assert_true(pl_path_dev_name("ng0n1"));
	assert_true(pl_path_dev_name("nvme0"));
	assert_true(pl_path_dev_name("nvme12n3"));
	assert_false(pl_path_dev_name("null"));
	assert_false(pl_path_dev_name("nvme"));
	assert_false(pl_path_dev_name("nvme-fabrics"));
	assert_false(pl_path_dev_name("ng"));
	assert_false(pl_path_dev_name("ngx"));
	assert_false(pl_path_dev_name("nvme0/x"));
	assert_false(pl_path_dev_name(""));
}

static void test_under(void **state)
{
	(void)state;
	assert_true(pl_path_under("/sys/class/nvme", "/sys/class/nvme"));
	assert_true(pl_path_under("/sys/class/nvme/nvme0/model", "/sys/class/nvme"));
	/* a sibling with the same prefix is not below it */
	assert_false(pl_path_under("/sys/class/nvme-generic", "/sys/class/nvme"));
	assert_false(pl_path_under("/sys/class/nvm", "/sys/class/nvme"));
	assert_false(pl_path_under("/sys/class", "/sys/class/nvme"));
}

/* Which PCI functions' class files say NVMe controller: those dirs.c leaves out of the host's listings. */
static void test_pci_class(void **state)
{
	(void)state;
	assert_true(pl_pci_class_nvme("0x010802\n"));
	assert_true(pl_pci_class_nvme("0x010802"));
	assert_true(pl_pci_class_nvme("0x010803\n"));	/* another interface, still NVM */
	assert_false(pl_pci_class_nvme("0x010601\n"));	/* AHCI */
	assert_false(pl_pci_class_nvme("0x020000\n"));	/* Ethernet */
	assert_false(pl_pci_class_nvme("0x060400\n"));	/* a bridge */
	assert_false(pl_pci_class_nvme("010802\n"));
	assert_false(pl_pci_class_nvme("0x\n"));
	assert_false(pl_pci_class_nvme("0x0108zz\n"));
	assert_false(pl_pci_class_nvme(""));
	assert_false(pl_pci_class_nvme(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_dev_name),
		cmocka_unit_test(test_under),
		cmocka_unit_test(test_pci_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
