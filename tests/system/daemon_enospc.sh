#!/usr/bin/env bash
# ucmdd's SIGTERM on a full file system: the controller state cannot be
# saved, and that is an error exit with a message, never "stopped" and 0
# with ctrl.json left as it was at the start. After space is freed the next
# start comes up from what is on disk (the last ctrl.json and the journal)
# and every write acknowledged before the SIGTERM reads back. The CLI, which
# saves in process, the same: a write that takes the last free blocks
# succeeds, the save after it cannot, and ucmd exits 1 saying so.
# The controller directories are on a small tmpfs of their own.
source "$(dirname "$0")/lib/daemon.sh"

U=64061
MNT=$T/fs
mkdir "$MNT"
mount -t tmpfs -o size=8M,mode=0700 tmpfs "$MNT" || fail "cannot mount a tmpfs (root, mount(8))"
# the daemon first: a busy tmpfs does not unmount, and T is removed after
unmount() { daemon_cleanup; wait 2>/dev/null || true; umount "$MNT" 2>/dev/null || umount -l "$MNT"; }
at_exit unmount
CTRL=$MNT/ctrl

step "writes acknowledged, then the file system fills up"
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"
client "$U" rw --slba 0 --nlb 8 --count 256 --seed 9 >/dev/null || fail "writing 1 MiB"
client "$U" rw --slba 4096 --nlb 8 --count 16 --seed 10 >/dev/null || fail "writing 64 KiB more"
# a Write Uncorrectable lives in ctrl.journal until ctrl.json is rewritten
timeout 60 "$UCMD" --daemon "$SOCK" write-uncor -s 8000 -c 7 >/dev/null || fail "write-uncor"
timeout 60 "$UCMD" --daemon "$SOCK" read -s 8000 -c 0 -z 512 >/dev/null 2>&1 &&
	fail "a block marked uncorrectable read back"
# everything left, to the last block: no new ctrl.json fits
dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null || true
dd if=/dev/zero of="$MNT/filler2" bs=512 2>/dev/null || true
[ "$(df --output=avail -B1 "$MNT" | tail -1)" -lt 4096 ] || fail "the tmpfs is not full"

step "SIGTERM: the state cannot be saved: a message and a non-zero exit"
daemon_term
[ "$DRC" != 0 ] || fail "ucmdd exited 0 although it could not save the controller state"
grep -q "No space left on device" "$DLOG" || fail "the log does not say why the state was not saved"
grep -q "controller state was not saved" "$DLOG" || fail "the log does not say the state was not saved"
grep -q "stopped; controller state not saved" "$DLOG" || fail "the log's last word is not the failure"
cp "$DLOG" "$T/first.log"

step "space freed: the next start recovers, every acknowledged write is there"
rm -f "$MNT/filler" "$MNT/filler2"
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"
client "$U" rw --verify-only --slba 0 --nlb 8 --count 256 --seed 9 >/dev/null ||
	fail "the first 1 MiB is lost"
client "$U" rw --verify-only --slba 4096 --nlb 8 --count 16 --seed 10 >/dev/null ||
	fail "the last 64 KiB are lost"
timeout 60 "$UCMD" --daemon "$SOCK" read -s 8000 -c 0 -z 512 >/dev/null 2>"$T/uncor.err" &&
	fail "the uncorrectable mark (in the journal) was lost"
grep -qi "unrecovered read" "$T/uncor.err" || { cat "$T/uncor.err"; fail "not an Unrecovered Read Error"; }
daemon_stop
grep "controller state" "$T/first.log"

step "the CLI: a write takes the last blocks, the save after it fails: exit 1 and why"
CLI_CTRL=$MNT/cli
"$UCMD" --ctrl "$CLI_CTRL" create-ctrl >/dev/null
head -c 65536 /dev/urandom >"$T/64k.bin"
# free: the 16 pages the write needs and the one of ctrl.pid (tmpfs counts pages)
head -c $((17 * 4096)) /dev/zero >"$MNT/reserve"
dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null || true
rm "$MNT/reserve"
rc=0
"$UCMD" --ctrl "$CLI_CTRL" write -s 0 -c 127 -z 65536 -d "$T/64k.bin" >/dev/null 2>"$T/cli.err" ||
	rc=$?
[ "$rc" = 1 ] || { cat "$T/cli.err"; fail "ucmd write exited $rc with its state unsaved"; }
grep -q "ctrl.json: No space left on device; the controller state was not saved" "$T/cli.err" ||
	{ cat "$T/cli.err"; fail "ucmd did not say the state was not saved"; }
rm "$MNT/filler"
"$UCMD" --ctrl "$CLI_CTRL" read -s 0 -c 127 -z 65536 >"$T/64k.out" || fail "reading back"
cmp -s "$T/64k.bin" "$T/64k.out" || fail "the acknowledged 64 KiB are lost"
echo "daemon_enospc: a failed save is exit 1 with a message (ucmdd and ucmd); nothing acknowledged lost"
