#!/usr/bin/env bash
# A Read linked to a Write on one plain buffer through ucmdd: the Write runs
# after the Read and sends what the Read brought, as on Linux (liburing's
# link-cp with NVMe passthrough). The client's buffer is ordinary memory
# (malloc: no region shared with the daemon), and a shared region
# (--buf alloc) must behave the same, and so must a registered buffer
# (--fixed: the Read, the Write or both through it), which the daemon
# reaches in the client's memory when each request is issued. The client
# is an unprivileged user.
source "$(dirname "$0")/lib/daemon.sh"

step "ucmdd on a controller of its own"
daemon_start --ctrl "$T/ctrl" "${ANY_USER[@]}"

step "16 linked Read->Write pairs on a plain buffer (uid 1234)"
out=$(client 1234 link-rw --slba 64 --nlb 8 --count 16 --seed 3 2>&1) || fail "plain buffer: $out"
grep -q "^link-rw: ok 16 pairs$" <<<"$out" || fail "plain buffer: $out"

step "the same on a shared region (--buf alloc)"
out=$(client 1234 link-rw --slba 512 --nlb 8 --count 16 --seed 4 --buf alloc 2>&1) ||
	fail "region: $out"
grep -q "^link-rw: ok 16 pairs$" <<<"$out" || fail "region: $out"

step "through a registered buffer: fixed-fixed, fixed-plain, plain-fixed (--fixed)"
out=$(client 1234 link-rw --slba 1024 --nlb 8 --count 18 --seed 5 --fixed 2>&1) ||
	fail "registered buffer: $out"
grep -q "^link-rw: ok 18 pairs$" <<<"$out" || fail "registered buffer: $out"

step "the same with the registered buffer in a shared region"
out=$(client 1234 link-rw --slba 1536 --nlb 8 --count 18 --seed 6 --fixed --buf alloc 2>&1) ||
	fail "registered region: $out"
grep -q "^link-rw: ok 18 pairs$" <<<"$out" || fail "registered region: $out"

daemon_stop
echo "daemon_link_rw: a linked Write sends what its Read brought"
