#!/usr/bin/env bash
# The controller directory (docs/security.md), with the real CLI as root and as
# nobody: root is not a confused deputy for a directory another user controls
# (symlinked image, device path in ctrl.json), a missing ctrl.json deletes
# nothing, one writer at a time with a clear "in use by pid N", a read-only
# directory still reads, a full file system is Capacity Exceeded, new files
# are private, and a group/world-writable directory is refused with the
# reason. Every check fails on the code before the fix (commit ad8c28c).
source "$(dirname "$0")/lib/common.sh"
top=$T
mnt=""
unmount() { [ -z "$mnt" ] || umount "$mnt" 2>/dev/null || true; }
at_exit unmount
need_root "runs the CLI as nobody (setpriv)"
as_nobody() { as_user --bounding-set=-all 65534 "$@"; }
sum() { sha256sum "$1" | cut -d' ' -f1; }
# a root-owned file that must come through every attack unchanged
scratch="$top/root-owned"
printf 'root secret, do not touch\n' > "$scratch"
chmod 0644 "$scratch"
scratch_sum=$(sum "$scratch")
scratch_ok() {
	[ "$(stat -c %s "$scratch")" = 26 ] || fail "root-owned target resized: $(stat -c %s "$scratch")"
	[ "$(sum "$scratch")" = "$scratch_sum" ] || fail "root-owned target overwritten"
}
head -c 4096 /dev/urandom > "$top/data.bin"
chmod 0644 "$top/data.bin"

# nobody's own controller, with data
udir="$top/user"
mkdir "$udir"
chown nobody:nogroup "$udir"
export UCMD_CTRL="$udir/ctrl"
# 16 MiB, not the default 1 GiB: class 2 hashes the whole image twice
as_nobody "$UCMD" create-ctrl --nsze 32768 >/dev/null
as_nobody "$UCMD" write -s 0 -c 7 -d "$top/data.bin" >/dev/null 2>&1

step "class 11: created files are private (0700 directory, 0600 files)"
[ "$(stat -c %a "$UCMD_CTRL")" = 700 ] || fail "directory mode $(stat -c %a "$UCMD_CTRL")"
[ "$(stat -c %a "$UCMD_CTRL/ctrl.json")" = 600 ] || fail "ctrl.json mode"
[ "$(stat -c %a "$UCMD_CTRL/ns1.img")" = 600 ] || fail "ns1.img mode"

step "class 1: root refuses a directory another user owns"
if "$UCMD" list 2>"$top/err" >/dev/null; then fail "root used nobody's directory"; fi
grep -q "owned by uid 65534" "$top/err" || { cat "$top/err"; fail "no reason given"; }

step "class 1: ns1.img symlinked to a root-owned file"
mv "$UCMD_CTRL/ns1.img" "$udir/ns1.saved"
as_nobody ln -s "$scratch" "$UCMD_CTRL/ns1.img"
if "$UCMD" list >/dev/null 2>&1; then fail "root listed a symlinked image"; fi
if "$UCMD" write -s 0 -c 7 -d "$top/data.bin" >/dev/null 2>&1; then fail "root wrote through it"; fi
if as_nobody "$UCMD" write -s 0 -c 7 -d "$top/data.bin" 2>"$top/err" >/dev/null; then
	fail "nobody wrote through a symlinked image"
fi
grep -q "symbolic link" "$top/err" || { cat "$top/err"; fail "no reason for the symlink"; }
scratch_ok
rm "$UCMD_CTRL/ns1.img"
mv "$udir/ns1.saved" "$UCMD_CTRL/ns1.img"
# root's own directory with a planted symlink: refused too
rdir="$top/root-ctrl"
"$UCMD" --ctrl "$rdir" create-ctrl >/dev/null
rm "$rdir/ns1.img"
ln -s "$scratch" "$rdir/ns1.img"
if "$UCMD" --ctrl "$rdir" list >/dev/null 2>&1; then fail "root followed its own symlink"; fi
scratch_ok
rm -rf "$rdir"

step "class 1: \"store\":\"device\" with a path to a root-owned file in ctrl.json"
cp -p "$UCMD_CTRL/ctrl.json" "$udir/ctrl.saved"
# nobody's edit, prepared by python3 (root's copy) and written by nobody
python3 - "$UCMD_CTRL/ctrl.json" "$scratch" "$top/evil.json" <<'PY'
import json, sys
src, target, out = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(src))
d["namespaces"][0]["store"] = "device"
d["namespaces"][0]["path"] = target
# the checksum is no secret: an attacker writes a state the loader accepts
# (version 1 has none), so that the device rule itself is what refuses it
d["version"] = 1
d.pop("crc32c", None)
d.pop("generation", None)
# and none of what version 3 added
for k in ("subnqn", "boot_id", "current_features", "error_log", "sanitize", "self_test",
          "self_test_run", "fw_slots"):
    d.pop(k, None)
json.dump(d, open(out, "w"))
PY
chmod 0644 "$top/evil.json"
as_nobody cp "$top/evil.json" "$UCMD_CTRL/ctrl.json"
if "$UCMD" list >/dev/null 2>&1; then fail "root opened a device path from nobody's ctrl.json"; fi
if "$UCMD" write -s 0 -c 7 -d "$top/data.bin" >/dev/null 2>&1; then fail "root wrote the device path"; fi
# even a world-writable root file is not nobody's to name
chmod 0666 "$scratch"
if as_nobody "$UCMD" write -s 0 -c 7 -d "$top/data.bin" 2>"$top/err" >/dev/null; then
	fail "nobody's ctrl.json reached a root-owned file"
fi
chmod 0644 "$scratch"
grep -q "not a block device" "$top/err" || { cat "$top/err"; fail "no reason"; }
scratch_ok
as_nobody cp "$udir/ctrl.saved" "$UCMD_CTRL/ctrl.json"

step "class 1: root's own directory naming a root file as a device (ucmdd's deployment)"
# the directory and the file are root's: "owned like the directory" would
# serve any root file (/etc/shadow) to the namespace's readers
rdir2="$top/root-ctrl2"
"$UCMD" --ctrl "$rdir2" create-ctrl >/dev/null
"$UCMD" --ctrl "$rdir2" write -s 0 -c 7 -d "$top/data.bin" >/dev/null
big="$top/root-big"
head -c "$(stat -c %s "$rdir2/ns1.img")" /dev/urandom > "$big"
chmod 0600 "$big"
big_sum=$(sum "$big")
python3 - "$rdir2/ctrl.json" "$big" <<'PY'
import json, sys
path, target = sys.argv[1], sys.argv[2]
d = json.load(open(path))
d["namespaces"][0]["store"] = "device"
d["namespaces"][0]["path"] = target
d["version"] = 1
for k in ("crc32c", "generation", "subnqn", "boot_id", "current_features", "error_log",
          "sanitize", "self_test", "self_test_run", "fw_slots"):
    d.pop(k, None)
json.dump(d, open(path, "w"))
PY
# read opens the controller read-only (O_RDONLY), write read-write
if "$UCMD" --ctrl "$rdir2" read -s 0 -c 7 >"$top/out.bin" 2>"$top/err"; then
	fail "root's controller served a root file as a device namespace"
fi
grep -q "not a block device" "$top/err" || { cat "$top/err"; fail "no reason for the file"; }
if "$UCMD" --ctrl "$rdir2" write -s 0 -c 7 -d "$top/data.bin" >/dev/null 2>&1; then
	fail "root's controller wrote a root file as a device namespace"
fi
[ "$(sum "$big")" = "$big_sum" ] || fail "the root file named as a device changed"
as_nobody "$UCMD" read -s 0 -c 7 > "$top/out.bin"
cmp -s "$top/data.bin" "$top/out.bin" || fail "data changed by the refused attempts"

step "class 2: rm ctrl.json; ucmd list keeps ns1.img byte for byte and explains"
img_sum=$(sum "$UCMD_CTRL/ns1.img")
img_size=$(stat -c %s "$UCMD_CTRL/ns1.img")
mv "$UCMD_CTRL/ctrl.json" "$udir/ctrl.saved"
if as_nobody "$UCMD" list 2>"$top/err" >/dev/null; then fail "list without ctrl.json succeeded"; fi
grep -q "restore ctrl.json" "$top/err" || { cat "$top/err"; fail "no recovery advice"; }
if as_nobody "$UCMD" write -s 0 -c 7 -d "$top/data.bin" >/dev/null 2>&1; then fail "write succeeded"; fi
[ "$(stat -c %s "$UCMD_CTRL/ns1.img")" = "$img_size" ] || fail "ns1.img resized"
[ "$(sum "$UCMD_CTRL/ns1.img")" = "$img_sum" ] || fail "ns1.img changed"
[ ! -e "$UCMD_CTRL/ctrl.json" ] || fail "a new ctrl.json was written"
as_nobody mv "$udir/ctrl.saved" "$UCMD_CTRL/ctrl.json"
as_nobody "$UCMD" read -s 0 -c 7 > "$top/out.bin"
cmp -s "$top/data.bin" "$top/out.bin" || fail "data lost after restoring ctrl.json"

step "class 7: a writer holds the controller; others get 'in use by pid N'"
mkfifo "$top/fifo"
chown nobody "$top/fifo"
exec 3<>"$top/fifo"
as_nobody "$UCMD" write -s 16 -c 0 <&3 >/dev/null 2>"$top/held.err" &
holder=$!
for _ in $(seq 100); do [ -e "$UCMD_CTRL/ctrl.pid" ] && break; sleep 0.05; done
if as_nobody "$UCMD" write -s 0 -c 7 -d "$top/data.bin" 2>"$top/err" >/dev/null; then
	fail "a second writer ran beside the first"
fi
grep -q "in use by pid" "$top/err" || { cat "$top/err"; fail "no 'in use by pid'"; }
grep -q "Device or resource busy" "$top/err" || { cat "$top/err"; fail "not -EBUSY"; }
if as_nobody "$UCMD" read -s 0 -c 7 2>"$top/err" >/dev/null; then fail "a reader ran beside a writer"; fi
grep -q "in use by" "$top/err" || { cat "$top/err"; fail "reader: no 'in use'"; }
head -c 512 /dev/zero >&3
wait "$holder" || { cat "$top/held.err"; fail "the holding writer failed"; }
exec 3>&-

step "class 7: two writer loops: only the clear in-use error, never ENOENT"
loop() {
	for i in $(seq 25); do
		if ! as_nobody "$UCMD" write -s $((i * 8)) -c 7 -d "$top/data.bin" >/dev/null \
			2>"$top/run.$1"; then
			cat "$top/run.$1" >> "$top/loop.$1"
		fi
	done
}
: > "$top/loop.a"; : > "$top/loop.b"
loop a & la=$!
loop b & lb=$!
wait "$la" "$lb"
if grep -v -e "in use by" -e "Device or resource busy" "$top/loop.a" "$top/loop.b"; then
	fail "a concurrent writer failed with something other than the in-use error"
fi
grep -q '\.tmp\.' <<<"$(ls -a "$UCMD_CTRL")" && fail "temp files left behind"
as_nobody "$UCMD" read -s 0 -c 7 > "$top/out.bin"
cmp -s "$top/data.bin" "$top/out.bin" || fail "data changed by the loops"

step "class 10: a read-only directory still reads"
json_sum=$(sum "$UCMD_CTRL/ctrl.json")
chmod 0500 "$UCMD_CTRL"
as_nobody "$UCMD" read -s 0 -c 7 > "$top/out.bin" || fail "read in a read-only directory"
cmp -s "$top/data.bin" "$top/out.bin" || fail "read-only read differs"
as_nobody "$UCMD" id-ctrl >/dev/null || fail "id-ctrl in a read-only directory"
as_nobody "$UCMD" --output-format json list >/dev/null || fail "list in a read-only directory"
if as_nobody "$UCMD" write -s 0 -c 7 -d "$top/data.bin" 2>"$top/err" >/dev/null; then
	fail "write in a read-only directory"
fi
chmod 0700 "$UCMD_CTRL"
[ "$(sum "$UCMD_CTRL/ctrl.json")" = "$json_sum" ] || fail "a reader rewrote ctrl.json"

step "class 1/11: a group- or world-writable directory is refused with the reason"
chmod 0770 "$UCMD_CTRL"
if as_nobody "$UCMD" list 2>"$top/err" >/dev/null; then fail "group-writable directory used"; fi
grep -q "writable by group or others" "$top/err" || { cat "$top/err"; fail "no reason"; }
chmod 0707 "$UCMD_CTRL"
if as_nobody "$UCMD" read -s 0 -c 7 2>"$top/err" >/dev/null; then fail "world-writable directory used"; fi
grep -q "writable by group or others" "$top/err" || { cat "$top/err"; fail "no reason"; }
chmod 0700 "$UCMD_CTRL"

step "class 10: a full file system is Capacity Exceeded, not Internal Error"
mnt="$top/small"
mkdir "$mnt"
if mount -t tmpfs -o size=2m,mode=0700 tmpfs "$mnt" 2>/dev/null; then
	full() { "$UCMD" --ctrl "$mnt/ctrl" "$@"; }
	"$UCMD" --ctrl "$mnt/ctrl" create-ctrl >/dev/null
else
	# no mount here: a 2 MiB file size limit (EFBIG) stands in for the full disk
	mnt=""
	"$UCMD" --ctrl "$top/limited" create-ctrl >/dev/null
	full() { ( trap '' XFSZ; ulimit -f 2048; "$UCMD" --ctrl "$top/limited" "$@" ); }
fi
head -c 1048576 /dev/urandom > "$top/big.bin"
st=""
for i in 0 1 2 3; do
	if ! full write -s $((i * 2048)) -c 2047 -d "$top/big.bin" 2>"$top/err" >/dev/null; then
		st=failed
		break
	fi
done
[ "$st" = failed ] || fail "4 MiB fitted into 2 MiB"
grep -q "Capacity Exceeded" "$top/err" || { cat "$top/err"; fail "not Capacity Exceeded"; }
full read -s 0 -c 7 >/dev/null || fail "a full file system no longer reads"
echo "dir_hardening: all checks passed"
