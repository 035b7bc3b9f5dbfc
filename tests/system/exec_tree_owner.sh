#!/usr/bin/env bash
# The generated /dev and /sys tree under `ucmd exec` stats as Linux's:
# root's (0:0), whoever ran the exec (docs/compat.md), though the tree is
# that user's on disk. Run as an unprivileged user (4321): stat, lstat and
# statx of the tree's attributes, control files, directories and links,
# from a dynamic program (coreutils stat: statx; python's os.stat and
# os.lstat) and a static one (busybox stat: ucmd-supervise), all 0:0; a
# dynamic program's fstat of a descriptor opened there too. access and its
# family answer on that owner, as Linux's: for 4321 a 0644 attribute and a
# 0755 directory are not writable, for root (CAP_DAC_OVERRIDE) any is.
source "$(dirname "$0")/lib/common.sh"
need_root "setpriv to an unprivileged user"
need_tools setpriv busybox python3 cc
cc -O2 -static -o "$T/raw_stat_s" "$SRC/tests/exec/raw_stat.c" || fail "cc -static raw_stat"
D=$T/u
mkdir -p "$D" && chown 4321:4321 "$D" && chmod 755 "$T" "$D"
# the user's copies (as_user's): a checkout under /root is not theirs to
# reach, and exec finds its preload, supervisor and ucmdd beside its own copy
shared "$SRC/$B/src/preload/libucmd-preload.so" >/dev/null
shared "$SRC/$B/src/preload/ucmd-supervise" >/dev/null
shared "$SRC/$B/src/server/ucmdd" >/dev/null
ux() { HOME="$D" as_user 4321 "$UCMD" "$@"; }
ux --ctrl "$D/ctrl" create-ctrl --nsze=4096 >/dev/null 2>"$T/err" || fail "create-ctrl: $(cat "$T/err")"
paths=(/sys/class/nvme/nvme0/model /sys/class/nvme/nvme0 /sys/class/nvme /sys/class/nvme/nvme0/device
	/sys/class/nvme/nvme0/device/remove /sys/class/nvme/nvme0/reset_controller
	/sys/block/nvme0n1/queue/scheduler /sys/block/nvme0n1/size)
want=$(for p in "${paths[@]}"; do echo "0:0 $p"; done)
step "coreutils stat (statx), as user 4321"
out=$(ux exec --ctrl "$D/ctrl" -- stat -c '%u:%g %n' "${paths[@]}" 2>"$T/err") || fail "stat: $(cat "$T/err")"
[ "$out" = "$want" ] || fail "statx: $(diff <(echo "$want") <(echo "$out"))"
step "python os.stat, os.lstat"
out=$(ux exec --ctrl "$D/ctrl" -- python3 -c '
import os, sys
for p in sys.argv[1:]:
    a, b = os.stat(p), os.lstat(p)
    print("%d:%d %s" % (a.st_uid, a.st_gid, p) if (a.st_uid, a.st_gid) == (b.st_uid, b.st_gid) else "lstat differs " + p)
' "${paths[@]}" 2>"$T/err") || fail "python: $(cat "$T/err")"
[ "$out" = "$want" ] || fail "os.stat: $(diff <(echo "$want") <(echo "$out"))"
step "static busybox stat (ucmd-supervise)"
out=$(ux exec --ctrl "$D/ctrl" -- busybox stat -c '%u:%g %n' "${paths[@]}" 2>"$T/err") ||
	fail "busybox stat: $(cat "$T/err")"
[ "$out" = "$want" ] || fail "static stat: $(diff <(echo "$want") <(echo "$out"))"
step "fstat of descriptors opened in the tree (python os.fstat; coreutils stat - : statx AT_EMPTY_PATH)"
fds=(/sys/class/nvme/nvme0/model /sys/class/nvme/nvme0 /sys/block/nvme0n1/queue/scheduler /sys/class/nvme/nvme0/reset_controller)
fwant=$(for p in "${fds[@]}"; do echo "0:0 $p"; done)
out=$(ux exec --ctrl "$D/ctrl" -- python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY if not p.endswith("reset_controller") else os.O_PATH)
    a = os.fstat(fd)
    os.close(fd)
    print("%d:%d %s" % (a.st_uid, a.st_gid, p))
' "${fds[@]}" 2>"$T/err") || fail "python fstat: $(cat "$T/err")"
[ "$out" = "$fwant" ] || fail "os.fstat: $(diff <(echo "$fwant") <(echo "$out"))"
out=$(ux exec --ctrl "$D/ctrl" -- sh -c 'stat -c %u:%g - </sys/class/nvme/nvme0/model' 2>"$T/err") ||
	fail "stat -: $(cat "$T/err")"
[ "$out" = "0:0" ] || fail "statx AT_EMPTY_PATH of a tree descriptor: $out"
# Linux's answers for root-owned 0444/0644 attributes and 0755 directories
acc='
import os, sys
m = {"r": os.R_OK, "w": os.W_OK, "x": os.X_OK}
for a in sys.argv[1:]:
    k, p = a.split(":", 1)
    ok = [os.access(p, m[k]), os.access(p, m[k], effective_ids=True),
          os.access(p, m[k], follow_symlinks=False)]
    print(k, p, "yes" if all(ok) else "no" if not any(ok) else "mixed %r" % ok)
'
asks=(r:/sys/block/nvme0n1/queue/scheduler w:/sys/block/nvme0n1/queue/scheduler x:/sys/block/nvme0n1/queue/scheduler
	w:/sys/class/nvme/nvme0/model r:/sys/class/nvme/nvme0/model w:/sys/class/nvme x:/sys/class/nvme)
step "access as user 4321 (python os.access: access, faccessat AT_EACCESS, faccessat2)"
uwant='r /sys/block/nvme0n1/queue/scheduler yes
w /sys/block/nvme0n1/queue/scheduler no
x /sys/block/nvme0n1/queue/scheduler no
w /sys/class/nvme/nvme0/model no
r /sys/class/nvme/nvme0/model yes
w /sys/class/nvme no
x /sys/class/nvme yes'
out=$(ux exec --ctrl "$D/ctrl" -- python3 -c "$acc" "${asks[@]}" 2>"$T/err") || fail "os.access: $(cat "$T/err")"
[ "$out" = "$uwant" ] || fail "access as 4321: $(diff <(echo "$uwant") <(echo "$out"))"
step "access as root: W_OK on a file yes whatever its mode (CAP_DAC_OVERRIDE), X_OK no"
rwant=$(echo "$uwant" | sed -e 's/^w \(.*\) no$/w \1 yes/')
"$UCMD" --ctrl "$T/rctrl" create-ctrl --nsze=4096 >/dev/null 2>"$T/err" || fail "create-ctrl (root): $(cat "$T/err")"
out=$("$UCMD" exec --ctrl "$T/rctrl" -- python3 -c "$acc" "${asks[@]}" 2>"$T/err") || fail "os.access (root): $(cat "$T/err")"
[ "$out" = "$rwant" ] || fail "access as root: $(diff <(echo "$rwant") <(echo "$out"))"
step "static access, faccessat, faccessat2 (ucmd-supervise; raw and libc), as user 4321"
out=$(ux exec --ctrl "$D/ctrl" -- busybox sh -c '
for l in "" libc; do
	for op in access faccessat faccessat2; do
		for a in "r /sys/block/nvme0n1/queue/scheduler" "w /sys/block/nvme0n1/queue/scheduler" \
			"w /sys/class/nvme/nvme0/model" "w /sys/class/nvme"; do
			set -- $a
			echo "$op $1 $2: $("$0" $l $op $2 $1)"
		done
	done
done | sort -u' "$T/raw_stat_s" 2>"$T/err") || fail "static access: $(cat "$T/err")"
swant=$(for op in access faccessat faccessat2; do
	echo "$op r /sys/block/nvme0n1/queue/scheduler: ok"
	echo "$op w /sys/block/nvme0n1/queue/scheduler: err Permission denied"
	echo "$op w /sys/class/nvme/nvme0/model: err Permission denied"
	echo "$op w /sys/class/nvme: err Permission denied"
done | sort -u)
[ "$out" = "$swant" ] || fail "static access: $(diff <(echo "$swant") <(echo "$out"))"
echo "exec_tree_owner: ok"
