#!/usr/bin/env bash
# A real Go client under `ucmd exec` (tests/exec/go_client, Debian's
# golang-go, linked dynamically with cgo so that the preload is loaded):
# Go's runtime lists directories with its own getdents64 instruction and
# runs children with its own clone/execve after resetting its signal
# handlers with every signal blocked; it installs its own SIGSYS handler
# at start. os.ReadDir("/dev") shows ucmd's devices (ucmd-supervise
# --dirs), os/exec runs a child (the preload's SIGSYS handler stays:
# ucmd-supervise records the program's), and a static child is refused
# with EACCES rather than killing anything. os.Open (Go's own openat
# instruction) of /dev/nvme0n1 and /dev/ng0n1 gives ucmd's devices (their
# NVME_IOCTL_ID, a read of what dd wrote), and of a node with an NVMe
# device number ENXIO (ucmd-supervise --dirs makes every open).
source "$(dirname "$0")/lib/common.sh"
need_tools go cc dd od
export HOME=$T GOCACHE=$T/go-cache GOPATH=$T/go GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=1
cp -r "$SRC/tests/exec/go_client" "$T/src"
(cd "$T/src" && go build -o "$T/go_client" .) || fail "go build"
grep -q "dynamically linked" <<<"$(file "$T/go_client")" || fail "go_client is not linked dynamically"
printf 'int main(void) { return 7; }\n' >"$T/static.c"
cc -O2 -static -o "$T/static7" "$T/static.c" || fail "cc -static"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

step "os.ReadDir(/dev) lists ucmd's devices; os/exec runs a child"
out=$(ex "$T/go_client" /dev /bin/echo from-a-go-child 2>&1) || fail "go_client: exit $?: $out"
[ "$out" = "dev: ng0n1 nvme0 nvme0n1
exec: from-a-go-child" ] || fail "go_client: '$out'"

step "a static child of the Go program: refused (EACCES), nothing killed"
out=$(ex "$T/go_client" /dev "$T/static7" 2>/dev/null) || fail "go_client static: exit $?: $out"
grep -qx "exec error: fork/exec $T/static7: permission denied" <<<"$out" ||
	fail "go_client, static child: '$out'"
step "os.Open of ucmd's devices (Go's own openat): ucmd's, its reads ucmd's data"
printf 'ucmd-go-open:%04d' 42 >"$T/pat"
head -c 4096 /dev/zero >>"$T/pat"
ex dd if="$T/pat" of=/dev/nvme0n1 bs=4096 count=1 oflag=direct iflag=fullblock status=none ||
	fail "dd to nvme0n1"
want=$(head -c 8 "$T/pat" | od -An -tx1 | tr -d ' \n')
out=$(ex "$T/go_client" open /dev/nvme0n1 2>&1) || fail "go_client open nvme0n1: exit $?: $out"
[ "$out" = "nsid 1
data: $want" ] || fail "go_client open /dev/nvme0n1: '$out'"
out=$(ex "$T/go_client" open /dev/ng0n1 2>&1) || fail "go_client open ng0n1: exit $?: $out"
[ "$out" = "nsid 1
read error: read /dev/ng0n1: invalid argument" ] || fail "go_client open /dev/ng0n1: '$out'"

step "os.Open of a name ucmd does not have, and of an NVMe device number: refused"
out=$(ex "$T/go_client" open /dev/nvme3n1 2>&1) || fail "go_client open nvme3n1: exit $?: $out"
[ "$out" = "open error: open /dev/nvme3n1: no such file or directory" ] ||
	fail "go_client open /dev/nvme3n1: '$out'"
out=$(UCMD_TEST_NVME_MAJORS=c:1 ex "$T/go_client" open /dev/null 2>&1) ||
	fail "go_client open /dev/null as NVMe: exit $?: $out"
[ "$out" = "open error: open /dev/null: no such device or address" ] ||
	fail "go_client open /dev/null, its major taken as NVMe's: '$out'"
if [ "$(id -u)" = 0 ]; then
	mknod "$T/fake" c 1 3 || fail "mknod"
	out=$(UCMD_TEST_NVME_MAJORS=c:1 ex "$T/go_client" open "$T/fake" 2>&1) ||
		fail "go_client open a mknod node: exit $?: $out"
	[ "$out" = "open error: open $T/fake: no such device or address" ] ||
		fail "go_client open a node made with an NVMe major: '$out'"
fi
echo "exec_go: ok"
