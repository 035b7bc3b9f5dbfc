#!/usr/bin/env bash
# ucmd's nvm-id-ns and read/write/compare/verify/write-zeroes PI options (--prinfo,
# --ref-tag, --app-tag, --app-tag-mask, --storage-tag-check, --metadata) against Debian's
# nvme-cli under `ucmd exec`, on the same namespace: what one writes with
# tags the other reads back checked, the same wrong tag fails both with the
# same status; the 64b guard format (LBA format 10, PIF 2h) with a reference
# tag above 32 bits; separate metadata read and written through files; and
# the block device's integrity sysfs as Linux shows it.
source "$(dirname "$0")/lib/common.sh"
need_tools nvme python3
dir=$T
ctrl="$dir/ctrl"

X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@" 2>"$dir/err"; }
U() { timeout 120 "$UCMD" --ctrl "$ctrl" "$@" 2>"$dir/err"; }

"$UCMD" --ctrl "$ctrl" create-ctrl --nsze=4096 >/dev/null || fail "ucmd create-ctrl $ctrl"

step "64b guard, type 2 (LBA format 10, 4096 + 16): reference tags above 32 bits"
X nvme format /dev/nvme0 -n 1 --lbaf=10 --pi=2 --force >/dev/null || fail "format: $(cat "$dir/err")"
# nvm-id-ns, key for key and line for line with nvme-cli's: ELBAF's PIF 2h on formats 8-11
for o in normal json; do
	X nvme nvm-id-ns /dev/nvme0n1 -o $o >"$dir/nvm.$o" || fail "nvme nvm-id-ns: $(cat "$dir/err")"
	U nvm-id-ns -n 1 -o $o >"$dir/unvm.$o" || fail "ucmd nvm-id-ns: $(cat "$dir/err")"
	cmp -s "$dir/nvm.$o" "$dir/unvm.$o" || fail "nvm-id-ns -o $o differs: $(diff "$dir/nvm.$o" "$dir/unvm.$o")"
done
grep -q "elbaf 10 : pif:2 lbads:0  (in use)" "$dir/nvm.normal" || fail "nvm-id-ns: $(cat "$dir/nvm.normal")"
head -c 8192 /dev/urandom >"$dir/a.bin"
U write -n 1 -s 8 -c 1 -z 8192 -d "$dir/a.bin" --prinfo=8 --app-tag=0x55 --ref-tag=0x1200000007 \
	>/dev/null || fail "ucmd write --prinfo=8: $(cat "$dir/err")"
U read -n 1 -s 8 -c 1 -z 8192 -d "$dir/r.bin" --prinfo=15 --app-tag=0x55 --app-tag-mask=0xffff \
	--ref-tag=0x1200000007 >/dev/null || fail "ucmd read: $(cat "$dir/err")"
cmp -s "$dir/a.bin" "$dir/r.bin" || fail "ucmd read back other data"
# bits 47:32 of the reference tag are checked: both say 284h for the low 32
# bits alone (nvme-cli 2.3 never asks the NVM Identify Namespace for the PIF:
# it lays every reference tag out as the 16b guard's, 32 bits in CDW14)
if X nvme read /dev/nvme0n1 -s 8 -c 1 -z 8192 -d "$dir/r.bin" --prinfo=15 --app-tag=0x55 \
	--app-tag-mask=0xffff --ref-tag=0x7 >/dev/null; then fail "nvme read: a wrong upper reference tag passed"; fi
grep -q "0x284" "$dir/err" || fail "nvme read, wrong reference tag: $(cat "$dir/err")"
if U read -n 1 -s 8 -c 1 -z 8192 -d "$dir/r.bin" --prinfo=15 --app-tag=0x55 --app-tag-mask=0xffff \
	--ref-tag=0x7 >/dev/null; then fail "ucmd read: a wrong upper reference tag passed"; fi
grep -q "0x284" "$dir/err" || fail "ucmd read, wrong reference tag: $(cat "$dir/err")"
# and the other way round: nvme-cli writes, ucmd reads and compares
X nvme write /dev/nvme0n1 -s 20 -c 1 -z 8192 -d "$dir/a.bin" --prinfo=8 --app-tag=0x66 \
	--ref-tag=0xabcd0001 >/dev/null || fail "nvme write: $(cat "$dir/err")"
U read -n 1 -s 20 -c 1 -z 8192 -d "$dir/r2.bin" --prinfo=15 --app-tag=0x66 --app-tag-mask=0xffff \
	--ref-tag=0xabcd0001 >/dev/null || fail "ucmd read: $(cat "$dir/err")"
cmp -s "$dir/a.bin" "$dir/r2.bin" || fail "ucmd read back other data"
U compare -n 1 -s 20 -c 1 -z 8192 -d "$dir/a.bin" --prinfo=15 --app-tag=0x66 --app-tag-mask=0xffff \
	--ref-tag=0xabcd0001 >/dev/null || fail "ucmd compare: $(cat "$dir/err")"
# a reference tag wider than the format's 48 bits is refused before it is sent
if U read -n 1 -s 20 -c 1 -z 8192 -d "$dir/r2.bin" --ref-tag=0x1000000000000 >/dev/null; then
	fail "a 49-bit reference tag was sent"
fi
grep -q "don't fit" "$dir/err" || fail "49-bit reference tag: $(cat "$dir/err")"

step "verify and write-zeroes with PI: ucmd and nvme-cli agree"
U verify -n 1 -s 20 -c 1 --prinfo=7 --app-tag=0x66 --app-tag-mask=0xffff \
	--ref-tag=0xabcd0001 >/dev/null || fail "ucmd verify: $(cat "$dir/err")"
# (nvme-cli 2.3's verify leaves CDW15 0, whatever --app-tag says: its check is the reference tag's)
X nvme verify /dev/nvme0n1 -s 20 -c 0 --prinfo=7 --ref-tag=0xabcd0002 >/dev/null \
	&& fail "nvme verify: a wrong reference tag passed"
grep -q "0x284" "$dir/err" || fail "nvme verify, wrong reference tag: $(cat "$dir/err")"
U verify -n 1 -s 20 -c 0 --prinfo=7 --ref-tag=0xabcd0002 >/dev/null \
	&& fail "ucmd verify: a wrong reference tag passed"
grep -q "0x284" "$dir/err" || fail "ucmd verify, wrong reference tag: $(cat "$dir/err")"
U verify -n 1 -s 20 -c 0 --prinfo=7 --app-tag=0x67 --app-tag-mask=0xffff \
	--ref-tag=0xabcd0001 >/dev/null && fail "ucmd verify: a wrong application tag passed"
grep -q "0x283" "$dir/err" || fail "ucmd verify, wrong app tag: $(cat "$dir/err")"
U write-zeroes -n 1 -s 30 -c 3 --prinfo=8 --app-tag=0x77 --ref-tag=0x90000000 >/dev/null \
	|| fail "ucmd write-zeroes: $(cat "$dir/err")"
X nvme verify /dev/nvme0n1 -s 30 -c 3 --prinfo=7 --ref-tag=0x90000000 >/dev/null || fail "nvme verify of zeroed blocks: $(cat "$dir/err")"
X nvme write-zeroes /dev/nvme0n1 -s 40 -c 1 --prinfo=8 --app-tag=0x78 --ref-tag=0x10 >/dev/null \
	|| fail "nvme write-zeroes: $(cat "$dir/err")"
U verify -n 1 -s 40 -c 1 --prinfo=7 --app-tag=0x78 --app-tag-mask=0xffff --ref-tag=0x10 \
	>/dev/null || fail "ucmd verify of zeroed blocks: $(cat "$dir/err")"

step "--storage-tag-check (STC, CDW12 bit 24) as nvme-cli has it; ignored without a storage tag (STS 0)"
# both CLIs put STC in CDW12 bit 24 of read, write, compare, verify and write-zeroes
U write -n 1 -s 50 -c 1 -z 8192 -d "$dir/a.bin" --prinfo=8 --app-tag=0x5 --ref-tag=0x1200000032 \
	--storage-tag-check --show-command >"$dir/u.cmd" || fail "ucmd write -C: $(cat "$dir/err")"
cat "$dir/err" >>"$dir/u.cmd"	# the command is shown on stderr
grep -q "^cdw12 *: 21000001$" "$dir/u.cmd" || fail "ucmd write -C: $(grep cdw12 "$dir/u.cmd")"
X nvme write /dev/nvme0n1 -s 52 -c 1 -z 8192 -d "$dir/a.bin" --prinfo=8 --app-tag=0x5 \
	--ref-tag=0x33 -C -v >"$dir/n.cmd" || fail "nvme write -C: $(cat "$dir/err")"
cat "$dir/err" >>"$dir/n.cmd"
# nvme-cli shows CDW12's upper half as its control field: PRACT and STC
grep -q "^control *: 2100$" "$dir/n.cmd" && grep -q "^storagetagcheck : 0001$" "$dir/n.cmd" \
	|| fail "nvme write -C: $(cat "$dir/n.cmd")"
# every format here has STS 0: the check is the reference, application and guard tags' alone
U read -n 1 -s 50 -c 1 -z 8192 -d "$dir/r3.bin" --prinfo=15 --app-tag=0x5 --app-tag-mask=0xffff \
	--ref-tag=0x1200000032 -C >/dev/null || fail "ucmd read -C: $(cat "$dir/err")"
cmp -s "$dir/a.bin" "$dir/r3.bin" || fail "ucmd read -C read back other data"
U verify -n 1 -s 52 -c 1 --prinfo=7 --app-tag=0x5 --app-tag-mask=0xffff --ref-tag=0x33 -C \
	>/dev/null || fail "ucmd verify -C: $(cat "$dir/err")"
U compare -n 1 -s 50 -c 1 -z 8192 -d "$dir/a.bin" --prinfo=15 --app-tag=0x5 --app-tag-mask=0xffff \
	--ref-tag=0x1200000032 -C >/dev/null || fail "ucmd compare -C: $(cat "$dir/err")"
U write-zeroes -n 1 -s 54 -c 1 --prinfo=8 --ref-tag=0x36 -C >/dev/null || fail "ucmd write-zeroes -C: $(cat "$dir/err")"
X nvme verify /dev/nvme0n1 -s 54 -c 1 --prinfo=7 --ref-tag=0x36 -C >/dev/null \
	|| fail "nvme verify -C: $(cat "$dir/err")"
# and a wrong tag still fails with STC set
U read -n 1 -s 50 -c 1 -z 8192 -d "$dir/r3.bin" --prinfo=15 --app-tag=0x6 --app-tag-mask=0xffff \
	--ref-tag=0x1200000032 -C >/dev/null && fail "ucmd read -C: a wrong application tag passed"
grep -q "0x283" "$dir/err" || fail "ucmd read -C, wrong app tag: $(cat "$dir/err")"

step "16b guard, type 1, 512 + 16 separate: the metadata through files"
X nvme format /dev/nvme0 -n 1 --lbaf=2 --pi=1 --force >/dev/null || fail "format: $(cat "$dir/err")"
head -c 1024 /dev/urandom >"$dir/d.bin"
head -c 32 /dev/urandom >"$dir/m.bin"
# PRACT with 16 bytes of metadata: the host's first 8 stay, the tuple is the controller's
U write -n 1 -s 4 -c 1 -z 1024 -d "$dir/d.bin" -y 32 -M "$dir/m.bin" --prinfo=8 --app-tag=0x9 \
	--ref-tag=4 >/dev/null || fail "ucmd write -M: $(cat "$dir/err")"
X nvme read /dev/nvme0n1 -s 4 -c 1 -z 1024 -d "$dir/nd.bin" -y 32 -M "$dir/nm.bin" --prinfo=7 \
	--app-tag=0x9 --app-tag-mask=0xffff --ref-tag=4 >/dev/null || fail "nvme read -M: $(cat "$dir/err")"
U read -n 1 -s 4 -c 1 -z 1024 -d "$dir/ud.bin" -y 32 -M "$dir/um.bin" --prinfo=7 --app-tag=0x9 \
	--app-tag-mask=0xffff --ref-tag=4 >/dev/null || fail "ucmd read -M: $(cat "$dir/err")"
cmp -s "$dir/d.bin" "$dir/nd.bin" && cmp -s "$dir/d.bin" "$dir/ud.bin" || fail "data differs"
cmp -s "$dir/nm.bin" "$dir/um.bin" || fail "nvme-cli's and ucmd's metadata differ"
python3 - "$dir/m.bin" "$dir/um.bin" <<'PY' || fail "metadata read back is not the host's 8 bytes and the tuple"
import sys
m, r = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert len(r) == 32, len(r)
for i in range(2):
    b, t = r[16 * i:16 * i + 16], m[16 * i:16 * i + 16]
    assert b[:8] == t[:8], i                      # the host's bytes before the tuple
    assert b[10:12] == b"\x00\x09", b[8:]         # application tag
    assert int.from_bytes(b[12:16], "big") == 4 + i, b[8:]   # reference tag: the LBA
PY

step "the block device's integrity sysfs, as Linux shows it for this format (the tuple size is the metadata's)"
X sh -c 'for f in format tuple_size protection_interval_bytes; do echo "$f=$(cat /sys/block/nvme0n1/integrity/$f)"; done' \
	>"$dir/int.txt" || fail "integrity sysfs: $(cat "$dir/err")"
grep -qx "format=T10-DIF-TYPE1-CRC" "$dir/int.txt" || fail "integrity: $(cat "$dir/int.txt")"
grep -qx "tuple_size=16" "$dir/int.txt" || fail "integrity: $(cat "$dir/int.txt")"
grep -qx "protection_interval_bytes=512" "$dir/int.txt" || fail "integrity: $(cat "$dir/int.txt")"
# the 64b guard's profile, and none without metadata
X nvme format /dev/nvme0 -n 1 --lbaf=11 --pi=3 --force >/dev/null || fail "format: $(cat "$dir/err")"
v=$(X cat /sys/block/nvme0n1/integrity/format /sys/block/nvme0n1/integrity/tuple_size \
	/sys/block/nvme0n1/integrity/protection_interval_bytes | tr '\n' ' ')
[ "$v" = "EXT-DIF-TYPE3-CRC64 64 4096 " ] || fail "integrity of 4096 + 64, type 3, 64b guard: $v"
X nvme format /dev/nvme0 -n 1 --lbaf=4 --pi=0 --force >/dev/null || fail "format: $(cat "$dir/err")"
v=$(X cat /sys/block/nvme0n1/integrity/format /sys/block/nvme0n1/integrity/tuple_size | tr '\n' ' ')
[ "$v" = "none 0 " ] || fail "integrity without metadata: $v"
echo "exec_cli_pi: ok"
