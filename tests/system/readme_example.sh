#!/usr/bin/env bash
# The README's example program is examples/hello.c, byte for byte, and runs.
source "$(dirname "$0")/lib/common.sh"
python3 - <<'PY'
s = open("README.md").read()
i = s.index("```c\n") + 5
j = s.index("```", i)
assert s[i:j] == open("examples/hello.c").read(), "README example differs from examples/hello.c"
PY
out=$("$B/examples/hello")
echo "$out"
grep -q "null uring_cmd: res 0" <<<"$out"
grep -q "nvme read: res 0" <<<"$out"
