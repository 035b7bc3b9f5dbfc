#!/usr/bin/env bash
# Storage tags with Debian's nvme-cli, unmodified, under `ucmd exec`, and
# ucmd's own read/verify on the same namespace: LBA format 13 (4096 + 16,
# 64b guard, Storage Tag Size 16) in nvm-id-ns, Format NVM keeping the
# storage tag size and refusing another, a PRACT write inserting LBST and the
# reference tag (libnvme lays both over CDW3 and CDW14), reads with STC
# (--storage-tag-check): the right tag passes, a wrong one is End-to-end
# Storage Tag Check Error (288h), no STC ignores it; and create-ns --lbstm:
# the mask's cleared bits are not compared.
#
# nvme-cli 2.3 asks for the format's PIF and STS only when given a metadata
# size (-y): without it, it lays the tags out as STS 0's, so every I/O below
# says -y 16 (with PRACT on a 16-byte metadata the controller moves none).
source "$(dirname "$0")/lib/common.sh"
need_tools nvme python3
dir=$T
ctrl="$dir/ctrl"

X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@" 2>"$dir/err"; }
U() { timeout 120 "$UCMD" --ctrl "$ctrl" "$@" 2>"$dir/err"; }
J() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

step "a controller whose namespace 1 is on LBA format 13 (STS 16)"
"$UCMD" --ctrl "$ctrl" create-ctrl --lbaf=13 --nsze=1024 >/dev/null || fail "ucmd create-ctrl --lbaf=13"
X nvme format /dev/nvme0 -n 1 --lbaf=13 --pi=1 --force >/dev/null || fail "format --lbaf=13 --pi=1: $(cat "$dir/err")"
X nvme nvm-id-ns /dev/nvme0n1 -o json >"$dir/nvm.json" || fail "nvm-id-ns: $(cat "$dir/err")"
v=$(J '(d["lbstm"], d["pic"], d["elbafs"][12], d["elbafs"][13])' <"$dir/nvm.json")
[ "$v" = "(65535, 5, {'sts': 8, 'pif': 2}, {'sts': 16, 'pif': 2})" ] || fail "nvm-id-ns: $v"
# ucmd's nvm-id-ns prints what nvme-cli prints
X nvme nvm-id-ns /dev/nvme0n1 >"$dir/nvm.txt" || fail "nvm-id-ns: $(cat "$dir/err")"
U nvm-id-ns -n 1 >"$dir/unvm.txt" || fail "ucmd nvm-id-ns: $(cat "$dir/err")"
cmp -s "$dir/nvm.txt" "$dir/unvm.txt" || fail "nvm-id-ns differs: $(diff "$dir/nvm.txt" "$dir/unvm.txt")"

step "Format NVM does not change a storage tag size: 12 (STS 8) is Invalid Format"
if X nvme format /dev/nvme0 -n 1 --lbaf=12 --pi=1 --force >/dev/null; then
	fail "format from STS 16 to STS 8 passed"
fi
grep -q "0x410a" "$dir/err" || fail "format --lbaf=12: $(cat "$dir/err")"

step "PRACT write: LBST ABCDh and reference tag 40 in the tuple"
head -c 8192 /dev/urandom >"$dir/pat.bin"
X nvme write /dev/nvme0n1 -s 40 -c 1 -z 8192 -d "$dir/pat.bin" -y 32 -M /dev/zero --prinfo=8 --app-tag=0x1234 \
	--ref-tag=40 --storage-tag=0xabcd >/dev/null || fail "write --storage-tag: $(cat "$dir/err")"
X nvme read /dev/nvme0n1 -s 40 -c 1 -z 8192 -d "$dir/r.bin" -y 32 -M "$dir/m.bin" --prinfo=0 \
	>/dev/null || fail "read the metadata: $(cat "$dir/err")"
cmp -s "$dir/pat.bin" "$dir/r.bin" || fail "read back other data"
v=$(python3 -c 'import sys; m=open(sys.argv[1],"rb").read(); print(m[8:16].hex(), m[24:32].hex())' "$dir/m.bin")
[ "$v" = "1234abcd00000028 1234abcd00000029" ] || fail "tuples' application tag and space: $v"

step "STC: the right storage tag passes, a wrong one is 288h, without STC not looked at"
rd() { X nvme read /dev/nvme0n1 -s 40 -c 1 -z 8192 -d "$dir/r.bin" -y 32 -M "$dir/m.bin" --prinfo=15 \
	--app-tag=0x1234 --app-tag-mask=0xffff --ref-tag=40 "$@" >/dev/null; }
rd --storage-tag=0xabcd --storage-tag-check || fail "read -g 0xabcd -C: $(cat "$dir/err")"
cmp -s "$dir/pat.bin" "$dir/r.bin" || fail "read back other data"
if rd --storage-tag=0xabce --storage-tag-check; then fail "a wrong storage tag passed"; fi
grep -q "0x288" "$dir/err" || fail "wrong storage tag: $(cat "$dir/err")"
rd --storage-tag=0xabce || fail "read without STC: $(cat "$dir/err")"

step "ucmd's read and verify lay the tags out the same way"
U read -n 1 -s 40 -c 1 -z 8192 -d "$dir/u.bin" --prinfo=15 --app-tag=0x1234 --app-tag-mask=0xffff \
	--ref-tag=40 --storage-tag=0xabcd --storage-tag-check >/dev/null || fail "ucmd read: $(cat "$dir/err")"
cmp -s "$dir/pat.bin" "$dir/u.bin" || fail "ucmd read back other data"
if U verify -n 1 -s 40 -c 1 --prinfo=7 --app-tag=0x1234 --app-tag-mask=0xffff --ref-tag=40 \
	--storage-tag=0x1bcd --storage-tag-check >/dev/null; then fail "ucmd verify: a wrong storage tag passed"; fi
grep -q -i "storage tag" "$dir/err" || fail "ucmd verify, wrong storage tag: $(cat "$dir/err")"
U verify -n 1 -s 40 -c 1 --prinfo=7 --app-tag=0x1234 --app-tag-mask=0xffff --ref-tag=40 \
	--storage-tag=0xabcd --storage-tag-check >/dev/null || fail "ucmd verify: $(cat "$dir/err")"

step "create-ns --flbas=13 --dps=1 --lbstm=0xff00: the low byte is not compared"
CNTLID=$(X nvme id-ctrl /dev/nvme0 -o json | J 'd["cntlid"]')
X sh -c "nvme create-ns /dev/nvme0 --nsze=64 --ncap=64 --flbas=13 --dps=1 --lbstm=0xff00 >/dev/null &&
	nvme attach-ns /dev/nvme0 -n 2 -c $CNTLID >/dev/null" || fail "create-ns: $(cat "$dir/err")"
v=$(X nvme nvm-id-ns /dev/nvme0n2 -o json | J 'd["lbstm"]')
[ "$v" = 65280 ] || fail "namespace 2's lbstm: $v"
X nvme write /dev/nvme0n2 -s 3 -c 0 -z 4096 -d "$dir/pat.bin" -y 16 -M /dev/zero --prinfo=8 \
	--ref-tag=3 --storage-tag=0x12ab >/dev/null || fail "write on namespace 2: $(cat "$dir/err")"
rd2() { X nvme read /dev/nvme0n2 -s 3 -c 0 -z 4096 -d "$dir/r2.bin" -y 16 -M "$dir/m2.bin" --prinfo=13 \
	--ref-tag=3 --storage-tag-check --storage-tag="$1" >/dev/null; }
rd2 0x12cd || fail "LBSTM FF00h, the low byte differing: $(cat "$dir/err")"
if rd2 0x13ab; then fail "LBSTM FF00h, the high byte differing passed"; fi
grep -q "0x288" "$dir/err" || fail "namespace 2, wrong storage tag: $(cat "$dir/err")"
echo "exec_nvme_cli_pi_stag: ok"
