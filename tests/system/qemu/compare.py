#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare the differential sequence's output from the kernel (QEMU's NVMe
device under Linux) and from ucmd's emulated controller.

    compare.py KERNEL.out EMULATED.out docs/compat.md

Every line is "step k=v ...". A difference in a field is explained only by a
row of the table in docs/compat.md whose first cells are `step` (fnmatch
pattern), `field`, `kernel value` and `ucmd value` (either may be `*`).
Exit 1 on any unexplained difference or missing step; rows that explain
nothing are reported (the document may be stale) but do not fail.
"""
import fnmatch
import re
import sys

FIELD = re.compile(r"(\w+)=('[^']*'|\S+)")


def parse(path):
    steps = {}
    order = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            name, _, rest = line.partition(" ")
            steps[name] = dict(FIELD.findall(rest))
            order.append(name)
    return steps, order


def allowlist(path):
    rows = []
    cell = re.compile(r"^`([^`]*)`$")
    with open(path) as f:
        for line in f:
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 5:
                continue
            m = [cell.match(c) for c in cells[:4]]
            if not all(m):
                continue
            rows.append([x.group(1) for x in m] + [False])
    return rows


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    kern, korder = parse(sys.argv[1])
    emu, _ = parse(sys.argv[2])
    rows = allowlist(sys.argv[3])
    if not kern:
        print("compare: no kernel output")
        return 1
    bad = explained = same = 0
    for step in korder + [s for s in emu if s not in kern]:
        if step not in kern or step not in emu:
            print(f"MISSING {step}: only in {'kernel' if step in kern else 'ucmd'} output")
            bad += 1
            continue
        k, e = kern[step], emu[step]
        for field in sorted(set(k) | set(e)):
            kv, ev = k.get(field, "<none>"), e.get(field, "<none>")
            if kv == ev:
                same += 1
                continue
            why = None
            for r in rows:
                if (fnmatch.fnmatchcase(step, r[0]) and r[1] == field and
                        r[2] in ("*", kv) and r[3] in ("*", ev)):
                    why = r
                    r[4] = True
                    break
            if why:
                explained += 1
                print(f"known   {step} {field}: kernel {kv} ucmd {ev}")
            else:
                bad += 1
                print(f"DIFFERS {step} {field}: kernel {kv} ucmd {ev}  (not in docs/compat.md)")
    for r in rows:
        if not r[4]:
            print(f"note: docs/compat.md row `{r[0]}` `{r[1]}` matched no difference")
    print(f"compare: {len(korder)} steps, {same} fields equal, {explained} known differences, "
          f"{bad} unexplained")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
