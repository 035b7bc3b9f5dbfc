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
# device number ENXIO (ucmd-supervise --dirs makes every open). Go's
# own stat, lstat, readlink and listing of /sys (os.Stat, os.Lstat,
# os.Readlink, filepath.EvalSymlinks, os.ReadDir("/sys/block")) and its
# reads of /sys attributes are the preload's tree, as libc's are; a
# namespace attached while it runs is there for its next os.Open and
# os.Stat, and gone once deleted.
source "$(dirname "$0")/lib/common.sh"
need_tools go cc dd od nvme python3
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

step "Go's own stat, lstat, readlink and listings of /dev and /sys: the preload's tree"
out=$(ex "$T/go_client" look stat /dev/ng0n1 stat /dev/nvme0n1 lstat /dev/nvme0 \
	stat /dev/nvme5n1 lstat /dev/ng3n1 readlink /sys/block/nvme0n1 eval /sys/block/nvme0n1 \
	readdir /sys/block readdir /sys/class/nvme read /sys/block/nvme0n1/size \
	read /sys/class/nvme/nvme0/nvme0n1/queue/logical_block_size write /sys/block/nvme0n1/size \
	readlink /sys/class/nvme/nvme0/device 2>&1) || fail "go_client look: exit $?: $out"
# the libc side of the same looks (the preload's answers), for the PCI function's name
pci=$(ex readlink /sys/class/nvme/nvme0/device) || fail "readlink through libc"
blocks=$(ex cat /sys/block/nvme0n1/size) || fail "cat size through libc"
want="stat /dev/ng0n1: c 600 241:0
stat /dev/nvme0n1: b 660 259:0
lstat /dev/nvme0: c 600 240:0
stat /dev/nvme5n1: error stat /dev/nvme5n1: no such file or directory
lstat /dev/ng3n1: error lstat /dev/ng3n1: no such file or directory
readlink /sys/block/nvme0n1: ../devices/pci0000:00/${pci##*/}/nvme/nvme0/nvme0n1
eval /sys/block/nvme0n1: /sys/devices/pci0000:00/${pci##*/}/nvme/nvme0/nvme0n1
readdir /sys/block: nvme0n1
readdir /sys/class/nvme: nvme0
read /sys/block/nvme0n1/size: $blocks
read /sys/class/nvme/nvme0/nvme0n1/queue/logical_block_size: 512
write /sys/block/nvme0n1/size: error open /sys/block/nvme0n1/size: permission denied
readlink /sys/class/nvme/nvme0/device: $pci"
[ "$out" = "$want" ] || fail "go_client look: '$out', not '$want'"

step "a namespace attached while Go runs: its os.Open and os.Stat find it; deleted, gone"
CNTLID=$(ex nvme id-ctrl /dev/nvme0 -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["cntlid"])')
out=$(ex "$T/go_client" look open /dev/ng0n2 \
	sh "nvme create-ns /dev/nvme0 --nsze=4096 --ncap=4096 --flbas=0 >/dev/null && nvme attach-ns /dev/nvme0 -n 2 -c $CNTLID >/dev/null" \
	open /dev/ng0n2 stat /dev/nvme0n2 read /sys/block/nvme0n2/size readdir /sys/block \
	sh "nvme detach-ns /dev/nvme0 -n 2 -c $CNTLID >/dev/null && nvme delete-ns /dev/nvme0 -n 2 >/dev/null" \
	stat /dev/nvme0n2 readdir /sys/block 2>&1) || fail "go_client look, hot-plug: exit $?: $out"
want="open /dev/ng0n2: error open /dev/ng0n2: no such file or directory
sh nvme create-ns /dev/nvme0 --nsze=4096 --ncap=4096 --flbas=0 >/dev/null && nvme attach-ns /dev/nvme0 -n 2 -c $CNTLID >/dev/null: ok
open /dev/ng0n2: nsid 2
stat /dev/nvme0n2: b 660 259:1
read /sys/block/nvme0n2/size: 4096
readdir /sys/block: nvme0n1 nvme0n2
sh nvme detach-ns /dev/nvme0 -n 2 -c $CNTLID >/dev/null && nvme delete-ns /dev/nvme0 -n 2 >/dev/null: ok
stat /dev/nvme0n2: error stat /dev/nvme0n2: no such file or directory
readdir /sys/block: nvme0n1"
[ "$out" = "$want" ] || fail "go_client look, hot-plug: '$out', not '$want'"
echo "exec_go: ok"
