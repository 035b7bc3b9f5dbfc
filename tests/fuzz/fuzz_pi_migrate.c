/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the undo record of the version 3 to 4 conversion of
 * protection tuples (src/nvme/ctrl/pi_migrate.c, nsN.pimig), as the loader
 * finds it in a controller directory of ctrl.json version 3 with one file
 * namespace formatted with PI type 1 (64 blocks of 512 + 8).
 *
 * Input: a flags byte, then the record's bytes. Flags bit 0 puts the
 * namespace's identity into the header (magic, nsid, lbaf, dps, nsze), bit 1
 * fixes the length to what the header's block count asks, bit 2 the CRC-32C,
 * so that the fuzzer reaches the range checks and the conversion; bit 3
 * opens the controller read-only.
 *
 * Oracle, computed here from the record format (pi_migrate.c's header
 * comment): read-only, any record refuses the open with -EUCLEAN; read-write,
 * the open succeeds exactly when the record is whole (size, identity, a
 * non-empty range inside the namespace, CRC), and then the metadata holds
 * the blocks before the record's range untouched, the range as the record's
 * old bytes converted, every block after it converted, ctrl.json says
 * version 4 and the record is gone; else -EUCLEAN with a reason and neither
 * the image nor ctrl.json changed. Any violation aborts.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/crc32c.h"
#include "nvme/ctrl/ctrl_int.h"

#define NSZE	64ull
#define LBAF	1		/* 512 + 8: the tuple is the whole metadata */
#define MS	8ull
#define DPS	1		/* PI type 1, tuple last */
#define HDR	48u		/* magic[8] nsid lbaf dps pad[2] nsze blk nblk crc pad2 */
#define MD_OFF	(NSZE * 512)
#define IMG_LEN	(NSZE * (512 + MS))

static char dir[96];
static char *v3_json;		/* a version 3 ctrl.json naming that namespace */
static char *journal;		/* the ctrl.journal written with it */
static size_t journal_len;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_pi_migrate: invariant broken: %s\n", what);
		abort();
	}
}

static void path_of(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void put_file(const char *name, const void *data, size_t size)
{
	char path[160];
	int fd;

	path_of(name, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	check(fd >= 0, "a file of the directory can be written");
	check(!size || write(fd, data, size) == (ssize_t)size, "a whole file written");
	close(fd);
}

static char *get_file(const char *name, size_t *len)
{
	char path[160], *buf = NULL;
	FILE *f;

	path_of(name, path, sizeof(path));
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	buf = calloc(1, IMG_LEN + 1);
	check(buf != NULL, "memory");
	*len = fread(buf, 1, IMG_LEN, f);
	fclose(f);
	return buf;
}

static void clean_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[256];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

static void remove_dir(void)
{
	clean_dir();
	rmdir(dir);
}

/*
 * The template: a controller made by this code with one file namespace,
 * its ctrl.json then edited into what the code before version 4 wrote for
 * a PI namespace (version 3, dps).
 */
static void make_template(void)
{
	struct ucmd_ctrl_params p = { 0 };
	struct ucmd_ns_params nsp = { .nsze = NSZE, .lbaf = LBAF, .store = UCMD_NS_STORE_FILE,
				      .attach = true };
	struct ucmd_ctrl *c = NULL;
	json_object *root, *nss;
	char crc[9];
	size_t n;
	char *text;

	p.dir = dir;
	check(!ucmd_ctrl_create(&p, &c), "the template controller");
	check(ucmd_ctrl_ns_create(c, &nsp) == 1, "the template namespace");
	ucmd_ctrl_destroy(c);
	text = get_file("ctrl.json", &n);
	check(text != NULL, "the template's ctrl.json");
	root = json_tokener_parse(text);
	free(text);
	check(root && json_object_object_get_ex(root, "namespaces", &nss) &&
	      json_object_array_length(nss) == 1, "the template names one namespace");
	json_object_object_add(root, "version", json_object_new_int(3));
	json_object_object_add(json_object_array_get_idx(nss, 0), "dps", json_object_new_int(DPS));
	/* its checksum as the code that wrote it would have it */
	json_object_object_del(root, "crc32c");
	snprintf(crc, sizeof(crc), "%08x", ctrl_state_crc(root));
	json_object_object_add(root, "crc32c", json_object_new_string(crc));
	v3_json = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	check(v3_json != NULL, "memory");
	json_object_put(root);
	journal = get_file(UCMD_JOURNAL_NAME, &journal_len);
}

static uint64_t le64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static uint32_t rec_crc(uint8_t *rec, size_t len)
{
	uint8_t hdr[HDR];

	memcpy(hdr, rec, HDR);
	memset(hdr + 40, 0, 4);
	return crc32c(crc32c(0, hdr, HDR), rec + HDR, len - HDR);
}

/* Whether the loader must take this record */
static bool whole(const uint8_t *rec, size_t len)
{
	uint64_t blk, nblk;
	uint32_t crc, nsid;

	if (len < HDR || memcmp(rec, "UCMDPIM1", 8))
		return false;
	memcpy(&nsid, rec + 8, 4);
	memcpy(&crc, rec + 40, 4);
	blk = le64_at(rec + 24);
	nblk = le64_at(rec + 32);
	if (le32toh(nsid) != 1 || rec[12] != LBAF || rec[13] != DPS || le64_at(rec + 16) != NSZE)
		return false;
	if (!nblk || blk >= NSZE || nblk > NSZE - blk || len - HDR != nblk * MS)
		return false;
	return le32toh(crc) == rec_crc((uint8_t *)rec, len);
}

static int json_version(void)
{
	size_t n;
	char *text = get_file("ctrl.json", &n);
	json_object *root, *v;
	int ver = -1;

	check(text != NULL, "ctrl.json is there");
	root = json_tokener_parse(text);
	if (root && json_object_object_get_ex(root, "version", &v))
		ver = json_object_get_int(v);
	json_object_put(root);
	free(text);
	return ver;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ucmd_ctrl_params p = { 0 };
	static uint8_t zeros[IMG_LEN];
	struct ucmd_ctrl *c = NULL;
	uint8_t flags, *rec;
	size_t len, n;
	char err[512], path[160], *img;
	bool ok;
	int ret;

	if (!dir[0]) {
		/* tmpfs where there is one: the loader fsyncs, and that is not what is tested */
		const char *base = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";

		snprintf(dir, sizeof(dir), "%s/ucmd-fuzz-pimig.%d", base, (int)getpid());
		mkdir(dir, 0700);
		atexit(remove_dir);
		make_template();
	}
	if (!size)
		return 0;
	flags = data[0];
	len = size - 1;
	/* room for the length bit 1 may ask: the whole namespace's metadata at most */
	rec = calloc(1, HDR + NSZE * MS + len);
	check(rec != NULL, "memory");
	memcpy(rec, data + 1, len);
	if ((flags & 1) && len >= HDR) {
		uint32_t nsid = htole32(1);
		uint64_t nsze = htole64(NSZE);

		memcpy(rec, "UCMDPIM1", 8);
		memcpy(rec + 8, &nsid, 4);
		rec[12] = LBAF;
		rec[13] = DPS;
		memcpy(rec + 16, &nsze, 8);
	}
	if ((flags & 2) && len >= HDR) {
		uint64_t nblk = le64_at(rec + 32);

		if (nblk && nblk <= NSZE)
			len = HDR + nblk * MS;
	}
	if ((flags & 4) && len >= HDR) {
		uint32_t crc = htole32(rec_crc(rec, len));

		memcpy(rec + 40, &crc, 4);
	}

	/* the directory as the code before version 4 left it, with this record */
	clean_dir();
	put_file("ctrl.json", v3_json, strlen(v3_json));
	if (journal)
		put_file(UCMD_JOURNAL_NAME, journal, journal_len);
	path_of("ns1.img", path, sizeof(path));
	put_file("ns1.img", NULL, 0);
	check(!truncate(path, (off_t)IMG_LEN), "the image");
	put_file("ns1.pimig", rec, len);

	p.dir = dir;
	p.errbuf = err;
	p.errbuf_len = sizeof(err);
	p.read_only = flags & 8;
	err[0] = 0;
	ret = ucmd_ctrl_create(&p, &c);
	ok = !p.read_only && whole(rec, len);
	if (ret) {
		check(!ok, "a whole record is taken");
		if (ret != -EUCLEAN)
			fprintf(stderr, "fuzz_pi_migrate: %d: %s\n", ret, err);
		check(ret == -EUCLEAN, "a record not taken is -EUCLEAN");
		check(err[0] != 0, "a refusal says why");
		img = get_file("ns1.img", &n);
		check(img && n == IMG_LEN && !memcmp(img, zeros, IMG_LEN),
		      "a refused record changes nothing");
		free(img);
		check(json_version() == 3, "a refused record leaves version 3");
		free(rec);
		return 0;
	}
	check(ok, "only a whole record is taken, never read-only");
	ucmd_ctrl_destroy(c);
	img = get_file("ns1.img", &n);
	check(img && n == IMG_LEN, "the image keeps its size");
	check(!memcmp(img, zeros, MD_OFF), "the data is not touched");
	{
		uint64_t blk = le64_at(rec + 24), nblk = le64_at(rec + 32);

		for (uint64_t b = 0; b < NSZE; b++)
			for (unsigned i = 0; i < MS; i++) {
				uint8_t got = (uint8_t)img[MD_OFF + b * MS + i], want;

				if (b < blk)
					want = 0;	/* converted before the record: left */
				else if (b < blk + nblk)
					want = (uint8_t)~rec[HDR + (b - blk) * MS + i];
				else
					want = 0xff;	/* zeros, converted */
				check(got == want, "the metadata converted as the record says");
			}
	}
	free(img);
	check(json_version() == 4, "a finished conversion says version 4");
	path_of("ns1.pimig", path, sizeof(path));
	check(access(path, F_OK) && errno == ENOENT, "the record is removed");
	free(rec);
	return 0;
}
