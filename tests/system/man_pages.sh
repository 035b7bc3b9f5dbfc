#!/usr/bin/env bash
# The installed man pages render without a warning, and they keep up with
# the tools: every command `ucmd --help` lists has an entry in ucmd(1),
# every option `ucmd bench --help` lists is in ucmd-bench(1), and every
# option of `ucmd policy explain` is in ucmd-policy(5), and every option
# any command accepts is in one of them; every option of ucmdd is in
# ucmdd(8).
source "$(dirname "$0")/lib/common.sh"
set +e	# every check runs; the failures are counted
tmp=$T
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

meson install -C "$B" --no-rebuild --destdir "$tmp/d" >"$tmp/install.log" 2>&1 ||
	{ tail -20 "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
mapfile -t pages < <(find "$tmp/d" -path '*/share/man/man*' -type f | sort)
for want in man1/ucmd.1 man1/ucmd-bench.1 man5/ucmd-policy.5 man3/libucmd.3 man8/ucmdd.8; do
	grep -q "/$want\$" <<<"$(printf '%s\n' "${pages[@]}")" || fail "not installed: $want"
done
for p in "${pages[@]}"; do
	name=$(basename "$p")
	err=$(MANROFFSEQ='' MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
	[ -z "$err" ] || fail "man -l $name: $err"
	err=$(groff -man -ww -z "$p" 2>&1)
	[ -z "$err" ] || fail "groff -ww $name: $err"
	echo "$name: renders"
done

man1=$(printf '%s\n' "${pages[@]}" | grep '/man1/ucmd\.1$')
bench1=$(printf '%s\n' "${pages[@]}" | grep '/man1/ucmd-bench\.1$')
policy5=$(printf '%s\n' "${pages[@]}" | grep '/man5/ucmd-policy\.5$')

# Commands: each has an item of its own in ucmd(1), ".B NAME" at a line start.
cmds=$("$B/tools/ucmd" --help | sed -n '/^commands:/,$p' | awk 'NR > 1 { print $1 }')
[ -n "$cmds" ] || fail "ucmd --help lists no commands"
for c in $cmds; do
	grep -qE "^\.B ${c//-/\\\\-}( |$)" "$man1" || fail "ucmd(1) has no entry for '$c'"
done
echo "ucmd(1): $(wc -w <<<"$cmds") commands"

# Options: the long options the tools print, as roff spells them (\-\-name).
opts_in() {	# page, text with --options
	local n=0
	for o in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$2" | sort -u); do
		grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$1" || fail "$(basename "$1") lacks $o"
		n=$((n + 1))
	done
	echo "$(basename "$1"): $n options"
}
opts_in "$bench1" "$("$B/tools/ucmd" bench --help)"
opts_in "$policy5" "$("$B/tools/ucmd" policy explain --help 2>&1 | sed -n "/^usage/,\$p")"
opts_in "$man1" "$("$B/tools/ucmd" --help | sed '/^commands:/,$d')"

# Every command's options: each long option of every command's table
# (`ucmd help --dump-options`, what the parser accepts) is in ucmd(1), and so
# is every option of the remaining getopt tables in tools/ucmd/*.c (exec's,
# the global ones); policy explain's are in ucmd-policy(5).
n=0
for o in $( { "$B/tools/ucmd" help --dump-options | awk -F '\t' '$2 ~ /^--/ { print substr($2, 3) }'
	      grep -ohE '\{ *"[a-z][a-z0-9-]*", *(required|no|optional)_argument' tools/ucmd/*.c |
		      grep -oE '"[^"]+"' | tr -d '"'; } | sort -u); do
	grep -qF -- "$(sed 's/-/\\-/g' <<<"--$o")" "$man1" "$bench1" "$policy5" ||
		fail "no page documents ucmd's option --$o"
	n=$((n + 1))
done
[ "$n" -gt 60 ] || fail "only $n options found in the CLI's tables"
echo "tools/ucmd: $n options, each in a page"

# ucmdd: what --help lists and what its option table accepts, in ucmdd(8)
ucmdd8=$(printf '%s\n' "${pages[@]}" | grep '/man8/ucmdd\.8$')
opts_in "$ucmdd8" "$("$B/src/server/ucmdd" --help)"
n=0
for o in $(grep -ohE '\{ *"[a-z][a-z0-9-]*", *(required|no|optional)_argument' src/server/ucmdd.c |
	   grep -oE '"[^"]+"' | tr -d '"' | sort -u); do
	grep -qF -- "$(sed 's/-/\\-/g' <<<"--$o")" "$ucmdd8" || fail "ucmdd(8) lacks ucmdd's option --$o"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no option table found in src/server/ucmdd.c"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "man pages: ok"
