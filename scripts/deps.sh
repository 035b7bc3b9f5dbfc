#!/usr/bin/env bash
# Install the Debian packages ucmd needs, by what is about to happen:
#
#   scripts/deps.sh run     build libucmd and the CLI, and run it (make run):
#                           the compiler, meson, the libraries they link
#   scripts/deps.sh build   everything meson builds by default (make, make
#                           install, the benchmarks): run's, plus cmocka for
#                           the unit tests and the BPF LSM enforcer's tools
#   scripts/deps.sh check   every test (make check and its tiers): build's,
#                           plus the programs the system tests drive and the
#                           QEMU harness's packages
#
# Default: check. Idempotent: does nothing when they are all present. Needs
# root (or sudo) to install. UCMD_DEPS_SYSTEM=1 (tests/system/qemu/run.sh)
# means check.
set -euo pipefail

what=${1:-check}
[ "${UCMD_DEPS_SYSTEM:-0}" = 1 ] && what=check

run=(
  build-essential meson ninja-build pkg-config python3
  liburing-dev libnvme-dev libjson-c-dev
  libisal-dev	# CRC32C of the NVMe/TCP digests (src/tcp/pdu.c)
)
build=(
  libcmocka-dev	# the unit tests (meson -Dtests, on by default)
  # the BPF LSM enforcer (src/bpf/, meson -Dbpf): clang targets bpf; vmlinux.h
  # is dumped by bpftool from the QEMU kernel package's BTF (lz4 unpacks it)
  clang libbpf-dev bpftool lz4
)
check=(
  util-linux valgrind
  mount	# mount -t tmpfs in a namespace of its own (tests/system/exec_cred_change.sh)
  clang	# the libFuzzer targets (scripts/run-fuzz.sh)
  man-db groff-base file	# tests/system/man_pages.sh, install.sh
  nvme-cli	# a real client for ucmd exec's tests (exec_nvme_cli.sh); cli_docs.sh checks docs/cli.md against its help
  fio e2fsprogs	# real clients under libucmd-preload (tests/system/exec_fio_blk.sh)
  golang-go	# a dynamically linked Go client under ucmd exec (tests/system/exec_go.sh)
  libcap2-bin	# setcap: the file-capability client of tests/system/daemon_client_mm.sh
  strace	# counts ucmdd's madvise calls (tests/system/daemon_heap_trim.sh)
  libssl-dev	# libcrypto.a: libnvme linked statically (tests/system/exec_static_tree.sh)
  # the QEMU harness (tests/system/qemu/run.sh): guest kernel, initramfs
  qemu-system-x86 busybox-static cpio
)

case $what in
run) pkgs=("${run[@]}") ;;
build) pkgs=("${run[@]}" "${build[@]}") ;;
check) pkgs=("${run[@]}" "${build[@]}" "${check[@]}") ;;
*) echo "usage: $0 [run|build|check]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps ($what): installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
