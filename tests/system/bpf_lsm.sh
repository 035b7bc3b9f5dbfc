#!/usr/bin/env bash
# ucmd's policy enforced by Linux itself: `ucmd policy load --bpf` in the
# QEMU guest (Debian's cloud kernel, CONFIG_BPF_LSM=y, booted with
# lsm=...,bpf) on the real /dev/ng0n1 and /dev/nvme0, with Debian's fio and
# nvme-cli as the clients (tests/system/bpf/guest.sh says what is checked).
# "One policy, two enforcers": a table of callers x commands x policies is
# judged by ucmd's engine here (`ucmd policy explain`) and by the kernel in
# the guest; every difference must be a deliberate one listed in
# docs/security.md ("bpf-diff:POLICY:CALLER:COMMAND:PATH"). Also reports the double-fetch count and
# the cost of a 50-rule policy (docs/security.md, docs/performance.md).
# Needs root (apt, QEMU) and Debian's mirror on the first run.
source "$(dirname "$0")/lib/common.sh"
T=tests/system/bpf
out=${UCMD_QEMU_OUT:-$(mktemp -d /var/tmp/ucmd-bpf-out.XXXXXX)}

[ "$(id -u)" -eq 0 ] || command -v qemu-system-x86_64 >/dev/null ||
	fail "not root and no qemu-system-x86_64: cannot install the harness's packages"
for tool in clang bpftool nvme fio; do
	command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
		fail "$tool is missing (scripts/deps.sh installs it)"
done
[ -f "$B/build.ninja" ] || meson setup "$B" >/dev/null
echo "--- building ucmd (with the BPF enforcer) and the guest programs in $B"
ninja -C "$B" tools/ucmd tests/system/bpf/bpfcmd tests/system/bpf/runas >/dev/null ||
	fail "build failed (ucmd, bpfcmd, runas)"
U=$B/tools/ucmd
grep -q "built without" <<<"$("$U" policy status --bpf 2>&1)" &&
	fail "ucmd was built without the BPF enforcer (meson -Dbpf=enabled; clang, libbpf-dev, bpftool)"

# --- bad input on the host, where nothing is loaded: usage (2) or a reason (1)
echo "--- bad input"
expect() {	# status, text in stderr, command...
	local want=$1 text=$2 rc=0
	shift 2
	"$@" > "$out/cli.out" 2> "$out/cli.err" || rc=$?
	[ "$rc" = "$want" ] && grep -qF -- "$text" "$out/cli.err" ||
		fail "'$*': status $rc (want $want), stderr: $(cat "$out/cli.err")"
}
mkdir -p "$out"
if [ ! -e /sys/fs/bpf/ucmd ]; then
	expect 2 "usage: ucmd policy load --bpf FILE" "$U" policy load --bpf
	expect 2 "usage:" "$U" policy load --bpf a.ini b.ini
	expect 2 "usage:" "$U" policy unload --bpf extra
	expect 2 "usage:" "$U" policy audit --bpf
	expect 2 "usage:" "$U" policy audit --bpf /tmp/x --count
	expect 2 "usage:" "$U" policy audit --bpf /tmp/x --count many
	expect 2 "usage:" "$U" policy audit --bpf /tmp/x --idle-ms -5
	expect 2 "usage:" "$U" policy frobnicate --bpf
	expect 1 "bad.ini:6: bad value 'writ' for 'verb'" "$U" policy load --bpf "$T/policies/bad.ini"
	expect 1 "/nonexistent.ini" "$U" policy load --bpf /nonexistent.ini
	expect 1 "no ucmd BPF policy is loaded" "$U" policy unload --bpf
	expect 1 "no ucmd BPF policy is loaded" "$U" policy audit --bpf "$out/none.jsonl"
	o=$("$U" policy status --bpf) && grep -q "no BPF policy loaded" <<<"$o" || fail "status without a program"
	o=$("$U" --output-format json policy status --bpf) && grep -q '"loaded": *false' <<<"$o" ||
		fail "status --output-format json without a program"
	echo "bad input: ok"
fi

# --- the table: callers x commands x policies ------------------------------
# caller: name|runas ids|explain options
callers=(
	"reader|1000 1000|--uid 1000 --gid 1000"
	"operator|1001 1001,3000|--uid 1001 --gid 1001 --groups 3000"
	"other|1002 1002|--uid 1002 --gid 1002"
	"root|0 0|--uid 0 --gid 0"
)
# command: name|bpfcmd kind dev opcode fields|explain options (512-byte blocks on ng0n1)
commands=(
	"read0|io /dev/ng0n1 2 nsid=1 cdw10=0 len=512|--device ng0n1 --verb read --nsid 1 --slba 0 --nlb 1 --opcode 2"
	"write0|io /dev/ng0n1 1 nsid=1 cdw10=0 len=512|--device ng0n1 --verb write --nsid 1 --slba 0 --nlb 1 --opcode 1"
	"write5000|io /dev/ng0n1 1 nsid=1 cdw10=5000 len=512|--device ng0n1 --verb write --nsid 1 --slba 5000 --nlb 1 --opcode 1"
	"wzeroes8|io /dev/ng0n1 8 nsid=1 cdw10=8|--device ng0n1 --verb write-zeroes --nsid 1 --slba 8 --nlb 1 --opcode 8"
	"flush|io /dev/ng0n1 0 nsid=1|--device ng0n1 --verb flush --nsid 1 --opcode 0"
	"read-ns2|io /dev/ng0n2 2 nsid=2 cdw10=0 len=4096|--device ng0n2 --verb read --nsid 2 --slba 0 --nlb 1 --opcode 2"
	"identify-ctrl|admin /dev/nvme0 6 cdw10=1 len=4096|--device nvme0 --verb identify --select 1 --opcode 6 --nsid 0"
	"identify-ns-list|admin /dev/nvme0 6 cdw10=2 len=4096|--device nvme0 --verb identify --select 2 --opcode 6 --nsid 0"
	"smart-log|admin /dev/nvme0 2 nsid=0xffffffff cdw10=0x7f0002 len=512|--device nvme0 --verb get-log --select 2 --opcode 2 --nsid 4294967295"
	"format-ns1|admin /dev/nvme0 0x80 nsid=1|--device nvme0 --verb format --nsid 1 --opcode 128"
	"vendor-io|io /dev/ng0n1 0x81 nsid=1|--device ng0n1 --verb vendor --nsid 1 --opcode 129"
)
policies=(site.ini groups.ini devs.ini)

echo "--- the engine's decisions (ucmd policy explain)"
table=$out/table.txt expected=$out/expected.out
mkdir -p "$out"
: > "$table"; : > "$expected"
for pol in "${policies[@]}"; do
	for c in "${callers[@]}"; do
		IFS='|' read -r cname cids cexp <<< "$c"
		for k in "${commands[@]}"; do
			IFS='|' read -r kname kcmd kexp <<< "$k"
			id="$pol:$cname:$kname"
			# shellcheck disable=SC2086
			if "$U" policy explain --policy "$T/policies/$pol" $cexp $kexp --cap-sys-admin yes \
				--mode rw > /dev/null 2>"$out/explain.err"; then
				d=allow
			else
				rc=$?
				[ "$rc" = 1 ] || { cat "$out/explain.err"; fail "explain failed for $id"; }
				d=deny
			fi
			echo "$id|$pol|$cids|$kcmd" >> "$table"
			echo "$id $d" >> "$expected"
		done
	done
done
echo "$(wc -l < "$expected") engine decisions"

# --- the guest script: the policies and the table, then guest.sh -------------
script=$out/guest-test.sh
{
	echo "mkdir -p /etc/ucmd-test"
	for f in "$T"/policies/*.ini "$table"; do
		echo "cat > /etc/ucmd-test/$(basename "$f") <<'UCMD_TEST_EOF'"
		cat "$f"
		echo "UCMD_TEST_EOF"
	done
	cat "$T/guest.sh"
} > "$script"

echo "--- guest (results in $out)"
grc=0
UCMD_QEMU_RUN_TIMEOUT=${UCMD_QEMU_RUN_TIMEOUT:-600} \
bash tests/system/qemu/run.sh --out "$out" --script "$script" --fio \
	--dyn "$U" --dyn "$(command -v nvme)" --bin "$B/tests/system/bpf/bpfcmd" \
	--bin "$B/tests/system/bpf/runas" \
	--append "lsm=lockdown,capability,yama,bpf" || grc=$?
[ -f "$out/guest.log" ] && grep -E 'GUEST-PART|^race:|^marks:|^(none|bpf50) |^lsm/' "$out/guest.log" || true
[ "$grc" -eq 125 ] && fail "the guest did not run (see above)"

echo "--- kernels that cannot run the program: the load says why"
rrc=0
while IFS='|' read -r append expect; do
	rs=$out/refuse.sh
	{ echo "EXPECT='$expect'"; cat "$T/guest_refuse.sh"; } > "$rs"
	bash tests/system/qemu/run.sh --out "$out/refuse" --script "$rs" --dyn "$U" \
		--append "$append" > "$out/refuse.log" 2>&1 || rrc=1
	grep -E 'GUEST-PART|^lsm:|ucmd policy load' "$out/refuse/guest.log" 2>/dev/null || true
	[ "$rrc" = 0 ] || tail -20 "$out/refuse.log"
done <<'CASES'
lsm=lockdown,capability,yama|the BPF LSM is not active (lsm=lockdown,capability,yama)
lsm=lockdown,capability,yama,bpf lockdown=confidentiality|kernel lockdown is in confidentiality mode
CASES

echo "--- the kernel's decisions against the engine's (docs/security.md lists the differences)"
[ -f "$out/table.out" ] || fail "the guest wrote no table"
diffs=0 rows=0
while read -r id d; do
	for path in uring ioctl; do
		got=$(awk -v id="$id" -v p="$path" '$1 == id && $2 == p {print $3}' "$out/table.out")
		rows=$((rows + 1))
		[ "$got" = "$d" ] && continue
		if grep -qF "bpf-diff:$id:$path" docs/security.md; then
			echo "known difference $id $path: engine $d, kernel $got"
		else
			echo "DIFFERENT $id $path: engine $d, kernel ${got:-nothing}"
			diffs=$((diffs + 1))
		fi
	done
done < "$expected"
echo "$rows decisions compared, $diffs unexplained differences"

if [ -f "$out/perf.out" ]; then
	awk '$1 == "none" {n += $2; nn++} $1 == "bpf50" {b += $2; bn++}
	     END {if (nn && bn && n) printf "perf: no program %.0f IOPS, 50-rule policy %.0f IOPS: %.3fx\n", n/nn, b/bn, (b/bn)/(n/nn)}' "$out/perf.out"
fi
[ "$rrc" -eq 0 ] || fail "a kernel that cannot run the program was not reported clearly"
[ "$grc" -eq 0 ] || fail "guest checks failed (status $grc; $out/guest.log)"
[ "$diffs" -eq 0 ] || fail "unexplained differences between ucmd's engine and the BPF program"
[ "$rows" -gt 0 ] || fail "no decisions compared"
echo "bpf_lsm: all checks passed"
