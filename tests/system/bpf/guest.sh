# The guest half of tests/system/bpf_lsm.sh (busybox sh), after the header
# the host puts in front of it: the policies in $P and the decision table in
# $P/table.txt. Results go to $UCMD_GUEST_RESULTS; the exit status counts
# the parts that failed here (the table's comparison is the host's).
R=${UCMD_GUEST_RESULTS:-/tmp}
P=/etc/ucmd-test
failed=0
part() { echo "=== $*"; }
ok() { echo "GUEST-PART $1 ok"; }
bad() { echo "GUEST-PART $1 FAILED${2:+: $2}"; failed=$((failed + 1)); }
# the users: uid gid[,groups] with CAP_SYS_ADMIN, which Linux 6.1 demands of
# every passthrough command (so only the policy tells them apart)
reader() { runas 1000 1000 +sys_admin "$@"; }
operator() { runas 1001 1001,3000 +sys_admin "$@"; }
denied() { grep -q "Permission denied" "$1"; }

mount -t securityfs none /sys/kernel/security 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
chmod 666 /dev/ng0n1 /dev/ng0n2 /dev/nvme0 /dev/nvme0n1
echo "lsm: $(cat /sys/kernel/security/lsm)"
FIO="--filename=/dev/ng0n1 --ioengine=io_uring_cmd --cmd_type=nvme --bs=4k --iodepth=1"

part "no program: Linux's own checks"
if reader bpfcmd ioctl io /dev/ng0n1 1 nsid=1 len=512 | grep -q '^allow 0' &&
   ucmd policy status --bpf | grep -q 'no BPF policy loaded'; then ok baseline; else bad baseline; fi

part "the loader refuses clearly"
if ! reader ucmd policy load --bpf $P/site.ini 2> /tmp/err && grep -q "not root" /tmp/err &&
   ! ucmd policy load --bpf /nonexistent.ini 2> /tmp/err2 && grep -q nonexistent /tmp/err2 &&
   ucmd policy status --bpf | grep -q 'no BPF policy loaded'; then
	ok refusals
else
	cat /tmp/err /tmp/err2; bad refusals
fi

part "load the site policy"
if ucmd policy load --bpf $P/site.ini && ucmd policy status --bpf | tee /tmp/st | grep -q "site.ini (generation 1): 6 rules" &&
   [ -e /sys/fs/bpf/ucmd/link_uring_cmd ] && [ -e /sys/fs/bpf/ucmd/link_file_ioctl ]; then
	ok load
else
	cat /tmp/st; bad load
fi

part "reader: fio reads through uring_cmd, writes refused"
if reader fio --name=read $FIO --rw=randread --size=1M --io_size=256k > /tmp/fr.txt 2>&1 &&
   grep -q "err= 0" /tmp/fr.txt &&
   ! reader fio --name=write $FIO --rw=randwrite --size=1M --io_size=16k > /tmp/fw.txt 2>&1 &&
   grep -q "err=13" /tmp/fw.txt; then
	ok reader-fio
else
	cat /tmp/fr.txt /tmp/fw.txt; bad reader-fio
fi

part "reader: nvme-cli's ioctl path: reads yes, writes and Format no"
head -c 512 /dev/urandom > /tmp/blk
if reader nvme io-passthru /dev/ng0n1 --opcode=2 --namespace-id=1 --data-len=512 --read -r > /dev/null &&
   ! reader nvme io-passthru /dev/ng0n1 --opcode=1 --namespace-id=1 --data-len=512 --write -i /tmp/blk > /tmp/e1 2>&1 && denied /tmp/e1 &&
   ! reader nvme format /dev/nvme0 --namespace-id=1 --lbaf=0 --force > /tmp/e2 2>&1 && denied /tmp/e2 &&
   ! reader nvme smart-log /dev/nvme0 > /tmp/e3 2>&1 && denied /tmp/e3; then
	ok reader-nvme-cli
else
	cat /tmp/e1 /tmp/e2 /tmp/e3; bad reader-nvme-cli
fi

part "operator (second user, group 3000): what the policy gives"
if operator fio --name=lowwrite $FIO --rw=randwrite --size=1M --io_size=64k > /tmp/o1 2>&1 && grep -q "err= 0" /tmp/o1 &&
   ! operator fio --name=highwrite $FIO --rw=write --offset=4M --size=64k > /tmp/o2 2>&1 && grep -q "err=13" /tmp/o2 &&
   operator nvme smart-log /dev/nvme0 > /tmp/o3 2>&1 &&
   operator nvme io-passthru /dev/ng0n1 --opcode=1 --namespace-id=1 --data-len=512 --write -i /tmp/blk > /tmp/o4 2>&1 &&
   operator bpfcmd uring admin /dev/nvme0 0x80 nsid=1 | grep -q '^allow' &&
   ! operator bpfcmd uring admin /dev/nvme0 0x80 nsid=2 > /tmp/o5; then
	ok operator
else
	cat /tmp/o1 /tmp/o2 /tmp/o3 /tmp/o4 /tmp/o5; bad operator
fi

part "audit: each denial exactly one record"
# drain what the parts above left in the ring buffer, then count a known block
ucmd policy audit --bpf /tmp/drain.jsonl --idle-ms 1500
n=0
for args in "uring io /dev/ng0n1 1 nsid=1 len=512" "ioctl io /dev/ng0n1 1 nsid=1 len=512" \
	    "uring admin /dev/nvme0 0x80 nsid=1" "ioctl admin /dev/nvme0 0x80 nsid=1" \
	    "ioctl io /dev/nvme0n1 8 nsid=1"; do
	# shellcheck disable=SC2086
	reader bpfcmd $args | grep -q '^deny' && n=$((n + 1))
done
reader bpfcmd uring io /dev/ng0n1 2 nsid=1 len=512 > /dev/null	# allowed: no record
ucmd policy audit --bpf $R/audit.jsonl --idle-ms 1500
lines=$(wc -l < $R/audit.jsonl)
denies=$(grep -c '"decision":"deny","errno":13,"module":"policy","rule":"/etc/ucmd-test/site.ini: default"' $R/audit.jsonl)
uring=$(grep -c '"hook":"uring_cmd"' $R/audit.jsonl)
if [ "$n" = 5 ] && [ "$lines" = 5 ] && [ "$denies" = 5 ] && [ "$uring" = 2 ] &&
   grep -q '"uid":1000,"gid":1000,"cap_sys_admin":true,"device":"nvme0n1"' $R/audit.jsonl &&
   ucmd --output-format json policy status --bpf | grep -q '"audit_lost":0'; then
	ok audit
else
	echo "denials $n, records $lines, matching $denies, uring $uring"; cat $R/audit.jsonl; bad audit
fi

part "an invalid policy is refused whole; the loaded one stays"
if ! ucmd policy load --bpf $P/bad.ini 2> /tmp/bad && grep -q "bad.ini:6: bad value 'writ' for 'verb'" /tmp/bad &&
   ucmd policy status --bpf | grep -q "site.ini (generation 1)" &&
   reader bpfcmd uring io /dev/ng0n1 1 nsid=1 len=512 | grep -q '^deny'; then
	ok invalid
else
	cat /tmp/bad; bad invalid
fi

part "reload: the other rule set in one swap"
if ucmd policy load --bpf $P/groups.ini && ucmd policy status --bpf | grep -q "groups.ini (generation 2)" &&
   runas 1002 1002 +sys_admin bpfcmd uring io /dev/ng0n1 2 nsid=1 len=512 | grep -q '^allow' &&
   ucmd policy load --bpf $P/site.ini && ucmd policy status --bpf | grep -q "site.ini (generation 3)"; then
	ok reload
else
	bad reload
fi

part "one policy, two enforcers: the table"
: > $R/table.out
last=""
while IFS='|' read -r id pol caller cmd; do
	[ -n "$id" ] || continue
	if [ "$pol" != "$last" ]; then
		ucmd policy load --bpf "$P/$pol" > /dev/null || bad "table-load $pol"
		last=$pol
	fi
	for path in uring ioctl; do
		# shellcheck disable=SC2086
		if [ "$caller" = "0 0" ]; then
			res=$(bpfcmd $path $cmd)
		else
			res=$(runas $caller +sys_admin bpfcmd $path $cmd)
		fi
		echo "$id $path ${res%% *}" >> $R/table.out
	done
done < $P/table.txt
echo "$(wc -l < $R/table.out) decisions"
ok table-ran

part "the double fetch: a thread flips Read into Write after submission"
ucmd policy load --bpf $P/race.ini > /dev/null
reader bpfcmd race /dev/ng0n1 5000 20000 | tee $R/race.out
bpfcmd marks /dev/ng0n1 5000 20000 | tee -a $R/race.out
grep -q "^race: 5000 submitted" $R/race.out && grep -q "^marks:" $R/race.out && ok race || bad race

part "performance: 4K randread QD32 io_uring_cmd, 50 rules (the last matches) vs none"
PF="--name=perf --filename=/dev/ng0n1 --ioengine=io_uring_cmd --cmd_type=nvme --rw=randread --bs=4k --iodepth=32 --size=32M --runtime=5 --time_based --norandommap --output-format=terse"
: > $R/perf.out
# the program's own run time too (kernel.bpf_stats_enabled), in the last round
for round in 1 2 3 4; do
	ucmd policy unload --bpf > /dev/null 2>&1
	echo "none $(fio $PF | cut -d';' -f8)" >> $R/perf.out
	ucmd policy load --bpf $P/perf50.ini > /dev/null
	[ $round = 4 ] && echo 1 > /proc/sys/kernel/bpf_stats_enabled
	echo "bpf50 $(fio $PF | cut -d';' -f8)" >> $R/perf.out
done
cat $R/perf.out
ucmd policy status --bpf | tee $R/perf-status.txt
echo 0 > /proc/sys/kernel/bpf_stats_enabled
[ "$(wc -l < $R/perf.out)" = 8 ] && grep -q "lsm/uring_cmd: .* runs" $R/perf-status.txt && ok perf || bad perf

part "unload: Linux's own behaviour again"
if ucmd policy unload --bpf && ucmd policy status --bpf | grep -q 'no BPF policy loaded' &&
   [ ! -e /sys/fs/bpf/ucmd ] &&
   reader bpfcmd ioctl io /dev/ng0n1 1 nsid=1 len=512 | grep -q '^allow 0' &&
   reader bpfcmd uring io /dev/ng0n1 1 nsid=1 len=512 | grep -q '^allow 0' &&
   ! ucmd policy unload --bpf 2> /tmp/un && grep -q "no ucmd BPF policy is loaded" /tmp/un; then
	ok unload
else
	bad unload
fi
exit $failed
