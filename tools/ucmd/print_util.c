/* SPDX-License-Identifier: MIT */
/* Shared by the printers: typed JSON values, hex dumps, names. */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "print_priv.h"

void pj_int(struct json_object *o, const char *k, int64_t v)
{
	/* nvme-cli's json_object_add_value_int/uint: json_object_new_int */
	json_object_object_add(o, k, json_object_new_int((int32_t)v));
}

void pj_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

void pj_u128(struct json_object *o, const char *k, const uint8_t v[16])
{
	char buf[48];

	pj_str(o, k, p_u128_str(v, buf, sizeof(buf)));
}

void pj_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

void pj_print(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

uint16_t pl16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

uint32_t pl32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

uint64_t pl64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

const char *p_u128_str(const uint8_t v[16], char *buf, size_t len)
{
	unsigned __int128 x = 0;
	char tmp[48];
	int n = 0;

	for (int i = 15; i >= 0; i--)
		x = (x << 8) | v[i];
	do {
		tmp[n++] = (char)('0' + (int)(x % 10));
		x /= 10;
	} while (x && n < (int)sizeof(tmp));
	if ((size_t)n >= len)
		n = (int)len - 1;
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return buf;
}

const char *p_si_suffix(double *v)
{
	static const char *const s[] = { "", "k", "M", "G", "T", "P", "E", "Z", "Y" };
	size_t i = 0;

	while (*v >= 1000 && i + 1 < ARRAY_LEN(s)) {
		*v /= 1000;
		i++;
	}
	return s[i];
}

const char *p_bin_suffix(double *v)
{
	static const char *const s[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	size_t i = 0;

	while (*v >= 1024 && i + 1 < ARRAY_LEN(s)) {
		*v /= 1024;
		i++;
	}
	return s[i];
}

void p_raw(const void *buf, size_t len)
{
	fwrite(buf, 1, len, stdout);
}

/* The layout nvme-cli's get-log and get-feature print: a column header,
 * then "oooo: xx xx ... "ascii"" lines; a short last line is padded. */
void p_hexdump(const void *buf, size_t len)
{
	const uint8_t *b = buf;
	char ascii[17];
	size_t i;

	printf("     ");
	for (i = 0; i < 16; i++)
		printf("%3zx", i);
	for (i = 0; i < len; i++) {
		if (i % 16 == 0)
			printf("\n%04zx:", i);
		printf(" %02x", b[i]);
		ascii[i % 16] = (b[i] >= '!' && b[i] <= '~') ? (char)b[i] : '.';
		if (i % 16 == 15) {
			ascii[16] = '\0';
			printf(" \"%s\"", ascii);
		}
	}
	if (len % 16) {
		size_t left = 16 - len % 16;

		ascii[len % 16] = '\0';
		printf(" %*s \"%s\"", (int)(3 * left), "", ascii);
	}
	printf("\n");
}

struct name { uint8_t id; const char *s; };

static const struct name admin_names[] = {
	{ 0x00, "Delete I/O Submission Queue" }, { 0x01, "Create I/O Submission Queue" },
	{ 0x02, "Get Log Page" }, { 0x04, "Delete I/O Completion Queue" },
	{ 0x05, "Create I/O Completion Queue" }, { 0x06, "Identify" }, { 0x08, "Abort" },
	{ 0x09, "Set Features" }, { 0x0a, "Get Features" },
	{ 0x0c, "Asynchronous Event Request" }, { 0x0d, "Namespace Management" },
	{ 0x10, "Firmware Commit" }, { 0x11, "Firmware Image Download" },
	{ 0x14, "Device Self-test" }, { 0x15, "Namespace Attachment" },
	{ 0x18, "Keep Alive" }, { 0x19, "Directive Send" }, { 0x1a, "Directive Receive" },
	{ 0x1c, "Virtualization Management" }, { 0x1d, "NVMe-MI Send" },
	{ 0x1e, "NVMe-MI Receive" }, { 0x7c, "Doorbell Buffer Config" },
	{ 0x80, "Format NVM" }, { 0x81, "Security Send" }, { 0x82, "Security Receive" },
	{ 0x84, "Sanitize" }, { 0x86, "Get LBA Status" },
};

static const struct name io_names[] = {
	{ 0x00, "Flush" }, { 0x01, "Write" }, { 0x02, "Read" },
	{ 0x04, "Write Uncorrectable" }, { 0x05, "Compare" }, { 0x08, "Write Zeroes" },
	{ 0x09, "Dataset Management" }, { 0x0c, "Verify" }, { 0x0d, "Reservation Register" },
	{ 0x0e, "Reservation Report" }, { 0x11, "Reservation Acquire" },
	{ 0x15, "Reservation Release" }, { 0x19, "Copy" }, { 0x79, "Zone Management Send" },
	{ 0x7a, "Zone Management Receive" }, { 0x7d, "Zone Append" },
};

static const struct name feature_names[] = {
	{ 0x01, "Arbitration" }, { 0x02, "Power Management" }, { 0x03, "LBA Range Type" },
	{ 0x04, "Temperature Threshold" }, { 0x05, "Error Recovery" },
	{ 0x06, "Volatile Write Cache" }, { 0x07, "Number of Queues" },
	{ 0x08, "Interrupt Coalescing" }, { 0x09, "Interrupt Vector Configuration" },
	{ 0x0a, "Write Atomicity Normal" }, { 0x0b, "Async Event Configuration" },
	{ 0x0c, "Autonomous Power State Transition" }, { 0x0d, "Host Memory Buffer" },
	{ 0x0e, "Timestamp" }, { 0x0f, "Keep Alive Timer" },
	{ 0x10, "Host Controlled Thermal Management" },
	{ 0x11, "Non-Operational Power State Config" },
	{ 0x12, "Read Recovery Level" }, { 0x13, "Predictable Latency Mode Config" },
	{ 0x14, "Predictable Latency Mode Window" },
	{ 0x15, "LBA Status Interval" },
	{ 0x16, "Host Behavior" }, { 0x17, "Sanitize" },
	{ 0x18, "Endurance Event Group Configuration" },
	{ 0x19, "I/O Command Set Profile" }, { 0x1a, "Spinup Control" },
	{ 0x1d, "Flexible Direct Placement" }, { 0x1e, "Flexible Direct Placement Events" },
	{ 0x7d, "Enhanced Controller Metadata" }, { 0x7e, "Controller Metadata" },
	{ 0x7f, "Namespace Metadata" }, { 0x80, "Software Progress" },
	{ 0x81, "Host Identifier" }, { 0x82, "Reservation Notification Mask" },
	{ 0x83, "Reservation Persistence" }, { 0x84, "Namespace Write Protect" },
};

static const char *lookup(const struct name *t, size_t n, uint8_t id, const char *dflt)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].id == id)
			return t[i].s;
	return dflt;
}

const char *p_cmd_name(int admin, uint8_t opcode)
{
	return admin ? lookup(admin_names, ARRAY_LEN(admin_names), opcode, "Unknown")
		     : lookup(io_names, ARRAY_LEN(io_names), opcode, "Unknown");
}

const char *p_feature_name(uint8_t fid)
{
	return lookup(feature_names, ARRAY_LEN(feature_names), fid, "Unknown");
}

const char *p_select_name(uint8_t sel)
{
	static const char *const s[] = { "Current", "Default", "Saved", "Supported capabilities" };

	if (sel < ARRAY_LEN(s))
		return s[sel];
	return sel == 8 ? "Changed" : "Reserved";
}
