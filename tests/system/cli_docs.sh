#!/usr/bin/env bash
# docs/cli.md's table of nvme-cli 2.3's commands and options agrees with the
# CLI's own option tables (`ucmd help --dump-options`) in both directions and
# with nvme-cli itself (`nvme help`, `nvme CMD --help`); and the check can
# fail: a copy with one entry wrong each way is refused.
source "$(dirname "$0")/lib/common.sh"
tmp=$T
need_tools nvme

python3 scripts/cli_md.py check "$UCMD" docs/cli.md || fail "docs/cli.md disagrees"

# an option ucmd has, marked missing; an option it lacks, marked present
sed 's/^| `id-ns` | `--force` | — | yes | yes |/| `id-ns` | `--force` | — | yes | no |/' \
	docs/cli.md > "$tmp/a.md"
! cmp -s docs/cli.md "$tmp/a.md" || fail "the mutation did not apply"
if python3 scripts/cli_md.py check "$UCMD" "$tmp/a.md" >/dev/null; then
	fail "a missing ucmd option went unnoticed"
fi
sed 's/^| `set-feature` | `--data` | `-d` | yes | no |/| `set-feature` | `--data` | `-d` | yes | yes |/' \
	docs/cli.md > "$tmp/b.md"
! cmp -s docs/cli.md "$tmp/b.md" || fail "the mutation did not apply"
if python3 scripts/cli_md.py check "$UCMD" "$tmp/b.md" >/dev/null; then
	fail "an option ucmd lacks, claimed, went unnoticed"
fi
echo "cli_docs: ok"
