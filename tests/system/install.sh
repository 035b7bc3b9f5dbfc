#!/usr/bin/env bash
# `make install` into a temporary prefix, then build as a user would, with
# nothing but pkg-config: every examples/*.c and the README's example
# against the shared library, one against the static library, every
# installed header alone in C and C++. Checks what the libraries export.
#   UCMD_INSTALL_BUILD  build directory for make install (default: a new
#                       one in the temporary directory, the defaults: LTO;
#                       scripts/check.sh keeps one between its runs)
# check: heavy (an LTO build with every CPU: not beside a QEMU guest)
source "$(dirname "$0")/lib/common.sh"
set +e	# every check runs; the failures are counted
src=$PWD
tmp=$T
P=$tmp/prefix
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! make install PREFIX="$P" INSTALL_BUILD="${UCMD_INSTALL_BUILD:-$tmp/build}" \
	>"$tmp/install.log" 2>&1; then
	tail -30 "$tmp/install.log"
	echo "FAIL: make install"
	exit 1
fi

# ---- what was installed ------------------------------------------------
pc=$(find "$P" -name ucmd.pc)
so=$(find "$P" -name libucmd.so)
ar=$(find "$P" -name libucmd.a)
[ -n "$pc" ] && [ -n "$so" ] && [ -n "$ar" ] || { fail "ucmd.pc, libucmd.so, libucmd.a: '$pc' '$so' '$ar'"; exit 1; }
libdir=$(dirname "$so")
for f in bin/ucmd sbin/ucmdd share/man/man1/ucmd.1 share/man/man1/ucmd-bench.1 \
	 share/man/man5/ucmd-policy.5 share/man/man3/libucmd.3 share/man/man8/ucmdd.8 \
	 share/ucmd/default.ini share/bash-completion/completions/ucmd; do
	[ -f "$P/$f" ] || fail "not installed: $f"
done
cmp -s policy/default.ini "$P/share/ucmd/default.ini" || fail "default.ini differs"
soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
echo "soname: $soname"
[ "$soname" = libucmd.so.0 ] && [ -e "$libdir/$soname" ] || fail "soname '$soname'"
headers=$(cd include && find ucmd -name '*.h' | sort)
for h in $headers; do
	[ -f "$P/include/$h" ] || fail "header not installed: $h"
done
grep -q "commands:" <<<"$("$P/bin/ucmd" --help)" || fail "installed ucmd --help"
grep -q -- "--ctrl DIR" <<<"$("$P/sbin/ucmdd" --help)" || fail "installed ucmdd --help"

export PKG_CONFIG_PATH=$(dirname "$pc")
cflags=$(pkg-config --cflags ucmd) libs=$(pkg-config --libs ucmd) \
	slibs=$(pkg-config --static --libs ucmd) || { fail "pkg-config"; exit 1; }
echo "pkg-config: $cflags $libs"
echo "pkg-config --static: $slibs"
case "$cflags $libs $slibs" in *"$src"*) fail "pkg-config names the source tree";; esac
for l in -luring -ljson-c; do
	case " $slibs " in *" $l "*) ;; *) fail "--static lacks $l";; esac
done

# Build from a directory outside the source tree: no -I into it by accident.
cd "$tmp"

# ---- every installed header compiles alone, in C and in C++ ---------------
for h in $headers; do
	printf '#include <%s>\n' "$h" >hdr.c
	cc -std=gnu11 -Wall -Wextra -Werror $cflags -c hdr.c -o hdr.o || fail "C: $h alone"
	g++ -x c++ -Wall -Wextra -Werror $cflags -c hdr.c -o hdr.o || fail "C++: $h alone"
done

# ---- what the libraries export ------------------------------------------
# The credential interposers (src/libucmd.map) and the ucmd_* API; nothing
# else. setuid & co. must be unversioned to interpose libc's.
interposers="capset initgroups prctl setegid seteuid setfsgid setfsuid setgid setgroups
setregid setresgid setresuid setreuid setuid"
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sort >dyn.txt
grep -v '^ucmd_' dyn.txt >dyn_other.txt
printf '%s\n' $interposers | sort >allowed.txt
echo "nm -D libucmd.so: $(grep -c '^ucmd_' dyn.txt) ucmd_* symbols, $(wc -l <dyn_other.txt) others: $(tr '\n' ' ' <dyn_other.txt)"
cmp -s dyn_other.txt allowed.txt || fail "libucmd.so exports other than ucmd_* and the interposers: $(comm -23 dyn_other.txt allowed.txt | tr '\n' ' ')"
grep '^ucmd_' dyn.txt | grep -v '@@UCMD_1$' && fail "ucmd_* symbols not at version UCMD_1"
nm --defined-only -g "$ar" | awk 'NF == 3 { print $3 }' | sort >st.txt
grep -v '^ucmd_' st.txt >st_other.txt
echo "nm -g libucmd.a: $(grep -c '^ucmd_' st.txt) ucmd_* symbols, $(wc -l <st_other.txt) others"
cmp -s st_other.txt allowed.txt || fail "libucmd.a defines globals other than ucmd_* and the interposers: $(comm -23 st_other.txt allowed.txt | tr '\n' ' ')"
grep -q '\.gnu\.lto' <<<"$(objdump -h "$ar")" && fail "libucmd.a holds LTO bytecode"
# every function the installed headers declare (not inline) is exported
for h in $headers; do printf '#include <%s>\n' "$h"; done >all.c
cc -std=gnu11 $cflags -aux-info aux.txt -c all.c -o all.o || fail "aux-info"
grep -F "$P/include/" aux.txt | grep -v ' \*/ static ' |
	sed -n 's/.*[ *]\([a-z_0-9]*\) (.*/\1/p' | sort -u >declared.txt
sed 's/@.*//' dyn.txt | sort -u >exported.txt
missing=$(comm -23 declared.txt exported.txt | tr '\n' ' ')
echo "headers declare $(wc -l <declared.txt) functions"
[ -z "$missing" ] || fail "declared but not exported: $missing"

# ---- examples and the README's, against the shared library ---------------
python3 - "$src/README.md" readme_example.c <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index("```c\n") + 5
open(sys.argv[2], "w").write(s[i:s.index("```", i)])
PY
expect() {	# name, output: the lines each example promises
	case $1 in
	hello|readme_example)
		grep -q "null uring_cmd: res 0" <<<"$2" && grep -q "nvme read: res 0" <<<"$2" ;;
	null_cmd)
		grep -q "null uring_cmd: res 0" <<<"$2" &&
			[ "$(grep -c 'batch: user_data 10[0-3] res 0$' <<<"$2")" = 4 ] ;;
	*)	[ -n "$2" ] ;;
	esac
}
for c in "$src"/examples/*.c readme_example.c; do
	name=$(basename "$c" .c)
	# shellcheck disable=SC2086
	if ! cc -std=gnu11 -Wall -Wextra -Werror -o "$name" "$c" $cflags $libs; then
		fail "build $name with pkg-config"
		continue
	fi
	out=$(LD_LIBRARY_PATH=$libdir "./$name" 2>&1) || { fail "$name exited $?: $out"; continue; }
	expect "$name" "$out" || fail "$name output: $out"
	# not "ldd | grep -q": with pipefail, ldd dying of SIGPIPE would fail it
	deps=$(LD_LIBRARY_PATH=$libdir ldd "./$name")
	grep -q "libucmd.so.0 => $libdir" <<<"$deps" ||
		fail "$name does not use the installed libucmd.so.0: $deps"
	echo "$name (shared): ok"
done

# ---- the static library --------------------------------------------------
# shellcheck disable=SC2086
if cc -std=gnu11 -static -o null_cmd_static "$src/examples/null_cmd.c" $cflags \
	$(pkg-config --static --libs ucmd) 2>static.log; then
	out=$(./null_cmd_static 2>&1) || fail "null_cmd_static exited: $out"
	expect null_cmd "$out" || fail "null_cmd_static output: $out"
	grep -q 'statically linked' <<<"$(file null_cmd_static)" || fail "null_cmd_static is not static"
	echo "null_cmd (static): ok"
else
	grep -v 'statically linked applications requires at runtime' static.log
	fail "static build with pkg-config --static"
fi

# ---- the application's setuid() reaches the library's interposer ----------
cat >cred.c <<'C'
#include <unistd.h>
#include <ucmd/ucmd.h>
int main(void)
{
	struct ucmd_engine *e = ucmd_engine_new();
	int ret = setuid(getuid());	/* no change: only the binding matters */
	ucmd_engine_free(e);
	return ret != 0;
}
C
# shellcheck disable=SC2086
cc -std=gnu11 -o cred cred.c $cflags $libs || fail "build cred"
LD_LIBRARY_PATH=$libdir LD_DEBUG=bindings ./cred 2>bind.log || fail "cred exited"
grep -E "binding file \./cred .* to $libdir/libucmd\.so\.0 .*symbol \`setuid'" bind.log >/dev/null ||
	fail "setuid() does not bind to libucmd's interposer: $(grep "\`setuid'" bind.log)"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "install: ok"
