#!/usr/bin/env bash
# Debian's nvme-cli, unmodified, under `ucmd exec`: end-to-end protection on
# the emulated controller. Format NVM with PI type 1 on a format with 8
# bytes of metadata, Identify Namespace's dps/dpc, a write whose tuples the
# controller inserts (PRACT) and reads that check them: the right tags
# pass and return the data, a wrong application tag is 283h, a reference
# tag that is not the LBA's is Invalid Protection Information.
source "$(dirname "$0")/lib/common.sh"
need_tools nvme python3
dir=$T
ctrl="$dir/ctrl"

X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@" 2>"$dir/err"; }
J() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

step "a fresh controller; format namespace 1 to 512 + 8 with PI type 1"
"$UCMD" --ctrl "$ctrl" create-ctrl >/dev/null || fail "ucmd create-ctrl $ctrl"
# through the controller device: on the block device nvme-cli also sets
# the block size afterwards, which is not what is tested here
X nvme format /dev/nvme0 -n 1 --lbaf=1 --pi=1 --force >/dev/null || fail "format --pi=1: $(cat "$dir/err")"
X nvme id-ns /dev/nvme0n1 -o json >"$dir/ns.json" || fail "id-ns: $(cat "$dir/err")"
v=$(J '(d["dps"], d["dpc"], d["flbas"] & 0xf)' <"$dir/ns.json")
[ "$v" = "(1, 31, 1)" ] || fail "id-ns (dps, dpc, lbaf) $v, expected (1, 31, 1)"

step "write 3 blocks at LBA 40, the controller inserting the tuples (PRACT)"
head -c 1536 /dev/urandom >"$dir/pat.bin"
io() { X nvme "$1" /dev/nvme0n1 -s "$2" -c 2 -z 1536 -d "$3" --prinfo="$4" --app-tag="$5" \
	--app-tag-mask=0xffff --ref-tag="$6" >/dev/null; }
io write 40 "$dir/pat.bin" 8 0x1234 40 || fail "write --prinfo=8: $(cat "$dir/err")"

step "read them back with every check: the right tags pass"
io read 40 "$dir/r.bin" 15 0x1234 40 || fail "read --prinfo=15: $(cat "$dir/err")"
cmp -s "$dir/pat.bin" "$dir/r.bin" || fail "read back other data"
X nvme read /dev/nvme0n1 -s 41 -c 0 -z 512 -d "$dir/r1.bin" --prinfo=15 --app-tag=0x1234 \
	--app-tag-mask=0xffff --ref-tag=41 >/dev/null || fail "read LBA 41 alone: $(cat "$dir/err")"
cmp -s "$dir/r1.bin" <(tail -c +513 "$dir/pat.bin" | head -c 512) || fail "LBA 41 read back other data"

step "a wrong application tag, a reference tag that is not the LBA"
if io read 40 "$dir/r.bin" 15 0x1235 40; then fail "a wrong application tag passed"; fi
grep -q "0x283" "$dir/err" || fail "wrong app tag: $(cat "$dir/err")"
if io read 40 "$dir/r.bin" 15 0x1234 41; then fail "ILBRT 41 for LBA 40 passed"; fi
grep -q "0x4181" "$dir/err" || fail "wrong ILBRT: $(cat "$dir/err")"
# the application tag unchecked (PRCHK guard and reference only): it passes
io read 40 "$dir/r.bin" 13 0x1235 40 || fail "read --prinfo=13: $(cat "$dir/err")"
echo "exec_nvme_cli_pi: ok"
