#!/usr/bin/env python3
"""docs/cli.md: every nvme-cli command and option, and whether ucmd has it.

  cli_md.py generate UCMD > docs/cli.md   (needs Debian's nvme-cli 2.3)
  cli_md.py check UCMD docs/cli.md        (tests/system/cli_docs.sh)

ucmd's side always comes from the CLI's own option tables
(`ucmd help --dump-options`); nvme-cli's from `nvme help` and
`nvme CMD --help`. check fails when the document and the tables disagree
in either direction, or when nvme-cli's column is not what nvme-cli says.
"""
import re
import subprocess
import sys

OPT_RE = re.compile(r"^\s+\[\s+--([A-Za-z0-9-]+)(?:=<[^>]*>)?(?:, -(\S))?")
ROW_RE = re.compile(r"^\| `([a-z0-9 -]+)` \| (?:`(--[a-z0-9-]+)`|—) \| (?:`(-\S)`|—) \| (yes|no) \| (yes|no) \|")


# the plugins ucmd follows: their commands are "PLUGIN CMD" (`nvme zns report-zones`)
PLUGINS = ["zns", "fdp"]


def subcommands(argv):
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    cmds, on = [], False
    for line in out.splitlines():
        if "implemented sub-commands" in line:
            on = True
            continue
        if on and not line.strip():
            break
        if on:
            cmds.append(line.split()[0])
    return cmds


def nvme_tables():
    cmds = subcommands(["nvme", "help"])
    for p in PLUGINS:
        cmds += ["%s %s" % (p, c) for c in subcommands(["nvme", p, "help"])
                 if c not in ("version", "help")]
    tab = {}
    for c in cmds:
        h = subprocess.run(["nvme"] + c.split() + ["--help"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=10)
        opts = []
        for line in (h.stdout + h.stderr).splitlines():
            m = OPT_RE.match(line)
            if m:
                opts.append(("--" + m.group(1), "-" + m.group(2) if m.group(2) else None))
        tab[c] = opts
    return cmds, tab


def ucmd_tables(ucmd):
    out = subprocess.run([ucmd, "help", "--dump-options"], capture_output=True, text=True,
                         check=True).stdout
    cmds, tab = [], {}
    for line in out.splitlines():
        c, lo, sh, kind = line.split("\t")
        if c not in tab:
            cmds.append(c)
            tab[c] = []
        if lo.startswith("--"):
            tab[c].append((lo, None if sh == "-" else sh))
    return cmds, tab


def rows(ucmd):
    ncmds, ntab = nvme_tables()
    ucmds, utab = ucmd_tables(ucmd)
    out = []
    for c in ncmds + [c for c in ucmds if c not in ntab]:
        n, u = ntab.get(c), utab.get(c)
        out.append((c, None, None, n is not None, u is not None))
        longs = [o for o, _ in (n or [])] + [o for o, _ in (u or []) if o not in dict(n or [])]
        for lo in longs:
            ns = dict(n or []).get(lo, None) if n and lo in dict(n) else None
            us = dict(u or []).get(lo, None) if u and lo in dict(u) else None
            out.append((c, lo, us or ns, bool(n) and lo in dict(n), bool(u) and lo in dict(u)))
    return out


def generate(ucmd):
    print(HEADER)
    print("| Command | Option | Short | nvme-cli 2.3 | ucmd |")
    print("|---|---|---|---|---|")
    for c, lo, sh, n, u in rows(ucmd):
        print("| `%s` | %s | %s | %s | %s |" % (c, "`%s`" % lo if lo else "—",
              "`%s`" % sh if sh else "—", "yes" if n else "no", "yes" if u else "no"))


def check(ucmd, path):
    ucmds, utab = ucmd_tables(ucmd)
    doc = {}
    bad = []
    for line in open(path):
        m = ROW_RE.match(line)
        if m:
            doc[(m.group(1), m.group(2))] = (m.group(3), m.group(4) == "yes", m.group(5) == "yes")
    if not doc:
        sys.exit("no table rows in %s" % path)
    # ucmd's column against ucmd's tables, both ways
    for c in ucmds:
        if doc.get((c, None), (None, None, False))[2] is not True:
            bad.append("%s: ucmd has the command, the document says no" % c)
        for lo, sh in utab[c]:
            d = doc.get((c, lo))
            if not d or not d[2]:
                bad.append("%s %s: ucmd has it, the document does not say so" % (c, lo))
            elif sh and d[0] != sh:
                bad.append("%s %s: short %s in ucmd, %s in the document" % (c, lo, sh, d[0]))
    for (c, lo), (sh, n, u) in doc.items():
        if not u:
            continue
        if c not in utab:
            bad.append("%s: the document says ucmd has it, ucmd has no such command" % c)
        elif lo and lo not in dict(utab[c]):
            bad.append("%s %s: the document says ucmd has it, its table does not" % (c, lo))
    # nvme-cli's column against nvme-cli itself
    ncmds, ntab = nvme_tables()
    for c in ncmds:
        if (c, None) not in doc or not doc[(c, None)][1]:
            bad.append("%s: nvme-cli has the command, the document does not list it" % c)
        for lo, sh in ntab[c]:
            d = doc.get((c, lo))
            if not d or not d[1]:
                bad.append("%s %s: nvme-cli has it, the document does not say so" % (c, lo))
    for (c, lo), (sh, n, u) in doc.items():
        if n and (c not in ntab or (lo and lo not in dict(ntab[c]))):
            bad.append("%s %s: the document says nvme-cli has it, nvme-cli does not" % (c, lo))
    for b in bad:
        print("FAIL: " + b)
    print("%s: %d rows, %d ucmd commands checked, %d problems" % (path, len(doc), len(ucmds),
                                                                  len(bad)))
    sys.exit(1 if bad else 0)


HEADER = """# ucmd's CLI and nvme-cli 2.3

ucmd's commands take nvme-cli's options, long and short, in nvme-cli's
positions (after the command name: `ucmd id-ns -n 2 -o json`), with
nvme-cli's defaults. This table lists every command `nvme help`, `nvme zns help` and `nvme fdp help` list (Debian's
nvme-cli 2.3) and every option its `--help` shows, with whether ucmd has it,
plus ucmd's own commands and options. tests/system/cli_docs.sh checks it
against ucmd's option tables (`ucmd help --dump-options`) and nvme-cli itself;
`scripts/cli_md.py generate build/tools/ucmd > docs/cli.md` rewrites it.

Differences in behaviour, on purpose:

- **Exit status**: 0 success, 1 the command failed (an errno or an NVMe status,
  printed), 2 a usage error: an unknown command or option (named in the
  message), a bad or missing value. nvme-cli exits 1 for both; ucmd keeps them
  apart so that scripts can tell a typo from a device error.
- **`-h`/`--help` anywhere on the line wins**: the command's help is printed
  (from its option table) and nothing else is parsed, opened or run.
- **The device**: without a `/dev` path, the command works on the controller
  of `--ctrl DIR`, `$UCMD_CTRL` or `./ucmd-ctrl` (see ucmd(1)); `--ctrl DIR`
  must exist unless `--create` is given or `ucmd --ctrl DIR create-ctrl` made
  it. The global `-n`/`-o` before the command still set the defaults.
  `list-subsys /dev/nvmeXnY` with `--ctrl` or `--daemon` is nvme-cli's
  filter on that view's names (the paths of that namespace, each with its
  ANA state); without them, the real device.
- **`show-topology`** shows the session's one subsystem (`--ctrl DIR` of one
  or several controllers, `--daemon`, or `--ctrl` nvme-tcp:// URLs of one
  subsystem) as nvme-cli shows Linux's; it takes no device. A namespace none
  of whose paths is usable still shows, with each path's ANA state, where
  nvme-cli under `ucmd exec` leaves it out (Identify through its head fails,
  as on Linux). docs/compat.md says how it is checked.
- **`format`** names the device and waits 10 seconds (Ctrl-C cancels, nothing
  is sent) unless `--force`, as nvme-cli; without `--lbaf` it keeps the
  format in use.
- **`get-feature`** needs `-f` (nvme-cli without it walks every feature).
- **`show-regs`** reads the embedded controller's whole register file with
  `ucmd_ctrl_regs_read()`, as nvme-cli maps BAR0, and ucmdd's controller's
  with `ucmd_nvme_regs_read()` (the daemon reads it; ASQ and ACQ, the
  daemon's addresses, show as 0); over NVMe/TCP it reads CAP, VS, CC, CSTS
  and NSSR with Property Get, and a controller that does not support that
  answers with its NVMe status.
- **`zns ...`** are nvme-cli's zns plugin (`ucmd zns report-zones`, as
  `nvme zns report-zones`), with its messages and JSON keys, including
  2.3's oddities (id-ns prints `frl` for `frl1`..`frl3`, report-zones' JSON
  has one `attrs`, the zone's ZAI); `zns list` and `zrwa-flush-zone` (no
  zone random write area here) are not there. `create-ctrl --zns` makes a
  zoned namespace (see ucmd(1)).
- **`fdp ...`** are nvme-cli's fdp plugin (`ucmd fdp configs -e 1`, as
  `nvme fdp configs /dev/nvme0 -e 1`), with its text and JSON keys;
  `fdp feature` (show, enable or disable Feature 1Dh) is later nvme-cli's,
  not 2.3's. `create-ctrl --fdp` makes a controller with FDP (docs/fdp.md).
- **`bench`, `run`, `policy`, `exec`, `create-ctrl`, `ana-state`, `port-state`** are ucmd's own
  (`ana-state`: a port's ANA state on ucmdd's NVMe/TCP target; `port-state`: that
  port taken down and brought back, docs/daemon.md).
"""

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "generate":
        generate(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
