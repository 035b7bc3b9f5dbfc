/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the printers (print_*.c): JSON values typed as
 * nvme-cli 2.3 types them, so that a document compares equal key by key
 * with nvme-cli's own: 8/16/32-bit fields are json-c ints (nvme-cli adds
 * even unsigned 32-bit fields with json_object_new_int, so a value with
 * bit 31 set reads back negative there and here), 64-bit fields are
 * unsigned numbers and 128-bit counters are decimal strings.
 */
#ifndef UCMD_CLI_PRINT_PRIV_H
#define UCMD_CLI_PRINT_PRIV_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "print.h"

void pj_int(struct json_object *o, const char *k, int64_t v);
void pj_u64(struct json_object *o, const char *k, uint64_t v);
void pj_u128(struct json_object *o, const char *k, const uint8_t v[16]);
void pj_str(struct json_object *o, const char *k, const char *v);
/* pretty-printed as nvme-cli prints, then freed */
void pj_print(struct json_object *o);

/* little-endian loads from wire structures */
uint16_t pl16(const void *p);
uint32_t pl32(const void *p);
uint64_t pl64(const void *p);
/* a 128-bit little-endian counter in decimal (buf: 40 bytes at least) */
const char *p_u128_str(const uint8_t v[16], char *buf, size_t len);
/* "1.07  GB"-style scaling of nvme-cli's list and smart-log */
const char *p_si_suffix(double *v);
const char *p_bin_suffix(double *v);

/* -o binary: the raw structure on stdout */
void p_raw(const void *buf, size_t len);
/* nvme-cli's hex dump (offset column, 16 bytes a line, ASCII on the right) */
void p_hexdump(const void *buf, size_t len);

const char *p_cmd_name(int admin, uint8_t opcode);
const char *p_feature_name(uint8_t fid);
const char *p_select_name(uint8_t sel);

/* -H: the bit-by-bit decoding nvme-cli prints after a field (print_human.c);
 * fields without one print nothing */
void print_id_ctrl_human(const char *field, const struct nvme_id_ctrl *id);
void print_id_ns_human(const char *field, const struct nvme_id_ns *ns);

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
