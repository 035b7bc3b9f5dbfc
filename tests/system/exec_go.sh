#!/usr/bin/env bash
# A real Go client under `ucmd exec` (tests/exec/go_client, Debian's
# golang-go, linked dynamically with cgo so that the preload is loaded):
# Go's runtime lists directories with its own getdents64 instruction and
# runs children with its own clone/execve after resetting its signal
# handlers with every signal blocked; it installs its own SIGSYS handler
# at start. os.ReadDir("/dev") shows ucmd's devices (ucmd-supervise
# --dirs), os/exec runs a child (the preload's SIGSYS handler stays:
# ucmd-supervise records the program's), and a static child is refused
# with EACCES rather than killing anything.
source "$(dirname "$0")/lib/common.sh"
need_tools go cc
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
echo "exec_go: ok"
