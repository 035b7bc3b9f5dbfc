#!/usr/bin/env bash
# Security end to end through the CLI on the embedded controller: an
# unprivileged caller gets Linux's nvme_cmd_allowed() answers by default,
# a site policy grants one verb more, denials are audited, and policy
# errors name the line.
source "$(dirname "$0")/lib/common.sh"
dir=$T
chmod 0777 "$dir"
need_root "runs the CLI as nobody (setpriv)"
export UCMD_CTRL="$dir/ctrl"

step "policy check: the default policy and a bad file"
"$UCMD" policy check "$(pwd)/policy/default.ini" >/dev/null
printf '[rule]\nverb = writ\naction = allow\n' > "$dir/bad.ini"
if "$UCMD" policy check "$dir/bad.ini" 2>"$dir/err"; then fail "bad policy accepted"; fi
grep -q "bad.ini:2:" "$dir/err" || { cat "$dir/err"; fail "error without a line number"; }

step "an unprivileged user's own controller: I/O and Identify allowed"
as_nobody "$UCMD" list >/dev/null	# creates the controller, owned by nobody
head -c 4096 /dev/urandom > "$dir/in.bin"
chmod 0644 "$dir/in.bin"
as_nobody "$UCMD" write -s 8 -c 7 -d "$dir/in.bin" 2>/dev/null
as_nobody "$UCMD" read -s 8 -c 7 > "$dir/out.bin"
cmp "$dir/in.bin" "$dir/out.bin" || fail "unprivileged read back differs"
as_nobody "$UCMD" id-ctrl >/dev/null

step "admin commands other than Identify need CAP_SYS_ADMIN (Linux's rule)"
if as_nobody "$UCMD" smart-log 2>"$dir/err"; then fail "unprivileged smart-log allowed"; fi
grep -q "Permission denied" "$dir/err" || { cat "$dir/err"; fail "not -EACCES"; }
if as_nobody "$UCMD" format --force 2>/dev/null; then fail "unprivileged format allowed"; fi
# root may, in a directory of its own: root refuses nobody's (docs/security.md)
"$UCMD" --ctrl "$dir/root-ctrl" --create smart-log >/dev/null

step "a site policy grants get-log, audit records the denial of format"
cat > "$dir/site.ini" <<'INI'
[policy]
inherit = default

[rule health-for-everyone]
verb = get-log
select = 0x02
action = allow
audit = yes
INI
"$UCMD" policy check "$dir/site.ini" >/dev/null
as_nobody "$UCMD" --policy "$dir/site.ini" --audit "$dir/audit.jsonl" smart-log >/dev/null
if as_nobody "$UCMD" --policy "$dir/site.ini" --audit "$dir/audit.jsonl" format --force 2>/dev/null; then
	fail "format allowed by the site policy"
fi
python3 - "$dir/audit.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
allow = [r for r in recs if r["decision"] == "allow"]
deny = [r for r in recs if r["decision"] == "deny"]
assert any(r["verb"] == "get-log" and "health-for-everyone" in r["rule"] for r in allow), recs
assert len([r for r in deny if r["verb"] == "format"]) == 1, recs
assert all(r["uid"] == 65534 for r in recs), recs
PY
echo "cli_security: all checks passed"
