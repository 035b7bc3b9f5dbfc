#!/usr/bin/env bash
# libucmd(3) is the API's manual, so it keeps up with include/ucmd/:
#  - every function the public headers declare or define (extern and static
#    inline alike, and function-like macros: each name ucmd_... followed by
#    '(' outside a comment) is named in man/libucmd.3;
#  - every ucmd_... and UCMD_... name the page uses exists in a public
#    header (UCMD_1, the symbol version of src/libucmd.map, aside).
# Runs on the source tree, no install needed. Fails naming each name.
set -u
export LC_ALL=C	# one collation for sort and comm
cd "${1:-$(dirname "$0")/../..}" || exit 2
page=man/libucmd.3
[ -r "$page" ] || { echo "man_api: no $page" >&2; exit 2; }
shopt -s nullglob
headers=(include/ucmd/*.h include/ucmd/uapi/*.h)

# The headers' code without comments: a name in a comment ("ucmd_X_create()")
# is prose, not a declaration.
code=$(cat "${headers[@]}" | perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g')
funcs=$(grep -oE '\bucmd_[a-z0-9_]+[[:space:]]*\(' <<<"$code" | tr -d '( \t' | sort -u)
idents=$(grep -oE '\b(ucmd|UCMD)_[A-Za-z0-9_]+' <<<"$code" | sort -u)
[ -n "$funcs" ] || { echo "man_api: no ucmd_ function found in ${headers[*]}" >&2; exit 2; }

# The page's names; roff escapes (\fB, \-) never sit inside an identifier.
named=$(grep -oE '\b(ucmd|UCMD)_[A-Za-z0-9_]+' "$page" | sort -u)

bad=0
missing=$(comm -23 <(echo "$funcs") <(echo "$named"))
if [ -n "$missing" ]; then
	echo "man_api: declared in include/ucmd/ but not in $page:" >&2
	sed 's/^/  /' <<<"$missing" >&2
	bad=1
fi
stale=$(comm -13 <( (echo "$idents"; echo UCMD_1) | sort -u) <(echo "$named"))
if [ -n "$stale" ]; then
	echo "man_api: named in $page but in no header of include/ucmd/:" >&2
	sed 's/^/  /' <<<"$stale" >&2
	bad=1
fi
[ "$bad" = 0 ] && echo "man_api: $page names all $(wc -l <<<"$funcs") functions of include/ucmd/, and nothing else"
exit "$bad"
