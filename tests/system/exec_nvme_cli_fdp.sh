#!/usr/bin/env bash
# Flexible Data Placement with real clients under `ucmd exec`: Debian's
# nvme-cli (`nvme fdp configs/usage/stats/events/status/update/set-events`,
# `nvme write --dir-type=2 --dir-spec`) against `ucmd fdp ...` on the same
# controller (text and JSON must be the same), an invalid placement handle
# that writes nothing, Debian's fio io_uring_cmd writes with verify on an
# FDP namespace, and the media model's write amplification through log 22h
# with placement-tagged writes from a program of its own (fdp_waf.py).
# Every step runs; the failures are listed at the end.
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
dir=$T
ctrl="$dir/ctrl"
failed=()
bad() { echo "  FAIL: $*"; failed+=("$*"); }
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools nvme fio timeout python3 diff cmp

X() { (cd "$dir" && timeout 300 "$UCMD" exec --ctrl "$1" -- "${@:2}"); }
N() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- nvme "$@" 2>"$dir/err"; }
U() { timeout 60 "$UCMD" --ctrl "$ctrl" "$@" 2>"$dir/err"; }
# nvme fdp SUB DEV ARGS... against ucmd fdp SUB ARGS..., in text and JSON
same() {
	local sub=$1 dev=$2; shift 2
	for fmt in normal json; do
		step "nvme fdp $sub $dev $* -o $fmt"
		N fdp "$sub" "$dev" "$@" -o "$fmt" >"$dir/n.out" || { bad "nvme fdp $sub failed: $(cat "$dir/err")"; continue; }
		U fdp "$sub" "$@" -o "$fmt" >"$dir/u.out" || { bad "ucmd fdp $sub failed: $(cat "$dir/err")"; continue; }
		diff -u "$dir/n.out" "$dir/u.out" >"$dir/diff" || { bad "fdp $sub $* -o $fmt: outputs differ"; head -20 "$dir/diff" | sed 's/^/    /'; }
	done
	return 0
}
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
waf() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%.3f" % (int(s["mbmw"]) / int(s["hbmw"])))' "$1"; }

step "create-ctrl refuses what cannot be: usage errors (2), nothing created"
for bad_args in "--fdp-ruhs=4" "--fdp --zns" "--fdp --fdp-ru-size=1000" "--fdp --fdp-ruhs=200"; do
	rc=0
	# shellcheck disable=SC2086
	"$UCMD" --ctrl "$dir/bad" create-ctrl $bad_args >/dev/null 2>&1 || rc=$?
	[ "$rc" = 2 ] || bad "create-ctrl $bad_args: exit $rc, expected 2"
	[ ! -e "$dir/bad/ctrl.json" ] || bad "create-ctrl $bad_args made a controller"
done

step "an FDP controller: 8 handles, 64 KiB reclaim units, 16 MiB of 4 KiB blocks"
"$UCMD" --ctrl "$ctrl" create-ctrl --fdp --nsze=4096 --lbaf=4 --fdp-ru-size=64K >/dev/null \
	|| fail "create-ctrl --fdp"
same configs /dev/nvme0 -e 1
same configs /dev/nvme0 -e 1 -H
same usage /dev/nvme0 -e 1
same status /dev/ng0n1
N id-ctrl /dev/nvme0 -o json >"$dir/id.json" || bad "id-ctrl: $(cat "$dir/err")"
ctratt=$(json_field "$dir/id.json" ctratt)
(( ctratt & (1 << 19) )) || bad "CTRATT $ctratt without FDPS"

step "writes with a placement identifier; a bad one fails and writes nothing"
head -c 32768 /dev/urandom >"$dir/a"
head -c 32768 /dev/urandom >"$dir/b"
N write /dev/ng0n1 -s 0 -c 7 -z 32768 -d "$dir/a" --dir-type=2 --dir-spec=3 >/dev/null \
	|| bad "write through handle 3: $(cat "$dir/err")"
N write /dev/ng0n1 -s 0 -c 7 -z 32768 -d "$dir/b" --dir-type=2 --dir-spec=8 >/dev/null \
	&& bad "a write through handle 8 of 8 succeeded"
grep -q "Invalid Field" "$dir/err" || bad "handle 8: $(cat "$dir/err")"
N read /dev/ng0n1 -s 0 -c 7 -z 32768 -d "$dir/r" >/dev/null || bad "read: $(cat "$dir/err")"
cmp -s "$dir/a" "$dir/r" || bad "the failed write changed the data"
same stats /dev/nvme0 -e 1
U fdp stats -e 1 -o json >"$dir/s.json"
[ "$(json_field "$dir/s.json" hbmw)" = 32768 ] || bad "hbmw $(json_field "$dir/s.json" hbmw), want 32768"
U fdp status -o json >"$dir/st.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["ruhss"][3]["ruamw"]; sys.exit(r != 8)' "$dir/st.json" \
	|| bad "handle 3's unit should have 8 blocks left: $(cat "$dir/st.json")"

step "set-events and update: the partly written unit is a host event"
N fdp set-events /dev/ng0n1 -n 1 -p 3 -t 0,128 -e >/dev/null || bad "set-events: $(cat "$dir/err")"
N fdp update /dev/ng0n1 -p 3 >/dev/null || bad "update: $(cat "$dir/err")"
N fdp update /dev/ng0n1 -p 3,99 >/dev/null && bad "update of identifier 99 succeeded"
same events /dev/nvme0 -e 1 -E
same events /dev/nvme0 -e 1
U fdp events -e 1 -E -o json >"$dir/ev.json"
[ "$(json_field "$dir/ev.json" n)" = 1 ] || bad "host events: $(cat "$dir/ev.json")"
same status /dev/ng0n1

step "fio io_uring_cmd: randwrite + verify on the FDP namespace"
# Debian bookworm's fio 3.33 predates fdp=1 (fio 3.34): its writes carry no
# placement identifier and go through handle 0, as any write without one does.
X "$ctrl" fio --name=w --rw=randwrite --ioengine=io_uring_cmd --cmd_type=nvme \
	--filename=/dev/ng0n1 --bs=4k --size=8M --iodepth=16 --verify=crc32c \
	--output-format=json --output="$dir/fio.json" >/dev/null 2>&1 \
	|| bad "fio write+verify failed: $(tail -5 "$dir/fio.json" 2>/dev/null)"
U fdp stats -e 1 -o json >"$dir/s.json"
[ "$(json_field "$dir/s.json" hbmw)" -ge $((32768 + 8388608)) ] \
	|| bad "fio's writes are not in hbmw: $(cat "$dir/s.json")"

step "the media model: hot/cold through one handle, through two, sequential (log 22h)"
for w in one two seq; do
	c="$dir/waf-$w"
	"$UCMD" --ctrl "$c" create-ctrl --fdp --nsze=4096 --lbaf=4 --fdp-ru-size=64K >/dev/null \
		|| { bad "create-ctrl $w"; continue; }
	# garbage collection reports what it moves: Media Reallocated events
	"$UCMD" --ctrl "$c" fdp set-events -p 0 -t 128 -e >/dev/null || bad "set-events $w"
	X "$c" python3 "$SRC/tests/system/fdp_waf.py" "$w" 4096 6 || bad "fdp_waf.py $w failed"
	"$UCMD" --ctrl "$c" fdp stats -e 1 -o json >"$dir/$w.json" || bad "stats $w"
	eval "waf_$w=$(waf "$dir/$w.json")"
done
echo "  WAF: one handle $waf_one, two handles $waf_two, sequential $waf_seq"
python3 -c 'import sys; a, b, c = map(float, sys.argv[1:]); sys.exit(not (a > 1.5 and b < 0.9 * a and c < 1.01))' \
	"$waf_one" "$waf_two" "$waf_seq" \
	|| bad "WAF one $waf_one (want > 1.5), two $waf_two (want < 0.9 x one), seq $waf_seq (want ~1)"

step "Media Reallocated events: nvme fdp events and ucmd fdp events agree"
for fmt in normal json; do
	X "$dir/waf-one" nvme fdp events /dev/nvme0 -e 1 -o "$fmt" >"$dir/n.out" 2>"$dir/err" \
		|| bad "nvme fdp events: $(cat "$dir/err")"
	"$UCMD" --ctrl "$dir/waf-one" fdp events -e 1 -o "$fmt" >"$dir/u.out" || bad "ucmd fdp events"
	diff -u "$dir/n.out" "$dir/u.out" >"$dir/diff" || { bad "controller events -o $fmt differ"; head -20 "$dir/diff" | sed 's/^/    /'; }
done
"$UCMD" --ctrl "$dir/waf-one" fdp events -e 1 >"$dir/ev.txt" || bad "ucmd fdp events"
grep -q "Media Reallocated" "$dir/ev.txt" || bad "no Media Reallocated event after garbage collection"

step "a reclaim unit time limit of 1 s by the wall clock, and a controller reset"
# The test waits longer than the limit and asserts states, never durations;
# each command is its own ucmd exec, so the unit's start is kept in between.
t="$dir/rutl"
"$UCMD" --ctrl "$t" create-ctrl --fdp --nsze=4096 --lbaf=4 --fdp-ru-size=64K \
	--fdp-ru-time-limit=1 >/dev/null || bad "create-ctrl --fdp-ru-time-limit=1"
X "$t" nvme fdp configs /dev/nvme0 -e 1 -o json >"$dir/cfg.json" 2>"$dir/err" || bad "configs: $(cat "$dir/err")"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["configs"][0]; sys.exit(int(c["erutl"]) != 1)' \
	"$dir/cfg.json" || bad "ERUTL is not 1: $(cat "$dir/cfg.json")"
X "$t" nvme fdp set-events /dev/ng0n1 -n 1 -p 2 -t 1,2 -e >/dev/null 2>&1 || bad "set-events 1,2"
X "$t" nvme write /dev/ng0n1 -s 0 -c 0 -z 4096 -d "$dir/a" --dir-type=2 --dir-spec=2 >/dev/null 2>&1 \
	|| bad "write through handle 2"
sleep 2
"$UCMD" --ctrl "$t" fdp status -o json >"$dir/st.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["ruhss"][2]["ruamw"]; sys.exit(r != 16)' "$dir/st.json" \
	|| bad "past the limit, handle 2 should be on a new unit: $(cat "$dir/st.json")"
X "$t" nvme write /dev/ng0n1 -s 0 -c 0 -z 4096 -d "$dir/a" --dir-type=2 --dir-spec=2 >/dev/null 2>&1 \
	|| bad "write through handle 2"
X "$t" nvme reset /dev/nvme0 >/dev/null 2>&1 || bad "nvme reset"
for fmt in normal json; do
	X "$t" nvme fdp events /dev/nvme0 -e 1 -E -o "$fmt" >"$dir/n.out" 2>"$dir/err" || bad "events: $(cat "$dir/err")"
	"$UCMD" --ctrl "$t" fdp events -e 1 -E -o "$fmt" >"$dir/u.out" || bad "ucmd fdp events"
	diff -u "$dir/n.out" "$dir/u.out" >"$dir/diff" || { bad "host events -o $fmt differ"; head -20 "$dir/diff" | sed 's/^/    /'; }
done
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["events"]; sys.exit([(int(x["type"]), int(x["pid"])) for x in e] != [(1, 2), (2, 2)])' \
	"$dir/u.out" || bad "host events, want time limit then reset on handle 2: $(cat "$dir/u.out")"

step "a restart keeps the statistics and the model"
U fdp stats -e 1 -o json >"$dir/s1.json"
U fdp status -o json >"$dir/st1.json"
U fdp stats -e 1 -o json >"$dir/s2.json"
cmp -s "$dir/s1.json" "$dir/s2.json" || bad "stats changed between two runs"
"$UCMD" --ctrl "$dir/waf-one" fdp stats -e 1 -o json >"$dir/one2.json"
cmp -s "$dir/one.json" "$dir/one2.json" || bad "the WAF controller's stats changed on reopening"

if [ ${#failed[@]} -gt 0 ]; then
	echo "exec_nvme_cli_fdp: ${#failed[@]} failure(s):"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "exec_nvme_cli_fdp: nvme fdp and ucmd fdp agree; placement, events and WAF as expected"
