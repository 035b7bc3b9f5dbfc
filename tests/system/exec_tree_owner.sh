#!/usr/bin/env bash
# The generated /dev and /sys tree under `ucmd exec` stats as Linux's:
# root's (0:0), whoever ran the exec (docs/compat.md), though the tree is
# that user's on disk. Run as an unprivileged user (4321): stat, lstat and
# statx of the tree's attributes, control files, directories and links,
# from a dynamic program (coreutils stat: statx; python's os.stat and
# os.lstat) and a static one (busybox stat: ucmd-supervise), all 0:0.
source "$(dirname "$0")/lib/common.sh"
need_root "setpriv to an unprivileged user"
need_tools setpriv busybox python3
D=$T/u
mkdir -p "$D" && chown 4321:4321 "$D" && chmod 755 "$T" "$D"
ux() { as_user 4321 env HOME="$D" "$UCMD" "$@"; }
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
echo "exec_tree_owner: ok"
