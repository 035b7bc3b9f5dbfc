# shellcheck shell=bash
# Sourced first by every tests/system/*.sh (sourced, not run: scripts/check.sh
# runs tests/system/*.sh only, each with UCMD_BUILD set; one runs alone as
# `UCMD_BUILD=build bash tests/system/X.sh`). What every test had a copy of:
#
#   set -euo pipefail, umask 022, and the checkout's top as the current
#   directory (a test may say tests/system/... and $B/...)
#   SRC          the checkout, absolute
#   B            the build directory (UCMD_BUILD, default build)
#   UCMD, UCMDD  the CLI and the daemon of that build, absolute
#   T            a temporary directory, 0755 (other users reach what a test
#                puts there for them), under UCMD_TEST_TMPDIR (default
#                /var/tmp: a disk, where /tmp may be a tmpfs without
#                O_DIRECT). At exit: the functions given to at_exit (last
#                added first), then every background job of the test is
#                killed, then T is removed.
#   fail MSG     "FAIL: MSG", then on_fail if the test defines one, exit 1
#   skip MSG     "SKIP: MSG", exit 77: scripts/check.sh counts it as a skip,
#                and `make check` fails on it (docs/testing.md). Only for
#                what the machine lacks that scripts/deps.sh cannot give
#                (root), never for what the code does.
#   step MSG     a heading in the log, with the seconds since the start
#   need_root WHY       skip unless root
#   need_tools TOOL...  fail unless each is on PATH (deps.sh installs them)
#   as_user [OPT...] UID CMD...  CMD as an unprivileged user: no groups, no
#                       inheritable capabilities (setpriv, with OPTs such as
#                       --bounding-set=-all; numeric ids need no passwd
#                       entry). CMD inside the checkout runs as its shared copy.
#   as_nobody CMD...    as_user 65534
#   shared PATH  prints the path of a copy of PATH (a file of the checkout)
#                that any user can read and run, with the in-tree shared
#                libraries it loads at the same relative place (so that its
#                $ORIGIN runpath finds them): a checkout in a 0700
#                directory (a clone under /root) is not theirs to reach.
set -euo pipefail
umask 022
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
cd "$SRC"
B=${UCMD_BUILD:-build}
# shellcheck disable=SC2034  # for the tests that source this
UCMD=$SRC/$B/tools/ucmd
# shellcheck disable=SC2034
UCMDD=$SRC/$B/src/server/ucmdd
TEST_NAME=$(basename "$0" .sh)

T=$(mktemp -d "${UCMD_TEST_TMPDIR:-/var/tmp}/ucmd-$TEST_NAME.XXXXXX")
chmod 0755 "$T"
# what the clean-up removes, whatever a test later calls T
readonly COMMON_TMP=$T
SHARED=$T/shared
EXIT_FUNCS=()
at_exit() { EXIT_FUNCS=("$1" "${EXIT_FUNCS[@]}"); }
common_cleanup() {
	local f j
	for f in "${EXIT_FUNCS[@]}"; do "$f" || true; done
	for j in $(jobs -p); do kill -KILL "$j" 2>/dev/null || true; done
	wait 2>/dev/null || true
	# never through a mount a test left (a bind of /dev would lose the host its nodes)
	rm -rf --one-file-system "$COMMON_TMP"
}
trap common_cleanup EXIT

fail() {
	echo "FAIL: $*"
	if declare -F on_fail >/dev/null; then on_fail || true; fi
	exit 1
}
skip() { echo "SKIP: $*"; exit 77; }
step() { echo "--- [${SECONDS}s] $*"; }	# the time says where a slow test spends it

need_root() { [ "$(id -u)" = 0 ] || skip "needs root: $*"; }
need_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || fail "$t is missing (scripts/deps.sh installs it)"
	done
}

shared() {	# path
	local src rel dst lib
	src=$(realpath -- "$1")
	case $src in
	"$SRC"/*) rel=${src#"$SRC"/} ;;
	*) echo "$1"; return ;;	# outside the checkout: reachable as it is
	esac
	dst=$SHARED/$rel
	if [ ! -e "$dst" ]; then
		mkdir -p "$(dirname "$dst")"
		cp -L -- "$src" "$dst"
		chmod a+rX "$dst"
		if [ "$(head -c 4 "$src")" = $'\x7fELF' ]; then
			for lib in $(ldd "$src" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
				lib=$(realpath -s -- "$lib")
				case $lib in "$SRC"/*) ;; *) continue ;; esac
				[ -e "$SHARED/${lib#"$SRC"/}" ] && continue
				mkdir -p "$(dirname "$SHARED/${lib#"$SRC"/}")"
				cp -L -- "$lib" "$SHARED/${lib#"$SRC"/}"
				chmod a+rX "$SHARED/${lib#"$SRC"/}"
			done
		fi
	fi
	echo "$dst"
}

as_user() {	# [setpriv option...] uid cmd...
	local opts=() u prog
	while [[ $1 == --* ]]; do opts+=("$1"); shift; done
	u=$1 prog=$2
	shift 2
	[ -e "$prog" ] && prog=$(shared "$prog")
	setpriv --reuid "$u" --regid "$u" --clear-groups --inh-caps=-all "${opts[@]}" -- "$prog" "$@"
}
as_nobody() { as_user 65534 "$@"; }
