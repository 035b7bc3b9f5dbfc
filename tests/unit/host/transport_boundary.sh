#!/usr/bin/env bash
# The host driver's transports call into the core (core.c, queue.c and the
# other shared files), never into each other: no symbol one transport's
# objects define is referenced by another's (docs/nvme-tcp-host.md). Reads
# the host library given as $1 (a thin archive: nm on the archive); fails
# naming each reference.
set -u
lib=${1:?usage: transport_boundary.sh libucmd_host.a}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
# the objects of each transport, as a pattern on the member's name
declare -A transport=([pci]='/pci\.c\.o$' [tcp]='/tcp(_recovery)?\.c\.o$')
nm -A -g --defined-only "$lib" >"$tmp/def" || exit 2
nm -A -u "$lib" >"$tmp/undef" || exit 2
for t in "${!transport[@]}"; do
	# "archive:member:value type name" / "archive:member: U name"
	awk -v re="${transport[$t]}" '{ split($1, f, ":"); if (f[2] ~ re) print $NF }' \
		"$tmp/def" | sort -u >"$tmp/$t.def"
	awk -v re="${transport[$t]}" '{ split($1, f, ":"); if (f[2] ~ re) print $NF }' \
		"$tmp/undef" | sort -u >"$tmp/$t.undef"
	if [ ! -s "$tmp/$t.def" ]; then
		echo "transport_boundary: no object of the $t transport in $lib" >&2
		exit 2
	fi
done
bad=0
for a in "${!transport[@]}"; do
	for b in "${!transport[@]}"; do
		[ "$a" = "$b" ] && continue
		comm -12 "$tmp/$a.undef" "$tmp/$b.def" >"$tmp/$a-$b"
		if [ -s "$tmp/$a-$b" ]; then
			echo "transport_boundary: the $a transport calls into the $b one:" \
			     $(cat "$tmp/$a-$b") >&2
			bad=1
		fi
	done
done
[ "$bad" = 0 ] && echo "transport_boundary: pci and tcp reach each other only through the core"
exit "$bad"
