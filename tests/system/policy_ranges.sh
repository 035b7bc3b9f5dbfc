#!/usr/bin/env bash
# Range deny rules hold for every command that touches the protected blocks
# (docs/security.md, "Range descriptions"): with docs/security.md's protect-label policy, an
# unprivileged user can write neither LBA 0 nor overwrite it with Copy nor
# deallocate it with DSM, and `policy explain` says deny for copy and trim.
source "$(dirname "$0")/lib/common.sh"
dir=$T
chmod 0777 "$dir"
need_root "runs the CLI as nobody (setpriv)"
as_nobody() { as_user --bounding-set=-all 65534 "$@"; }
export UCMD_CTRL="$dir/ctrl"

# the example of docs/security.md, word for word
cat > "$dir/site.ini" <<'INI'
[policy]
inherit = default

[rule operator-may-format]
uid = 1001
device = nvme0
verb = format
action = allow

[rule protect-label]
uid = 0-1000, 1002-4294967295
verb = write, write-zeroes, trim, write-uncor, copy
bytes = 0+1M
action = deny
INI
chmod 0644 "$dir/site.ini"
P=(--policy "$dir/site.ini" --audit "$dir/audit.jsonl")

step "a label at LBA 0 and other data at LBA 4096 (512-byte blocks: past the first MiB)"
head -c 4096 /dev/urandom > "$dir/label.bin"
head -c 4096 /dev/urandom > "$dir/other.bin"
chmod 0644 "$dir/label.bin" "$dir/other.bin"
as_nobody "$UCMD" write -s 0 -c 7 -d "$dir/label.bin" 2>/dev/null
as_nobody "$UCMD" write -s 4096 -c 7 -d "$dir/other.bin" 2>/dev/null
touch "$dir/audit.jsonl"
chmod 0666 "$dir/audit.jsonl"

step "the policy refuses write, copy onto the label, copy from it, dsm --ad of it"
denied() {	# what, command...
	local what=$1
	shift
	if as_nobody "$UCMD" "${P[@]}" "$@" 2>"$dir/err"; then fail "$what allowed"; fi
	grep -q "Permission denied" "$dir/err" || { cat "$dir/err"; fail "$what: not -EACCES"; }
}
denied "write to LBA 0" write -s 0 -c 0 -d "$dir/other.bin"
denied "copy onto LBA 0" copy --sdlba=0 --slbs=4096 --blocks=7
denied "copy straddling the label's end" copy --sdlba=2040 --slbs=4096 --blocks=7
denied "copy with the label as a source" copy --sdlba=8192 --slbs=4096,0 --blocks=0,7
denied "dsm --ad of LBA 0" dsm --slbs=0 --blocks=8 --ad
denied "dsm --ad with LBA 0 as its last range" dsm --slbs=9000,0 --blocks=8,1 --ad
step "outside the label the same commands run"
as_nobody "$UCMD" "${P[@]}" copy --sdlba=8192 --slbs=4096 --blocks=7
as_nobody "$UCMD" "${P[@]}" dsm --slbs=9000 --blocks=8 --ad

step "LBA 0 is unchanged, the allowed copy was made"
as_nobody "$UCMD" read -s 0 -c 7 > "$dir/out.bin"
cmp "$dir/label.bin" "$dir/out.bin" || fail "LBA 0 changed"
as_nobody "$UCMD" read -s 8192 -c 7 > "$dir/copy.bin"
cmp "$dir/other.bin" "$dir/copy.bin" || fail "the allowed copy did not happen"

step "the audit trail names the ranges it denied"
python3 - "$dir/audit.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
deny = [r for r in recs if r["decision"] == "deny"]
assert len(deny) == 6, recs
assert all("protect-label" in r["rule"] for r in deny), deny
src = [r for r in deny if r["verb"] == "copy" and r.get("ranges")]
assert any(x["slba"] == 0 and x["nlb"] == 8 for r in src for x in r["ranges"]), src
PY

step "policy explain: copy and trim of the label are denied, with or without a range"
for args in "--verb copy" "--verb trim" "--verb copy --slba 0 --nlb 8" \
	    "--verb copy --slba 8192 --nlb 8 --range 0+8" "--verb trim --slba 9000 --nlb 8 --range 0+1"; do
	# shellcheck disable=SC2086
	if "$UCMD" policy explain --policy "$dir/site.ini" --uid 65534 $args >"$dir/out"; then
		fail "explain $args: $(cat "$dir/out")"
	fi
	grep -q "^deny (.*protect-label)" "$dir/out" || { cat "$dir/out"; fail "explain $args"; }
done
"$UCMD" policy explain --policy "$dir/site.ini" --uid 65534 --verb copy --slba 8192 --nlb 8 \
	--range 4096+8 >/dev/null || fail "explain: a copy outside the label is denied"
echo "policy_ranges: all checks passed"
