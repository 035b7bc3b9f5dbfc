#!/usr/bin/env bash
# The build rule of docs/layers.md: tools/, bench/ and examples/ are users of the
# public API. Their sources include only <ucmd/...> from the project (plus
# their own headers), and their meson.build files give them include/ alone:
# no 'src' include path and none of the layers' dependencies, which carry
# it. Fails naming each offending line.
set -u
cd "${1:-$(dirname "$0")/../..}" || exit 2
bad=0
dirs=(tools bench examples)

# an internal header by its layer's directory (<nvme/...> is libnvme's)
if grep -rnE '#[[:space:]]*include[[:space:]]*"(core|nvme|security|block|store|ring|uaccess|kernel|error|lib)/' \
	--include='*.c' --include='*.h' "${dirs[@]}"; then
	echo "public_api: the lines above include an internal header (src/)" >&2
	bad=1
fi
# an include path into src/, the project-wide inc (include/ and src/), or a
# layer's dependency (each carries inc)
if grep -nE "include_directories\([^)]*src|\binc\b|\b(uaccess|store|ctrl|core|host|security|kernel|error|ucmd)_dep\b" \
	tools/meson.build tools/bench/meson.build bench/meson.build examples/meson.build; then
	echo "public_api: the lines above give tools/bench/examples the internal include path;" \
	     "use public_inc and ucmd_public_dep" >&2
	bad=1
fi
[ "$bad" = 0 ] && echo "public_api: tools/, bench/ and examples/ use include/ only"
exit "$bad"
