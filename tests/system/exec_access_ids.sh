#!/usr/bin/env bash
# access, faccessat and faccessat2 of ucmd's nodes and of the tree's
# attributes, answered by ucmd-supervise (a static program's every look, a
# dynamic one's own syscall instruction), are for the ids the calling
# process has now, as Linux answers them: a root program that dropped to
# user 65534 (tests/exec/raw_stat.c -u) is refused a 0600 root node
# (EACCES, read and write) and may read, not write, a 0444 attribute;
# root may do both. Static (raw and through glibc) and dynamic (raw, and
# through the preload's interposers, which ask the supervisor what the
# dropped user can no longer reach: src/preload/svcall.c) alike.
source "$(dirname "$0")/lib/common.sh"
need_tools cc busybox
[ "$(id -u)" = 0 ] || skip "needs root (a program that drops from root to a user)"
cc -O2 -static -o "$T/raw_stat_s" "$SRC/tests/exec/raw_stat.c" || fail "cc -static raw_stat"
cc -O2 -o "$T/raw_stat" "$SRC/tests/exec/raw_stat.c" || fail "cc raw_stat"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"

# "WHO OP MODE PATH: ANSWER" for root and for 65534, each call as $1 [libc] makes it
cat >"$T/access.sh" <<'EOS'
R=$1
shift
for p in /dev/ng0n1 /dev/nvme0n1 /dev/nvme0 /sys/block/nvme0n1/size /sys/class/nvme/nvme0/model; do
	for op in access faccessat faccessat2; do
		for m in r w; do
			echo "root $op $m $p: $("$R" "$@" $op $p $m)"
			echo "65534 $op $m $p: $("$R" -u 65534 "$@" $op $p $m)"
		done
	done
done
EOS
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
ex busybox sh "$T/access.sh" "$T/raw_stat_s" >"$T/s_raw.txt" 2>&1 || fail "static: $(cat "$T/s_raw.txt")"
ex busybox sh "$T/access.sh" "$T/raw_stat_s" libc >"$T/s_libc.txt" 2>&1 || fail "static libc: $(cat "$T/s_libc.txt")"
ex bash "$T/access.sh" "$T/raw_stat" >"$T/d_raw.txt" 2>&1 || fail "dynamic: $(cat "$T/d_raw.txt")"
ex bash "$T/access.sh" "$T/raw_stat" libc >"$T/d_libc.txt" 2>&1 || fail "dynamic libc: $(cat "$T/d_libc.txt")"

# what Linux answers for those files (root 0600 nodes; sysfs 0444 attributes)
for p in /dev/ng0n1 /dev/nvme0n1 /dev/nvme0; do
	for op in access faccessat faccessat2; do
		for m in r w; do
			echo "root $op $m $p: ok"
			echo "65534 $op $m $p: err Permission denied"
		done
	done
done >"$T/want.txt"
for p in /sys/block/nvme0n1/size /sys/class/nvme/nvme0/model; do
	for op in access faccessat faccessat2; do
		printf '%s\n' "root $op r $p: ok" "65534 $op r $p: ok" "root $op w $p: ok" \
			"65534 $op w $p: err Permission denied"
	done
done >>"$T/want.txt"
sort "$T/want.txt" >"$T/want.sorted"

for f in s_raw s_libc d_raw d_libc; do
	step "$f: each answer for the ids the program has at the call"
	sort "$T/$f.txt" >"$T/$f.sorted"
	diff "$T/want.sorted" "$T/$f.sorted" >"$T/$f.diff" ||
		fail "$f answers other than Linux's (- Linux, + exec): $(cat "$T/$f.diff")"
done
step "faccessat with flags where the kernel has no faccessat2 (glibc emulates them)"
# the preload's look at a tree path once called itself for ever (a crash)
cc -O2 -o "$T/access_enosys" "$SRC/tests/exec/access_enosys.c" || fail "cc access_enosys"
P="/sys/block/nvme0n1/size /sys/class/nvme/nvme0/model /dev/ng0n1 /dev/nvme0n1"
# shellcheck disable=SC2086
ex "$T/access_enosys" $P >"$T/enosys.txt" 2>&1 || fail "access_enosys: $(cat "$T/enosys.txt")"
for p in $P; do echo "$p: ok"; done >"$T/enosys.want"
diff "$T/enosys.want" "$T/enosys.txt" >"$T/enosys.diff" ||
	fail "faccessat without faccessat2 (- Linux, + exec): $(cat "$T/enosys.diff")"

# A rename anywhere on the machine makes a scoped lookup's ".." fail with
# EAGAIN (fs/namei.c); the tree's links climb by "..", so the answers to a
# stat or access of a tree attribute were EAGAIN now and then on a busy
# machine (another exec syncing its tree beside this one). With renames
# running all along, every one of thousands of looks is answered.
step "stat and access of tree attributes while the machine renames"
cc -O2 -o "$T/rename_loop" "$SRC/tests/exec/rename_loop.c" || fail "cc rename_loop"
mkdir "$T/ren"
mkfifo "$T/ren.fifo"
"$T/rename_loop" "$T/ren" >"$T/ren.fifo" &
REN=$!
read -r ready <"$T/ren.fifo" || fail "rename_loop did not start"
[ "$ready" = ready ] || fail "rename_loop: $ready"
for p in /sys/class/nvme/nvme0/model /sys/block/nvme0n1/size; do
	got=$(ex "$T/raw_stat_s" looks 5000 "$p" 2>&1) || fail "static looks $p: $got"
	[ "$got" = ok ] || fail "static looks at $p during renames: $got"
	got=$(ex "$T/raw_stat" looks 5000 "$p" 2>&1) || fail "dynamic looks $p: $got"
	[ "$got" = ok ] || fail "dynamic (own instruction) looks at $p during renames: $got"
done
kill "$REN"
echo "exec_access_ids: ok"
