#!/usr/bin/env python3
"""Refuse `cmd | grep -q` in shell scripts that run under `set -o pipefail`.

grep -q exits at its first match; a writer still writing then dies of
SIGPIPE, and pipefail makes the pipeline fail although grep matched: a test
that fails on a busy machine and passes on an idle one. Write
`grep -q PAT <<<"$(cmd)"` or grep a file instead.

A script is under pipefail when it says `pipefail` itself, sources a file
that does (tests/system/lib/*.sh), or is such a library. Checked: every
*.sh below the directories given (default: tests scripts bench), relative
to the repository root given by --root (default: this file's parent).
Prints FILE:LINE: TEXT for each occurrence; exits 1 if there is one.
"""
import argparse
import os
import re
import sys

# a pipe (not ||), then grep with a quiet option: -q, -Fq, -qx, --quiet ...
PIPE_GREP_Q = re.compile(
    r"(?<![|])\|(?![|])\s*(?:!\s*)?(?:command\s+)?[ef]?grep\b"
    r"(?:\s+(?:-[A-Za-z]*q[A-Za-z]*|--quiet|--silent|-[A-Za-z]+|--[a-z-]+(?:=\S+)?))*"
    r"\s+(?:-[A-Za-z]*q[A-Za-z]*|--quiet|--silent)\b"
)
SOURCES_LIB = re.compile(r"^\s*(?:source|\.)\s+.*\blib/[\w.-]+\.sh", re.M)


def logical_lines(text):
    """(first line number, text) with continuations joined: a line ending in
    a backslash or in a pipe goes on with the next one."""
    out, buf, start = [], "", None
    for n, line in enumerate(text.splitlines(), 1):
        if start is None:
            start = n
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        if re.search(r"(?<![|])\|$", stripped) and not stripped.lstrip().startswith("#"):
            buf += stripped + " "
            continue
        out.append((start, buf + line))
        buf, start = "", None
    if buf:
        out.append((start, buf))
    return out


def code_only(line):
    """The line with quoted text blanked and a trailing # comment dropped
    (rough, enough for the code here): a pipe inside a string is no pipe."""
    out, q, i = [], None, 0
    while i < len(line):
        c = line[i]
        if q:
            if c == "\\" and q == '"':
                i += 2
                continue
            if c == q:
                q = None
                out.append(c)
            i += 1
            continue
        if c == "\\":
            out.append(line[i:i + 2])
            i += 2
            continue
        if c in "'\"":
            q = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t;"):
            break
        out.append(c)
        i += 1
    return "".join(out)


def under_pipefail(path, text):
    if "pipefail" in text or SOURCES_LIB.search(text):
        return True
    return os.sep + os.path.join("tests", "system", "lib") + os.sep in os.sep + path


def check(root, dirs):
    bad = []
    for d in dirs:
        for top, subdirs, files in os.walk(os.path.join(root, d)):
            subdirs.sort()
            for f in sorted(files):
                if not f.endswith(".sh"):
                    continue
                path = os.path.join(top, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                if not under_pipefail(rel, text):
                    continue
                for n, line in logical_lines(text):
                    if PIPE_GREP_Q.search(code_only(line)):
                        bad.append(f"{rel}:{n}: {line.strip()[:160]}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("dirs", nargs="*", default=["tests", "scripts", "bench"])
    a = ap.parse_args()
    bad = check(a.root, a.dirs)
    for b in bad:
        print(b)
    if bad:
        print(f"check_pipefail: {len(bad)} `cmd | grep -q` under pipefail "
              "(SIGPIPE makes them fail at random): use grep -q PAT <<<\"$(cmd)\"",
              file=sys.stderr)
        return 1
    print("check_pipefail: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
