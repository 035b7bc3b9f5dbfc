# A guest of tests/system/bpf_lsm.sh whose kernel cannot run the program
# (booted without bpf in lsm=, or with lockdown=confidentiality): the load
# must fail saying why ($EXPECT, set by the host's header) and leave nothing
# loaded. Exit status: 0 if so.
mount -t securityfs none /sys/kernel/security 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
echo "lsm: $(cat /sys/kernel/security/lsm); lockdown: $(cat /sys/kernel/security/lockdown)"
printf '[rule]\nuid = 0\naction = allow\n' > /tmp/p.ini
if ucmd policy load --bpf /tmp/p.ini 2> /tmp/err; then
	echo "GUEST-PART refuse FAILED: loaded"; exit 1
fi
cat /tmp/err
if grep -qF "$EXPECT" /tmp/err && ucmd policy status --bpf | grep -q 'no BPF policy loaded' &&
   [ ! -e /sys/fs/bpf/ucmd ]; then
	echo "GUEST-PART refuse ok"; exit 0
fi
echo "GUEST-PART refuse FAILED: expected '$EXPECT'"; exit 1
