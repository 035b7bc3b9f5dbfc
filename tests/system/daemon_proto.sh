#!/usr/bin/env bash
# ucmdd's control protocol from a raw client (tests/system/ucmdd_proto.py,
# Python's AF_UNIX SOCK_SEQPACKET with SCM_RIGHTS): the real daemon runs as
# root on a temporary directory; HELLO, DEVICE_NAMES, DISK_STAT, OPEN and
# CLOSE answer as documented; malformed messages (bad magic, op, sizes,
# flags, fds, names) get an error reply and the daemon stays up for this
# client and the next; the synchronous ioctl path bounces the caller's
# memory (NVME_IOCTL_ID, Identify through NVME_IOCTL_ADMIN64_CMD into a
# ctypes buffer, a bad address is -EFAULT); the client's identity is the
# kernel's (root may read the SMART log, nobody may not, nor nobody as
# "root" of a user namespace of its own); SIGHUP reloads the policy;
# SIGTERM exits 0 and connected clients see the connection close.
# UCMDD_ADOPT is taken for the client's own descendants only, and only before the
# connection held anything; the child's exit ends the connection.
source "$(dirname "$0")/lib/common.sh"
dir=$T
pid=
need_root "runs clients as nobody (setpriv)"
# the system's interpreter: a user's own (pyenv under /root) is not nobody's to run
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
PROTO=$(shared tests/system/ucmdd_proto.py)
sock=$dir/ucmdd.sock

start() {	# ucmdd arguments: runs it in the foreground, in the background
	"$UCMDD" --foreground --ctrl "$dir/ctrl" --socket "$sock" "$@" 2>>"$dir/ucmdd.log" &
	pid=$!
	for _ in $(seq 200); do
		[ -S "$sock" ] && break
		kill -0 "$pid" 2>/dev/null || { cat "$dir/ucmdd.log"; fail "ucmdd exited"; }
		sleep 0.05
	done
	[ -S "$sock" ] || fail "no socket"
}
alive() { kill -0 "$pid" 2>/dev/null || { cat "$dir/ucmdd.log"; fail "ucmdd died: $*"; }; }

step "options: bad ones are refused with a message, --help and --version answer"
o=$("$UCMDD" --help) && grep -q -- "--ctrl DIR" <<<"$o" || fail "--help"
o=$("$UCMDD" --version) && grep -q "^ucmdd " <<<"$o" || fail "--version"
rc=0; "$UCMDD" --bogus 2>"$dir/err" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown option --bogus" "$dir/err" || fail "--bogus: rc $rc $(cat "$dir/err")"
rc=0; "$UCMDD" --socket "$sock" 2>"$dir/err" || rc=$?
[ "$rc" = 2 ] && grep -q "no --ctrl" "$dir/err" || fail "no --ctrl: rc $rc"
rc=0; "$UCMDD" --ctrl "$dir/x" 2>"$dir/err" || rc=$?
[ "$rc" = 2 ] && grep -q "no --socket" "$dir/err" || fail "no --socket: rc $rc"
for bad in 0 12x 1000 K 99999999999999G -4096; do
	rc=0; "$UCMDD" --ram "$bad" --socket "$sock" 2>"$dir/err" || rc=$?
	[ "$rc" = 2 ] && grep -q -- "--ram $bad: a size" "$dir/err" || fail "--ram $bad: rc $rc $(cat "$dir/err")"
done
[ ! -e "$sock" ] || fail "socket left by a refused --ram"
mkdir -m 0755 "$dir/open-ctrl"
rc=0; "$UCMDD" --foreground --ctrl "$dir/open-ctrl" --socket "$sock" 2>"$dir/err" || rc=$?
[ "$rc" = 1 ] && grep -q "mode 0700" "$dir/err" || fail "a 0755 directory: rc $rc $(cat "$dir/err")"
[ ! -e "$sock" ] || fail "socket left by a failed start"

step "start: a missing directory is created 0700 with a namespace; the socket is 0666 as asked"
cat >"$dir/policy.ini" <<'INI'
[policy]
inherit = default
INI
start --policy "$dir/policy.ini" --socket-mode 0666 --audit "$dir/audit.jsonl"
[ "$(stat -c %a "$dir/ctrl")" = 700 ] || fail "ctrl dir mode $(stat -c %a "$dir/ctrl")"
[ -f "$dir/ctrl/ns1.img" ] || fail "no default namespace"
[ "$(stat -c %a "$sock")" = 666 ] || fail "socket mode $(stat -c %a "$sock")"

step "requests and malformed messages"
"$PY" - "$sock" "$PROTO" <<'PY'
import ctypes, errno, os, struct, sys
sys.path.insert(0, os.path.dirname(sys.argv[2]))
from ucmdd_proto import *

c = Client(sys.argv[1])
res, body, _ = c.hello()
check(res == 0, "hello: %d" % res)
ver, rings, fds, entries = struct.unpack("<IIII", body)
check(ver == 1 and rings > 0 and fds > 0 and entries > 0, "hello limits %r" % ((ver, rings, fds, entries),))
check(c.hello(version=99)[0] == -errno.EPROTONOSUPPORT, "hello of another version")

n, names = c.device_names()
check(n == len(names) and {"null", "nvme0", "ng0n1", "nvme0n1"} <= set(names), "names %d %r" % (n, names))

res, st = c.disk_stat("nvme0n1")
check(res == 0 and len(st) == 80, "disk_stat nvme0n1: %d, %d bytes" % (res, len(st)))
check(c.disk_stat("ng0n1")[0] == -errno.ENOTBLK, "disk_stat of a char device")
check(c.disk_stat("nope")[0] == -errno.ENOENT, "disk_stat of nothing")

fd0 = c.open("ng0n1")
fd1 = c.open("nvme0", os.O_RDONLY | os.O_CLOEXEC)
check((fd0, fd1) == (0, 1), "fds %r" % ((fd0, fd1),))
check(c.open("nope") == -errno.ENOENT, "open of nothing")
check(c.open("ng0n1", os.O_RDWR | os.O_CREAT) == -errno.EINVAL, "open O_CREAT")
check(c.open("ng0n1", 3) == -errno.EINVAL, "open access mode 3")
check(c.close_fd(fd0) == 0, "close")
check(c.close_fd(fd0) == -errno.EBADF, "close twice")
check(c.close_fd(12345) == -errno.EBADF, "close of a number never opened")
check(c.close_fd(-1) == -errno.EBADF, "close -1")
fd0 = c.open("ng0n1")
check(fd0 == 0, "the lowest free number again: %d" % fd0)
print("hello, device_names, disk_stat, open, close: ok")

# ---- ioctls: the daemon reads and writes this process's memory ----
check(c.ioctl(fd0, NVME_IOCTL_ID, 0) == 1, "NVME_IOCTL_ID")
res, data = identify_ctrl(c, fd1)
check(res == 0, "identify: %d" % res)
vid, ssvid = struct.unpack_from("<HH", data)
model = data[24:64].decode(errors="replace").strip()
check(any(data[4:24]) and model and data[4:64].isascii(), "identify data: %r" % data[:64])
print("identify through ADMIN64 into a ctypes buffer: model %r" % model)
# ---- the controller's registers (resource0), for whoever holds nvme0 open ----
def regs(fd, off, ln, pad=0):
    return c.msg(REGS_READ, struct.pack("<iIII", fd, off, ln, pad))[:2]
res, body = regs(fd1, 0, 0x1000)
check(res == 0 and len(body) == 0x1000, "regs_read of nvme0: %d, %d bytes" % (res, len(body)))
cap, vs, cc, csts = struct.unpack_from("<QI8xI4xI", body)
check(cap & 0xffff and vs >= 0x10400 and cc & 1 and csts & 1, "CAP %#x VS %#x CC %#x CSTS %#x" % (cap, vs, cc, csts))
check(body[0x28:0x38] == bytes(16), "ASQ and ACQ (the daemon's addresses) not zeros: %r" % body[0x28:0x38])
res, body = regs(fd1, 0x14, 4)
check(res == 0 and struct.unpack("<I", body)[0] == cc, "regs_read of CC alone: %d %r" % (res, body))
check(regs(fd0, 0, 4)[0] == -errno.ENOTTY, "regs_read of ng0n1")
check(regs(12345, 0, 4)[0] == -errno.EBADF, "regs_read of a number never opened")
for off, ln in ((2, 4), (0, 6), (0x1000, 4), (0xffc, 8), (0, 0x2000)):
    check(regs(fd1, off, ln)[0] == -errno.EINVAL, "regs_read at %#x len %#x" % (off, ln))
check(regs(fd1, 0, 4, pad=1)[0] == -errno.EINVAL, "regs_read with a pad")
print("regs_read: the register file, ASQ/ACQ zero, ENOTTY, EBADF, EINVAL: ok")
res, _ = identify_ctrl(c, fd1, addr=0x1000)
check(res == -errno.EFAULT, "identify into an unmapped address: %d" % res)
res, _ = identify_ctrl(c, fd1, addr=0x7ffffffff000 - 100)
check(res == -errno.EFAULT, "identify across the end of user space: %d" % res)
check(c.ioctl(fd1, NVME_IOCTL_ADMIN64_CMD, 0x1000) == -errno.EFAULT, "argument at a bad address")
# I/O: a write from one buffer, read back through an iovec array of two
wbuf = ctypes.create_string_buffer(os.urandom(4096), 4096)
cmd = passthru(0x01, nsid=1, addr=ctypes.addressof(wbuf), data_len=4096, cdw10=100, cdw12=7)
check(c.ioctl(fd0, NVME_IOCTL_IO64_CMD, ctypes.addressof(cmd)) == 0, "write through IO64")
class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
halves = [ctypes.create_string_buffer(2048) for _ in range(2)]
iov = (Iovec * 2)(*[Iovec(ctypes.addressof(h), 2048) for h in halves])
cmd = passthru(0x02, nsid=1, addr=ctypes.addressof(iov), data_len=2, cdw10=100, cdw12=7)
check(c.ioctl(fd0, NVME_IOCTL_IO64_CMD_VEC, ctypes.addressof(cmd)) == 0, "read through IO64_CMD_VEC")
check(halves[0].raw + halves[1].raw == wbuf.raw, "read back through two segments differs")
iov[1].base = 0x1000
check(c.ioctl(fd0, NVME_IOCTL_IO64_CMD_VEC, ctypes.addressof(cmd)) == -errno.EFAULT, "a bad segment")
cmd = passthru(0x02, nsid=1, addr=0x1000, data_len=2, cdw10=100, cdw12=7)
check(c.ioctl(fd0, NVME_IOCTL_IO64_CMD_VEC, ctypes.addressof(cmd)) == -errno.EFAULT, "a bad iovec array")
print("write through IO64, read back through IO64_CMD_VEC: ok")
check(c.ioctl(fd1, 0x5401, 0) == -errno.ENOTTY, "TCGETS")
check(c.ioctl(fd1, NVME_IOCTL_ADMIN64_CMD | (1 << 40), 0) == -errno.ENOTTY, "a 64-bit cmd")
check(c.ioctl(fd1, ioc(3, "N", 0x41, 72), 0x1000) == -errno.ENOTTY, "32-bit NVME_IOCTL_ADMIN_CMD")
check(c.ioctl(55, NVME_IOCTL_ID, 0) == -errno.EBADF, "ioctl on a number never opened")
print("ioctls: ok")

# ---- malformed messages: an error back, the connection goes on ----
def hdr(op=HELLO, magic=MAGIC, flags=0, seq=7, result=0, length=16, pad=0):
    return HDR.pack(magic, op, flags, seq, result, length, pad)

hello_payload = struct.pack("<IIII", 1, 0, 0, 0)
cases = [
    ("4 bytes", b"\x55\x43\x4d\x44", -errno.EPROTO),
    ("bad magic", hdr(magic=0xdeadbeef) + hello_payload, -errno.EPROTO),
    ("op 0", hdr(op=0, length=0), -errno.EINVAL),
    ("op past the end", hdr(op=99, length=0), -errno.EINVAL),
    ("op 65535", hdr(op=65535, length=0), -errno.EINVAL),
    ("flags", hdr(flags=1) + hello_payload, -errno.EINVAL),
    ("pad", hdr(pad=1) + hello_payload, -errno.EINVAL),
    ("result in a request", hdr(result=-1) + hello_payload, -errno.EINVAL),
    ("len larger than sent", hdr(length=32) + hello_payload, -errno.EPROTO),
    ("len smaller than sent", hdr(length=8) + hello_payload, -errno.EPROTO),
    ("hello payload short", hdr(length=8) + hello_payload[:8], -errno.EINVAL),
    ("hello payload long", hdr(length=20) + hello_payload + b"\0" * 4, -errno.EINVAL),
    ("device_names with a payload", hdr(op=DEVICE_NAMES, length=4) + b"\0" * 4, -errno.EINVAL),
    ("open: name without a NUL", hdr(op=OPEN, length=72) + struct.pack("<iI", 2, 0) + b"n" * 64, -errno.EINVAL),
    ("open: pad", hdr(op=OPEN, length=72) + struct.pack("<iI64s", 2, 1, b"ng0n1"), -errno.EINVAL),
    ("close: pad", hdr(op=CLOSE, length=8) + struct.pack("<iI", 0, 1), -errno.EINVAL),
    ("ioctl: pad", hdr(op=IOCTL, length=24) + struct.pack("<iIQQ", 0, 9, NVME_IOCTL_ID, 0), -errno.EINVAL),
    ("region_add without its memfd", hdr(op=REGION_ADD, length=16) + struct.pack("<QQ", 0, 4096), -errno.EINVAL),
    ("oversized", hdr(length=70000 - 24) + b"\0" * (70000 - 24), -errno.EMSGSIZE),
]
for what, data, want in cases:
    h, body, _ = c.raw(data)
    check(h[0] == MAGIC and h[4] == want, "%s: result %d, want %d" % (what, h[4], want))
    if len(data) >= HDR.size:
        check(h[3] == 7, "%s: seq %d not echoed" % (what, h[3]))
    check(c.hello()[0] == 0, "hello after %s" % what)

# an fd where none belongs is refused, and closed by the daemon
r, w = os.pipe()
seq = c.seq = c.seq + 1
h, _, _ = c.raw(HDR.pack(MAGIC, CLOSE, 0, seq, 0, 8, 0) + struct.pack("<iI", 0, 0), fds=[r])
check(h[4] == -errno.EINVAL, "close with an fd attached: %d" % h[4])
os.close(r)
try:
    os.write(w, b"x")
    check(False, "the daemon kept the read end of our pipe")
except BrokenPipeError:
    pass
check(c.close_fd(fd0) == 0, "fd 0 survived the refused CLOSE")
# a region must be a sealed memfd
p = os.pipe()
h, _, _ = c.raw(HDR.pack(MAGIC, REGION_ADD, 0, 8, 0, 16, 0) + struct.pack("<QQ", 0x10000, 4096), fds=[p[0]])
check(h[4] == -errno.EINVAL, "region_add of a pipe: %d" % h[4])
print("%d malformed messages answered, the connection goes on" % (len(cases) + 2))

# another client meanwhile
d = Client(sys.argv[1])
check(d.hello()[0] == 0 and d.open("ng0n1") == 0, "a second client")
check(c.close_fd(fd1) == 0 and d.close_fd(0) == 0, "both clients close")
d.close()
# a client that hangs up with fds open: nothing of it stays
e = Client(sys.argv[1])
check(e.open("ng0n1") == 0, "third client")
e.close()
print("other clients: ok")

# UCMDD_ADOPT (ucmd-supervise's): only our own child, only before holding anything
import subprocess
kid = subprocess.Popen(["sleep", "60"])
a = Client(sys.argv[1])
check(a.msg(ADOPT)[0] == -errno.EINVAL, "adopt without a pidfd")
not_ours = os.pidfd_open(os.getppid())
check(a.msg(ADOPT, fds=[not_ours])[0] == -errno.EPERM, "adopt a process that is not our child")
pfd = os.pidfd_open(kid.pid)
check(a.msg(ADOPT, fds=[pfd])[0] == 0, "adopt our child")
check(a.open("ng0n1") == 0, "open after adopting")
check(a.msg(ADOPT, fds=[pfd])[0] == -errno.EBUSY, "adopt after holding a device")
b = Client(sys.argv[1])
check(b.open("ng0n1") == 0, "another connection holds a device")
check(b.msg(ADOPT, fds=[pfd])[0] == -errno.EBUSY, "adopt on a connection that holds one")
b.close()
# the adopted child's exit ends the connection, as a client's own exit does
kid.kill()
kid.wait()
try:
    gone = a.msg(DEVICE_NAMES) is None
except (ConnectionError, OSError):
    gone = True
check(gone, "the connection outlived the adopted child")
a.close()
# a descendant further down (ucmd-supervise's program's forked child): taken too
sh = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE)
grandkid = int(sh.stdout.readline())
g = Client(sys.argv[1])
gpfd = os.pidfd_open(grandkid)
check(g.msg(ADOPT, fds=[gpfd])[0] == 0, "adopt our child's child")
check(g.open("ng0n1") == 0, "open after adopting a grandchild")
g.close()
os.kill(grandkid, 9)
sh.wait()
print("adopt: ok")
PY
alive "after malformed messages"

step "identity is the kernel's: root may read the SMART log, nobody may not"
"$PY" "$PROTO" "$sock" smartlog-allowed
as_nobody "$PY" "$PROTO" "$sock" smartlog-denied
denials=1
if as_nobody unshare --user --map-root-user true 2>/dev/null; then
	# "root" with every capability, in a user namespace of its own
	as_nobody unshare --user --map-root-user "$PY" "$PROTO" "$sock" smartlog-denied
	denials=2
else
	echo "(no unprivileged user namespaces here: that case is not run)"
fi
alive "after the identity checks"

step "eight clients at once, root and nobody: each gets its own answer"
jobs=()
for i in 1 2 3 4; do
	"$PY" "$PROTO" "$sock" smartlog-allowed >/dev/null & jobs+=($!)
	as_nobody "$PY" "$PROTO" "$sock" smartlog-denied >/dev/null & jobs+=($!)
done
for j in "${jobs[@]}"; do wait "$j" || fail "a concurrent client failed"; done
denials=$((denials + 4))
alive "after concurrent clients"
# the audit trail names the client, not the daemon: one denial per refused command
"$PY" - "$dir/audit.jsonl" "$denials" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
deny = [r for r in recs if r["decision"] == "deny"]
assert len(deny) == int(sys.argv[2]) and all(r["uid"] == 65534 and r["verb"] == "get-log" for r in deny), recs
print("audit: %d denial(s), all of uid 65534" % len(deny))
PY

step "SIGHUP reloads the policy"
cat >"$dir/policy.ini" <<'INI'
[policy]
inherit = default

[rule health-for-everyone]
verb = get-log
select = 0x02
action = allow
INI
kill -HUP "$pid"
for _ in $(seq 100); do grep -q "policy reloaded" "$dir/ucmdd.log" && break; sleep 0.05; done
grep -q "policy reloaded" "$dir/ucmdd.log" || { cat "$dir/ucmdd.log"; fail "no reload"; }
as_nobody "$PY" "$PROTO" "$sock" smartlog-allowed
printf '[rule]\nverb = bogus\n' >"$dir/policy.ini"
kill -HUP "$pid"
for _ in $(seq 100); do grep -q "stays as it was" "$dir/ucmdd.log" && break; sleep 0.05; done
grep -q "stays as it was" "$dir/ucmdd.log" || { cat "$dir/ucmdd.log"; fail "bad policy not reported"; }
as_nobody "$PY" "$PROTO" "$sock" smartlog-allowed
alive "after SIGHUP"

step "SIGTERM: connected clients see the connection close, ucmdd exits 0"
coproc EOF { "$PY" "$PROTO" "$sock" eof; }
# Copies of the coproc's pipes, read and written from here on: once bash
# reaps a coproc that has exited it closes its fds and unsets EOF (the last
# read below raced the client's exit: "EOF[0]: unbound variable"), and what
# the client wrote last would go with them. Ours stay open until we close them.
[ -n "${EOF[0]:-}" ] || fail "eof client exited at once"
exec {eof_out}<&"${EOF[0]}" {eof_in}>&"${EOF[1]}"
read -r line <&"$eof_out"
[ "$line" = connected ] || fail "eof client: $line"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
pid=
[ "$rc" = 0 ] || { cat "$dir/ucmdd.log"; fail "ucmdd exited $rc on SIGTERM"; }
echo >&"$eof_in"
read -r line <&"$eof_out" || true
exec {eof_out}<&- {eof_in}>&-
[ "$line" = "after SIGTERM: the connection is closed" ] || fail "eof client: '$line'"
[ ! -e "$sock" ] || fail "socket left after SIGTERM"

step "detached: ucmdd returns once the socket is up, and reopens the saved controller"
"$UCMDD" --ctrl "$dir/ctrl" --socket "$sock"
[ -S "$sock" ] || fail "no socket when ucmdd returned"
"$PY" "$PROTO" "$sock" smartlog-allowed
pid=$(cat "$dir/ctrl/ctrl.pid")
kill -TERM "$pid"
for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$pid" 2>/dev/null && fail "detached ucmdd still runs after SIGTERM"
pid=

step "socket activation: the socket systemd passes (LISTEN_FDS=1), no --socket"
if command -v systemd-socket-activate >/dev/null; then
	rm -f "$sock"
	systemd-socket-activate --seqpacket -l "$sock" "$UCMDD" --foreground --ctrl "$dir/ctrl" \
		2>>"$dir/ucmdd.log" &
	pid=$!
	for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
	# the first connection starts ucmdd in place of the activator (same pid)
	"$PY" "$PROTO" "$sock" smartlog-allowed
	grep -q "serving 1 controller on the socket systemd passed" "$dir/ucmdd.log" ||
		{ cat "$dir/ucmdd.log"; fail "not socket-activated"; }
	kill -TERM "$pid"
	rc=0; wait "$pid" || rc=$?
	pid=
	[ "$rc" = 0 ] || fail "socket-activated ucmdd exited $rc"
else
	echo "(no systemd-socket-activate here: not run)"
fi
echo "daemon protocol: ok"
