#!/usr/bin/env bash
# Install the Debian packages ucmd builds, tests and runs with. Idempotent:
# does nothing when they are all present. Needs root (or sudo) to install.
set -euo pipefail

pkgs=(
  build-essential meson ninja-build pkg-config clang
  liburing-dev libnvme-dev libjson-c-dev libcmocka-dev libinih-dev
  python3 util-linux valgrind
  man-db groff-base file
  nvme-cli	# a real client for ucmd exec's tests (exec_nvme_cli.sh); cli_docs.sh checks docs/cli.md against its help
  fio e2fsprogs	# real clients under libucmd-preload (tests/system/exec_fio_blk.sh)
  libisal-dev	# CRC32C of the NVMe/TCP digests (src/tcp/pdu.c)
  # the BPF LSM enforcer (src/bpf/, meson -Dbpf): clang targets bpf; vmlinux.h
  # is dumped by bpftool from the QEMU kernel package's BTF (lz4 unpacks it)
  libbpf-dev bpftool lz4
)
if [ "${UCMD_DEPS_SYSTEM:-0}" = 1 ]; then
  # the QEMU harness (tests/system): guest kernel, initramfs, real clients
  pkgs+=(qemu-system-x86 busybox-static cpio fio)
fi

missing=()
for p in "${pkgs[@]}"; do
  grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
