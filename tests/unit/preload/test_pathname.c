/* SPDX-License-Identifier: MIT */
/*
 * The path strings of libucmd-preload (src/preload/pathname.c): which
 * spellings of a device or /sys path paths.c sees as the same path, which
 * names it asks the daemon about, and which it never does (/dev/null must
 * cost nothing, ".." must stay for the kernel to resolve).
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* /proc/devices as an NVMe host shows it: the majors hostnvme.c refuses by number. */
static const char proc_devices[] =
	"Character devices:\n"
	"  1 mem\n"
	" 10 misc\n"
	"240 nvme-generic\n"
	"241 nvme\n"
	"242 nvme-subsys\n"
	"259 blkext\n"
	"\n"
	"Block devices:\n"
	"  7 loop\n"
	"240 nvme-fake-block\n"
	"259 blkext\n";

static void test_proc_devices(void **state)
{
	(void)state;
	assert_true(pl_proc_devices_nvme(proc_devices, false, 240));
	assert_true(pl_proc_devices_nvme(proc_devices, false, 241));
	assert_false(pl_proc_devices_nvme(proc_devices, false, 242));	/* another name */
	assert_false(pl_proc_devices_nvme(proc_devices, false, 1));
	assert_false(pl_proc_devices_nvme(proc_devices, false, 24));	/* a prefix of 240 */
	/* the block section is another namespace of majors: 240 there is not nvme's */
	assert_false(pl_proc_devices_nvme(proc_devices, true, 240));
	assert_false(pl_proc_devices_nvme(proc_devices, true, 259));
	assert_true(pl_proc_devices_nvme("Block devices:\n259 nvme\n", true, 259));
	assert_false(pl_proc_devices_nvme("Block devices:\n259 nvme\n", false, 259));
	/* no section heading: nothing is in a section */
	assert_false(pl_proc_devices_nvme("241 nvme\n", false, 241));
	assert_false(pl_proc_devices_nvme("", false, 241));
	assert_false(pl_proc_devices_nvme(NULL, false, 241));
	/* no final newline */
	assert_true(pl_proc_devices_nvme("Character devices:\n241 nvme", false, 241));
}

static void test_sysfs_block(void **state)
{
	(void)state;
	assert_true(pl_sysfs_block_nvme("../../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1"));
	assert_true(pl_sysfs_block_nvme("../../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/nvme0n1p2"));
	assert_true(pl_sysfs_block_nvme("../../devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1"));
	assert_true(pl_sysfs_block_nvme("../../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0c0n1"));
	assert_true(pl_sysfs_block_nvme("../../devices/virtual/nvme-subsystem/nvme-subsys3"));
	assert_false(pl_sysfs_block_nvme("../../devices/virtual/block/loop0"));
	assert_false(pl_sysfs_block_nvme("../../devices/pci0000:00/0000:00:05.0/virtio2/block/vda"));
	/* names that only look like it */
	assert_false(pl_sysfs_block_nvme("../../devices/virtual/block/nvme0"));
	assert_false(pl_sysfs_block_nvme("../../devices/virtual/block/nvme0n"));
	assert_false(pl_sysfs_block_nvme("../../devices/virtual/block/nvme0n1x"));
	assert_false(pl_sysfs_block_nvme("../../devices/virtual/block/nvmeXn1"));
	assert_false(pl_sysfs_block_nvme("../../devices/virtual/block/nvme-subsys"));
	assert_false(pl_sysfs_block_nvme("../../devices/virtual/nvme-subsystem/x"));
	assert_false(pl_sysfs_block_nvme(""));
	assert_false(pl_sysfs_block_nvme(NULL));
}

static void test_test_majors(void **state)
{
	(void)state;
	assert_true(pl_test_majors_has("c:1", false, 1));
	assert_false(pl_test_majors_has("c:1", true, 1));
	assert_true(pl_test_majors_has("b:7,c:1", false, 1));
	assert_true(pl_test_majors_has("b:7,c:1", true, 7));
	assert_false(pl_test_majors_has("b:7,c:1", true, 1));
	assert_false(pl_test_majors_has("c:10", false, 1));
	assert_false(pl_test_majors_has("c:1x", false, 1));
	assert_true(pl_test_majors_has("junk,c:5", false, 5));
	assert_false(pl_test_majors_has("c:", false, 0));
	assert_false(pl_test_majors_has("", false, 0));
	assert_false(pl_test_majors_has(NULL, false, 0));
}

/*
 * The records the getdents calls write, ours against the kernel's own for
 * the same name (a file in a new directory): the same length, the name and
 * d_type where the kernel puts them (linux_dirent64: d_type before the name;
 * the old linux_dirent: the name after d_reclen, d_type the last byte).
 */
static void kernel_record(bool old, const char *name, char *rec, size_t *len)
{
	char dir[] = "/tmp/test_pathname.XXXXXX", path[64], buf[4096];
	long n;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = syscall(old ? SYS_getdents : SYS_getdents64, fd, buf, sizeof(buf));
	close(fd);
	unlink(path);
	rmdir(dir);
	*len = 0;
	for (long off = 0; off < n;) {
		unsigned short reclen;

		memcpy(&reclen, buf + off + 16, 2);
		if (!strcmp(buf + off + (old ? 18 : 19), name)) {
			memcpy(rec, buf + off, reclen);
			*len = reclen;
			return;
		}
		off += reclen;
	}
	fail_msg("%s not listed", name);
}

static void test_dirent_records(void **state)
{
	static const char *names[] = { "ng0n1", "nvme0n1", "a", "abcdef", "abcdefg", "x234567890123" };
	char ours[512], theirs[512];

	(void)state;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (int old = 0; old < 2; old++) {
			size_t len, klen;

			kernel_record(old, names[i], theirs, &klen);
			len = pl_dirent_rec_len(old, names[i]);
			if (len != klen)
				fail_msg("%s (%s): length %zu, the kernel's %zu", names[i],
					 old ? "getdents" : "getdents64", len, klen);
			pl_dirent_rec_put(old, ours, len, 7, 3, DT_REG, names[i]);
			assert_int_equal(ours[old ? len - 1 : 18], DT_REG);
			assert_int_equal((unsigned char)theirs[old ? klen - 1 : 18], DT_REG);
			assert_string_equal(ours + (old ? 18 : 19), names[i]);
			assert_int_equal(memcmp(ours + 16, theirs + 16, 2), 0);	/* d_reclen */
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_dev_name),
		cmocka_unit_test(test_under),
		cmocka_unit_test(test_pci_class),
		cmocka_unit_test(test_proc_devices),
		cmocka_unit_test(test_sysfs_block),
		cmocka_unit_test(test_test_majors),
		cmocka_unit_test(test_dirent_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
