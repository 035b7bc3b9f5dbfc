#!/usr/bin/env bash
# scripts/check_pipefail.py finds `cmd | grep -q` in scripts under pipefail
# (in every spelling the tree has used) and lets the safe forms through.
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
lint=$src/scripts/check_pipefail.py
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tests/system/lib" "$t/scripts"

# each of these must be found, alone in a tree
bad=(
	'echo "$out" | grep -q ok || exit 1'
	'if ldd x | grep -q ucmd; then exit 1; fi'
	'a | b | grep -qx 512'
	'x | grep -Eq "^a" || exit 1'
	'x | grep -F -q a'
	'x | grep --quiet a'
	'x | egrep -q a'
	'! x | grep -q a'
	$'x |\n\tgrep -q a'
	$'x \\\n\t| grep -q a'
)
# one file each, one run
for i in "${!bad[@]}"; do
	printf '#!/bin/bash\nset -euo pipefail\n%s\n' "${bad[$i]}" > "$t/scripts/b$i.sh"
done
if python3 "$lint" --root "$t" >"$t/out" 2>&1; then
	cat "$t/out"; echo "FAIL: none found"; exit 1
fi
for i in "${!bad[@]}"; do
	grep -q "^scripts/b$i.sh:3: " "$t/out" || { cat "$t/out"; echo "FAIL: not found: ${bad[$i]}"; exit 1; }
done

# pipefail from a sourced library, and in the library itself
printf 'source "$(dirname "$0")/lib/common.sh"\nx | grep -q a\n' > "$t/tests/system/b.sh"
printf 'x | grep -q a\n' > "$t/tests/system/lib/c.sh"
if python3 "$lint" --root "$t" >"$t/out" 2>&1; then echo "FAIL: sourced pipefail missed"; exit 1; fi
grep -q '^tests/system/b.sh:2: ' "$t/out" || { cat "$t/out"; echo "FAIL: b.sh"; exit 1; }
grep -q '^tests/system/lib/c.sh:1: ' "$t/out" || { cat "$t/out"; echo "FAIL: lib/c.sh"; exit 1; }

# these are fine
rm -f "$t/scripts/"*.sh "$t/tests/system/"*.sh "$t/tests/system/lib/"*.sh
cat > "$t/scripts/ok.sh" <<'SH'
#!/bin/bash
set -euo pipefail
grep -q ok <<<"$(cmd)"
grep -q ok file || exit 1
x | grep a | wc -l
x || grep -q a file
# a comment: x | grep -q a
echo "x | grep -q a"
SH
printf '#!/bin/sh\nx | grep -q a\n' > "$t/scripts/nopipefail.sh"
python3 "$lint" --root "$t" >"$t/out" 2>&1 || { cat "$t/out"; echo "FAIL: a safe form refused"; exit 1; }

# and the tree itself is clean
python3 "$lint" --root "$src" || { echo "FAIL: the tree has cmd | grep -q under pipefail"; exit 1; }
echo "check_pipefail: ok"
