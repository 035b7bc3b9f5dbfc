#!/usr/bin/env bash
# scripts/check.sh's system-test pool, on stand-in tests that only sleep and
# note when they start and end: two at a time; never two QEMU tests at once,
# nor a QEMU test beside a heavy one; a serial test alone; the longest (by
# the previous run's seconds) first; every test run once; results in name
# order; a failure and a skip counted and named, and the exit status says so.
set -euo pipefail
# the caller's selection is not this test's: its stand-ins are all to run
unset UCMD_CHECK_ONLY
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
sys=$t/system logs=$t/logs trace=$t/trace
mkdir -p "$sys" "$logs"
: >"$trace"

# name, seconds, exit status, header line (the class)
mk() {
	cat >"$sys/$1.sh" <<EOF
#!/usr/bin/env bash
$4
echo "start \$(date +%s%N) $1" >>"$trace"
sleep $2
echo "end \$(date +%s%N) $1" >>"$trace"
exit $3
EOF
}
QEMU='# boots: tests/system/qemu/run.sh --out x --script y'
mk q1 1.2 0 "$QEMU"
mk q2 0.6 0 "$QEMU"
mk q3 0.6 0 "$QEMU"
mk heavy 0.8 0 '# check: heavy'
mk alone 0.4 0 '# check: serial'
mk light_a 0.3 0 ''
mk light_b 0.5 0 ''
mk light_c 0.3 0 ''
mk light_d 0.3 0 ''
mk light_e 0.3 0 ''
mk zz_fails 0.2 1 'echo "FAIL: on purpose"'
mk zz_skips 0.2 77 'echo "SKIP: on purpose"'
# the previous run: light_e took longest of the light ones (longer than
# the guess for a test without one), light_a least
echo "0 50 0" >"$logs/light_e.rc"
echo "0 1 0" >"$logs/light_a.rc"

rc=0
(cd "$src" && UCMD_CHECK_SYSTEM=$sys UCMD_CHECK_LOGS=$logs UCMD_CHECK_JOBS=2 \
	bash scripts/check.sh system) >"$t/out" 2>&1 || rc=$?
fail() { cat "$t/out"; echo "--- trace"; cat "$trace"; echo "FAIL: $*"; exit 1; }

[ "$rc" -ne 0 ] || fail "a failure and a skip, and check.sh exited 0"
[ "$(tail -1 "$t/out")" = "10 passed, 1 failed, 1 skipped" ] || fail "summary: $(tail -1 "$t/out")"
grep -qx "failing: system zz_fails" "$t/out" || fail "no failing: line naming zz_fails"
grep -q "skipped, so not run.*system zz_skips" "$t/out" || fail "the skip is not named"
# the results in name order
got=$(sed -nE 's/^system ([a-z0-9_]+): (ok|FAILED|SKIPPED).*/\1/p' "$t/out" | tr '\n' ' ')
want=$(cd "$sys" && ls -- *.sh | sed 's/\.sh$//' | tr '\n' ' ')
[ "$got" = "$want" ] || fail "results in the order '$got', not '$want'"

python3 - "$trace" <<'PY' || fail "the schedule (above)"
import sys
start, end = {}, {}
for line in open(sys.argv[1]):
    what, ns, name = line.split()
    (start if what == "start" else end)[name] = int(ns)
names = sorted(start)
assert len(names) == 12 and sorted(end) == names, f"ran: {names}, ended: {sorted(end)}"
iv = {n: (start[n], end[n]) for n in names}
def overlap(a, b):
    return iv[a][0] < iv[b][1] and iv[b][0] < iv[a][1]
kind = lambda n: "qemu" if n.startswith("q") else n
errs = []
for i, a in enumerate(names):
    for b in names[i + 1:]:
        if not overlap(a, b):
            continue
        ka, kb = kind(a), kind(b)
        if ka == kb == "qemu":
            errs.append(f"two QEMU tests at once: {a} {b}")
        if {ka, kb} == {"qemu", "heavy"}:
            errs.append(f"QEMU beside heavy: {a} {b}")
        if "alone" in (a, b):
            errs.append(f"the serial test beside {b if a == 'alone' else a}")
# never more than two at once
for n in names:
    at = [m for m in names if iv[m][0] <= iv[n][0] < iv[m][1]]
    if len(at) > 2:
        errs.append(f"{len(at)} at once when {n} started: {at}")
if not any(overlap(a, b) for i, a in enumerate(names) for b in names[i + 1:]):
    errs.append("nothing ran beside anything")
if not start["light_e"] < start["light_a"]:
    errs.append("light_e (50 s last time) started after light_a (1 s)")
if errs:
    sys.exit("\n".join(errs))
PY
# what the next run orders by: status, seconds and CPU seconds per test
read -r r s c <"$logs/zz_fails.rc"
[ "$r" = 1 ] && [[ $s =~ ^[0-9]+$ ]] && [[ $c =~ ^[0-9]+$ ]] || fail "zz_fails.rc: $(cat "$logs/zz_fails.rc")"
echo "check_sched: ok"
