/* SPDX-License-Identifier: MIT */
/*
 * Policy files: INI, one [rule] section per rule, in file order
 * (docs/security.md has the format). The syntax is libinih's with its
 * default options (a UTF-8 BOM, ';' and '#' comment lines, ';' inline
 * comments after whitespace, '=' or ':'), read here line by line: the
 * system libinih is built with 200-byte lines and 50-byte section names,
 * too short for a 223-byte host NQN or a long rule name, and a library's
 * compile-time limits cannot be raised by its user. Lines are limited only
 * by POL_MAX_LINE, a clear error. Knowing each line and where each section
 * starts is also how two consecutive "[rule]" sections stay two rules and
 * how every error names its line.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "security/policy_parse.h"
#include "security/policy_values.h"

#define POL_MAX_RULES 4096
#define POL_MAX_FILE (1u << 20)
#define POL_MAX_LINE 65536	/* bytes of one line, its newline not counted */

struct section {
	unsigned line;
	bool used;		/* the handler saw a key in it */
};

struct parser {
	const char *name;	/* the file name errors give */
	const char *p, *end;	/* text still to read */
	unsigned line;		/* the line the reader returned last */
	struct section *sect;
	unsigned nsect, cap_sect;
	unsigned cur_sect;	/* the section the handler is in, 1-based */
	struct ucmd_policy *pol;
	struct ucmd_policy_rule *rule;	/* the rule being filled, or NULL */
	unsigned policy_keys;
	bool inherit;
	unsigned err_line;	/* first error found by us, 0: none */
	char err[160];
};

static void perr(struct parser *ps, unsigned line, const char *fmt, const char *a,
		 const char *b)
{
	if (ps->err_line)
		return;		/* the first found; later ones may be its echoes */
	ps->err_line = line;
	snprintf(ps->err, sizeof(ps->err), fmt, a, b);
}

/* A [section] header begins at this line: section_start() takes it from here. */
static bool note_section(struct parser *ps)
{
	if (ps->nsect == ps->cap_sect) {
		unsigned cap = ps->cap_sect ? 2 * ps->cap_sect : 16;
		struct section *n = realloc(ps->sect, cap * sizeof(*n));

		if (!n) {
			perr(ps, ps->line, "out of memory%s%s", "", "");
			return false;
		}
		ps->sect = n;
		ps->cap_sect = cap;
	}
	ps->sect[ps->nsect].line = ps->line;
	ps->sect[ps->nsect].used = false;
	ps->nsect++;
	return true;
}

/* Finish the rule being filled: the checks that need all of its keys. */
static void rule_end(struct parser *ps)
{
	struct ucmd_policy_rule *r = ps->rule;
	const char *why;

	if (!r)
		return;
	ps->rule = NULL;
	why = pol_rule_check(r);
	if (why)
		perr(ps, r->line, "[rule %s]: %s", r->name ? r->name : "", why);
}

static int section_start(struct parser *ps, const char *section)
{
	struct section *sc = &ps->sect[ps->nsect - 1];
	struct ucmd_policy *pol = ps->pol;

	rule_end(ps);
	/* a header the handler never saw a key under was an empty section */
	for (unsigned i = ps->cur_sect; i + 1 < ps->nsect; i++)
		if (!ps->sect[i].used)
			perr(ps, ps->sect[i].line, "empty section%s%s", "", "");
	ps->cur_sect = ps->nsect;
	sc->used = true;
	if (!strcmp(section, "policy")) {
		if (ps->policy_keys & 0x80000000u) {
			perr(ps, sc->line, "second [policy] section%s%s", "", "");
			return 0;
		}
		ps->policy_keys = 0x80000000u;
		return 1;
	}
	if (strncmp(section, "rule", 4) || (section[4] && section[4] != ' ')) {
		perr(ps, sc->line, "unknown section [%s] (expected [policy] or [rule NAME])",
		     section, "");
		return 0;
	}
	if (pol->nrules == POL_MAX_RULES) {
		perr(ps, sc->line, "more than %s rules%s", "4096", "");
		return 0;
	}
	if (pol->nrules % 16 == 0) {
		struct ucmd_policy_rule *n =
			realloc(pol->rules, (pol->nrules + 16) * sizeof(*n));
		if (!n) {
			perr(ps, sc->line, "out of memory%s%s", "", "");
			return 0;
		}
		pol->rules = n;
	}
	ps->rule = &pol->rules[pol->nrules++];
	pol_rule_init(ps->rule, pol->file, sc->line);
	section += 4;
	while (*section == ' ')
		section++;
	if (*section && !(ps->rule->name = strdup(section))) {
		perr(ps, sc->line, "out of memory%s%s", "", "");
		return 0;
	}
	return 1;
}

static int policy_key(struct parser *ps, const char *name, const char *value)
{
	static const char *const keys[] = { "default", "audit", "inherit" };
	unsigned k;
	bool b;

	for (k = 0; k < 3 && strcmp(keys[k], name); k++)
		;
	if (k == 3) {
		perr(ps, ps->line, "unknown key '%s' in [policy]%s", name, "");
		return 0;
	}
	if (ps->policy_keys & (1u << k)) {
		perr(ps, ps->line, "key '%s' given twice%s", name, "");
		return 0;
	}
	ps->policy_keys |= 1u << k;
	if (k == 0 && (!strcmp(value, "allow") || !strcmp(value, "deny"))) {
		ps->pol->default_allow = !strcmp(value, "allow");
		return 1;
	}
	if (k == 1 && !pv_bool(value, &b)) {
		ps->pol->audit_default = b;
		return 1;
	}
	if (k == 2 && (!strcmp(value, "default") || !strcmp(value, "none"))) {
		ps->inherit = !strcmp(value, "default");
		return 1;
	}
	perr(ps, ps->line, "bad value '%s' for '%s'", value, name);
	return 0;
}

static int handle(struct parser *ps, const char *section, const char *name, const char *value)
{
	char why[96];

	if (ps->err_line)
		return 0;
	/* the reader saw a header since the last key: a new section began */
	if (ps->nsect != ps->cur_sect && !section_start(ps, section))
		return 0;
	if (!ps->nsect) {
		perr(ps, ps->line, "key '%s' outside any section%s", name, "");
		return 0;
	}
	if (!ps->rule)
		return policy_key(ps, name, value);
	if (pol_rule_key(ps->rule, name, value, why, sizeof(why))) {
		perr(ps, ps->line, "%s%s", why, "");
		return 0;
	}
	return 1;
}

static bool is_space(char c)
{
	return isspace((unsigned char)c);
}

static char *lskip(char *s)
{
	while (*s && is_space(*s))
		s++;
	return s;
}

/* Cut the blanks before end (the string's NUL); returns s. */
static char *rstrip(char *s, char *end)
{
	while (end > s && is_space(end[-1]))
		*--end = 0;
	return s;
}

/* The first of chars, or a ';' comment after a blank, or the end of s. */
static char *find_chars_or_comment(char *s, const char *chars)
{
	bool was_space = false;

	while (*s && !(chars && strchr(chars, *s)) && !(was_space && *s == ';')) {
		was_space = is_space(*s);
		s++;
	}
	return s;
}

/* One line, NUL-terminated and without its newline: false stops the parse. */
static bool parse_line(struct parser *ps, char *line, char **section)
{
	char *start = line, *end, *value;

	if (ps->line == 1 && !strncmp(start, "\xEF\xBB\xBF", 3))
		start += 3;
	start = lskip(start);
	rstrip(start, start + strlen(start));
	if (!*start || *start == ';' || *start == '#')
		return true;
	if (*start == '[') {
		end = find_chars_or_comment(start + 1, "]");
		if (*end != ']')
			goto syntax;
		*end = 0;
		free(*section);
		if (!(*section = strdup(start + 1))) {
			perr(ps, ps->line, "out of memory%s%s", "", "");
			return false;
		}
		return note_section(ps);
	}
	end = find_chars_or_comment(start, "=:");
	if (*end != '=' && *end != ':')
		goto syntax;
	*end = 0;
	rstrip(start, end);
	value = end + 1;
	end = find_chars_or_comment(value, NULL);
	*end = 0;
	value = lskip(value);
	rstrip(value, end);
	return handle(ps, *section ? *section : "", start, value);
syntax:
	perr(ps, ps->line, "syntax error (expected [section] or key = value)%s%s", "", "");
	return false;
}

/* Every line of the text, in order, until the first error. */
static void parse_text(struct parser *ps)
{
	char *line = NULL, *section = NULL;
	size_t cap = 0;

	while (ps->p < ps->end && !ps->err_line) {
		const char *nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
		size_t len = nl ? (size_t)(nl - ps->p) : (size_t)(ps->end - ps->p);

		ps->line++;
		if (len > POL_MAX_LINE) {
			perr(ps, ps->line, "line longer than %s bytes%s", "65536", "");
			break;
		}
		if (memchr(ps->p, 0, len)) {
			perr(ps, ps->line, "NUL byte in line%s%s", "", "");
			break;
		}
		if (len + 1 > cap) {
			char *n = realloc(line, len + 1);

			if (!n) {
				perr(ps, ps->line, "out of memory%s%s", "", "");
				break;
			}
			line = n;
			cap = len + 1;
		}
		memcpy(line, ps->p, len);
		line[len] = 0;
		ps->p += len + (nl != NULL);
		if (!parse_line(ps, line, &section))
			break;
	}
	free(line);
	free(section);
}

static int inherit_default(struct ucmd_policy *pol, char *err, size_t errlen)
{
	struct ucmd_policy *d;
	struct ucmd_policy_rule *n;
	int ret = ucmd_policy_load_default(&d, err, errlen);

	if (ret)
		return ret;
	n = realloc(pol->rules, (pol->nrules + d->nrules) * sizeof(*n));
	if (!n) {
		ucmd_policy_put(d);
		return -ENOMEM;
	}
	pol->rules = n;
	/* the rules move over; their file names point at static storage */
	memcpy(&pol->rules[pol->nrules], d->rules, d->nrules * sizeof(*n));
	pol->nrules += d->nrules;
	d->nrules = 0;
	ucmd_policy_put(d);
	return 0;
}

int policy_load_string(const char *name, const char *text, size_t len,
		       struct ucmd_policy **out, char *err, size_t errlen)
{
	struct parser ps = { .name = name, .p = text, .end = text + len };
	struct ucmd_policy *pol = calloc(1, sizeof(*pol));
	int ret = 0;

	if (!pol || !(pol->file = strdup(name))) {
		free(pol);
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	atomic_init(&pol->refs, 1);
	ps.pol = pol;
	parse_text(&ps);
	rule_end(&ps);
	for (unsigned i = ps.cur_sect; i < ps.nsect; i++)
		if (!ps.sect[i].used)
			perr(&ps, ps.sect[i].line, "empty section%s%s", "", "");
	free(ps.sect);
	if (ps.err_line) {
		snprintf(err, errlen, "%s:%u: %s", name, ps.err_line, ps.err);
		ret = -EINVAL;
	} else if (ps.inherit) {
		ret = inherit_default(pol, err, errlen);
	}
	if (ret) {
		ucmd_policy_put(pol);
		return ret;
	}
	*out = pol;
	return 0;
}

static const char *file_kind(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory"
	     : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	     : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/*
 * Read a policy file: a regular file of at most POL_MAX_FILE bytes, named
 * directly. Its type is checked before it is opened (a FIFO would block the
 * open, /dev/zero never ends a read), and the open itself cannot block or
 * follow a link (O_NONBLOCK, O_NOFOLLOW) should the path change between
 * the check and the open; fstat() of what was opened decides.
 */
static int read_policy_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd, ret;

	if (lstat(path, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s; a policy must be a regular file%s", path,
			 file_kind(st.st_mode),
			 S_ISLNK(st.st_mode) ? " (name the file the link points to)" : "");
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path,
			 ret == -ELOOP ? "a symbolic link; a policy must be a regular file"
				       : strerror(-ret));
		return ret == -ELOOP ? -EINVAL : ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: %s; a policy must be a regular file", path,
			 file_kind(st.st_mode));
		return -EINVAL;
	}
	if (st.st_size > POL_MAX_FILE) {
		close(fd);
		snprintf(err, errlen, "%s: %lld bytes; a policy may have at most %u", path,
			 (long long)st.st_size, POL_MAX_FILE);
		return -EFBIG;
	}
	/* one byte more than allowed: a file that grows after fstat() is caught */
	buf = malloc(POL_MAX_FILE + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf + got, POL_MAX_FILE + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			close(fd);
			free(buf);
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
			return ret;
		}
		if (n == 0 || (got += (size_t)n) > POL_MAX_FILE)
			break;
	}
	close(fd);
	if (got > POL_MAX_FILE) {
		free(buf);
		snprintf(err, errlen, "%s: more than %u bytes; a policy may have at most that",
			 path, POL_MAX_FILE);
		return -EFBIG;
	}
	*out = buf;
	*len = got;
	return 0;
}

int policy_load_file(const char *path, struct ucmd_policy **out, char *err, size_t errlen)
{
	char *buf = NULL;	/* both set when ret is 0; TSan's -O2 cannot tell */
	size_t len = 0;
	int ret = read_policy_file(path, &buf, &len, err, errlen);

	if (ret)
		return ret;
	ret = ucmd_policy_load_string(path, buf, len, out, err, errlen);
	free(buf);
	return ret;
}

int policy_load_default(struct ucmd_policy **out, char *err, size_t errlen)
{
	int ret = ucmd_policy_load_string(policy_default_name, policy_default_text,
					  strlen(policy_default_text), out, err, errlen);

	/* rules keep pointing at a static name instead of a copy */
	for (unsigned i = 0; !ret && i < (*out)->nrules; i++)
		(*out)->rules[i].file = policy_default_name;
	return ret;
}

struct ucmd_policy *ucmd_policy_get(struct ucmd_policy *p)
{
	atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
	return p;
}

void ucmd_policy_put(struct ucmd_policy *p)
{
	if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (unsigned i = 0; i < p->nrules; i++)
		pol_rule_free(&p->rules[i]);
	free(p->rules);
	free(p->file);
	free(p);
}

unsigned ucmd_policy_nr_rules(const struct ucmd_policy *p)
{
	return p->nrules;
}
