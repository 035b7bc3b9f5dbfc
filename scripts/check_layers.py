#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Which layer of src/ may include which (docs/layers.md).

Each directory of src/ may include the headers of the directories listed for
it (and its own, and the public include/ucmd/). core/core.h, the engine's
internals, is further limited to the engine itself. And the ucmd_ prefix is
the public API's: a function or global of src/ or tools/ that is not static
and is named ucmd_* must be declared in include/ucmd/ (UCMD_EXCEPTIONS
aside); internal ones take a kernel name or their module's prefix. The map
of the layers in docs/layers.md (its table) and in README.md (its Layout)
must be this file's. Comments and docs point to code or docs, never to an
issue number (issues live outside the repository). Prints each violation as file:line and exits 1 if
there is one.
"""
import os
import re
import sys

ALLOWED = {
    'lib':       set(),
    'uaccess':   {'lib'},
    'store':     {'lib', 'uaccess'},
    'block':     {'lib'},
    'nvme/ctrl': {'lib', 'uaccess', 'store'},
    'ring':      {'lib'},
    # The engine and its security hook chain are one layer: the chain
    # (hooks.c, desc.c) is built into the engine, the modules sit on top.
    'core':      {'lib', 'uaccess', 'block', 'ring', 'security'},
    'security':  {'lib', 'uaccess', 'core'},
    # NVMe/TCP: the PDUs and their checks (pdu.c), shared by the host
    # transport and ucmdd's target; the digests' CRC-32C is lib's
    'tcp':       {'lib'},
    # ucmdd's NVMe/TCP target (Linux's nvmet-tcp), which acts as its
    # connections through the engine's credentials (core/cred.h)
    'nvme/target': {'lib', 'core', 'tcp'},
    'nvme/host': {'lib', 'uaccess', 'block', 'core', 'security', 'nvme/ctrl', 'tcp'},
    'kernel':    {'lib', 'uaccess', 'block', 'core', 'security', 'ring'},
    # the backends behind the public entries' ops table (core/backend.h)
    'backend':   {'lib', 'uaccess', 'block', 'core', 'security', 'ring'},
    # ucmdd's wire protocol: the contract between client and server, alone
    'daemon':    set(),
    # the daemon backend (libucmd's client of ucmdd): core/backend.h only,
    # ring's mapping of a ring memfd whose SQEs sit at IORING_OFF_SQES, and
    # uaccess for bounce.c's fault-safe copies out of a read bounce area
    'client':    {'lib', 'uaccess', 'core', 'daemon', 'ring'},
    # ucmdd itself: the engine's internals, the protocol, remote user memory
    'server':    {'lib', 'uaccess', 'block', 'core', 'security', 'ring', 'daemon',
                  'nvme/host', 'nvme/ctrl', 'nvme/target', 'store', 'tcp'},
    # libucmd-preload (ucmd exec): a client of ucmdd inside someone else's
    # program; uaccess for rw.c's fault-safe copies of the program's buffers
    # (a guarded memcpy, not a process_vm system call per read or write)
    'preload':   {'lib', 'uaccess', 'core', 'client', 'daemon'},
    # the BPF LSM enforcer: libucmd's public API (include/ucmd/) only
    'bpf':       set(),
}
# Who may include the engine's internals, besides src/core and src/ring.
CORE_H_USERS = {
    'src/security/hooks.c',  # the engine's hook chain state (struct ucmd_engine)
    'src/kernel/dev.c',      # the kernel backend fills the engine's ops
    'src/backend/native.c',  # the native backend is the engine's own ops
    # ucmdd's rings: a client ring is an engine ring, which its thread owns
    'src/server/mem.c', 'src/server/ring.h', 'src/server/ring.c',
    'src/server/quota.c',  # the reserve for root is a share of the engine's file table (UCMD_MAX_FILES)
    'src/security/security.c',  # the engine's modules live on the engine (e->setup)
    # the NVMe/TCP target's connection owns an engine ring: completions other
    # threads hand it as task work wake it (io_ring_set_owner_wake), as ucmdd's rings'
    'src/nvme/target/tcp_io.c',
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# ---- the ucmd_ prefix ----
PUBLIC_DIR = 'include/ucmd'
UCMD_SCAN = ('src', 'tools')
# Internal functions or globals allowed the public prefix, each with its
# reason. BPF programs (*.bpf.c) are not scanned: a program's name is the
# name of its pin under bpffs (src/bpf/loader.c), which users see.
UCMD_EXCEPTIONS = {}
UCMD_WORD = re.compile(r'\bucmd_\w+')
# a definition or declaration at column 0: "type name(" or "name(" (type on
# the line before), or a global "type name[...] = / ;"
UCMD_FUNC = re.compile(r'^(?:[A-Za-z_][\w \t*]*?[\s*])?(ucmd_\w+)\s*\(')
UCMD_GLOBAL = re.compile(r'^(?:[A-Za-z_][\w \t*]*?[\s*])(ucmd_\w+)\s*(?:\[[^\]]*\])?\s*[=;]')
UCMD_NOT_A_NAME = re.compile(r'\b(?:struct|enum|union|typedef|return|goto|sizeof)\s+$')


def public_names(root):
    names = set()
    for dirpath, _, files in os.walk(os.path.join(root, PUBLIC_DIR)):
        for name in files:
            if name.endswith('.h'):
                with open(os.path.join(dirpath, name), encoding='utf-8') as f:
                    names.update(UCMD_WORD.findall(f.read()))
    return names


def check_ucmd_prefix(root):
    """Each non-static ucmd_* function or global not in include/ucmd/."""
    public = public_names(root)
    bad = 0
    for top in UCMD_SCAN:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(('.c', '.h')) or name.endswith('.bpf.c'):
                    continue
                path = os.path.join(dirpath, name)
                prev = ''
                with open(path, encoding='utf-8') as f:
                    for n, line in enumerate(f, 1):
                        m = UCMD_FUNC.match(line) or UCMD_GLOBAL.match(line)
                        if m and not line.startswith('static') \
                                and not prev.startswith('static') \
                                and not UCMD_NOT_A_NAME.search(line[:m.start(1)]) \
                                and m.group(1) not in public \
                                and m.group(1) not in UCMD_EXCEPTIONS:
                            print(f'{os.path.relpath(path, root)}:{n}: {m.group(1)} is not '
                                  f'declared in include/ucmd/: ucmd_ is the public API\'s '
                                  f'prefix (a kernel name or the module\'s own prefix)')
                            bad += 1
                        if line.strip():
                            prev = line
    return bad


# ---- the docs that draw the map ----
DOC_ROW = re.compile(r'^\|\s*`([\w/]+)/`\s*\|[^|]*\|([^|]*)\|\s*$')
README_DIR = re.compile(r'^src/([\w/]+?)/\s')


def check_docs(root):
    """docs/layers.md's table and README.md's Layout against ALLOWED."""
    bad = 0
    path = 'docs/layers.md'
    seen = set()
    with open(os.path.join(root, path), encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = DOC_ROW.match(line)
            if not m:
                continue
            layer = m.group(1)
            # the layers named in backquotes, asides in parentheses left out
            deps = set(re.findall(r'`([\w/]+)`', re.sub(r'\([^)]*\)', '', m.group(2))))
            seen.add(layer)
            if layer not in ALLOWED:
                print(f'{path}:{n}: {layer}/ is no layer of scripts/check_layers.py')
                bad += 1
            elif deps != ALLOWED[layer]:
                print(f'{path}:{n}: {layer}/ may include {", ".join(sorted(ALLOWED[layer])) or "nothing"} '
                      f'(scripts/check_layers.py), the table says {", ".join(sorted(deps)) or "nothing"}')
                bad += 1
    for layer in sorted(set(ALLOWED) - seen):
        print(f'{path}: no row for the layer {layer}/')
        bad += 1
    path = 'README.md'
    listed = set()
    with open(os.path.join(root, path), encoding='utf-8') as f:
        in_layout = False
        for n, line in enumerate(f, 1):
            if line.startswith('## '):
                in_layout = line.strip() == '## Layout'
                continue
            m = README_DIR.match(line) if in_layout else None
            if not m:
                continue
            listed.add(m.group(1))
            if m.group(1) not in ALLOWED:
                print(f'{path}:{n}: src/{m.group(1)}/ in the Layout is no layer of '
                      f'scripts/check_layers.py')
                bad += 1
    for layer in sorted(set(ALLOWED) - listed):
        print(f'{path}: the Layout does not list src/{layer}/')
        bad += 1
    return bad


ISSUE_CITE = re.compile(r'\bissues? #?[0-9]+', re.IGNORECASE)
ISSUE_SCAN = ('src', 'tools', 'tests', 'docs', 'scripts', 'bench', 'examples', 'man')
ISSUE_EXT = ('.c', '.h', '.py', '.sh', '.md', '.build', '.txt', '.1', '.3', '.5', '.8')


def check_issue_citations(root):
    """No "issue N" in the sources and docs (tests/fuzz/corpus is data)."""
    bad = 0
    files = [os.path.join(root, 'README.md'), os.path.join(root, 'meson.build'),
             os.path.join(root, 'Makefile')]
    for top in ISSUE_SCAN:
        for dirpath, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d != 'corpus']
            files += [os.path.join(dirpath, n) for n in sorted(names)
                      if n.endswith(ISSUE_EXT) or n == 'meson.build']
    for path in files:
        if not os.path.exists(path) or os.path.abspath(path) == os.path.abspath(__file__):
            continue
        with open(path, encoding='utf-8', errors='replace') as f:
            for n, line in enumerate(f, 1):
                if ISSUE_CITE.search(line):
                    print(f'{os.path.relpath(path, root)}:{n}: cites an issue number; '
                          f'point to the code or to docs/ instead')
                    bad += 1
    return bad


def layer_of(rel):
    d = os.path.dirname(rel)
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if d == layer or d.startswith(layer + '/'):
            return layer
    return None


def main(root):
    src = os.path.join(root, 'src')
    bad = 0
    for dirpath, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)
            me = layer_of(rel)
            if me is None:
                print(f'src/{rel}: in no layer of scripts/check_layers.py')
                bad += 1
                continue
            with open(path, encoding='utf-8') as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if '/' not in inc or inc.startswith('ucmd/'):
                        continue   # own directory, or the public API
                    them = layer_of(inc)
                    if them is not None and them != me and them not in ALLOWED[me]:
                        print(f'src/{rel}:{n}: {me} may not include {inc} ({them})')
                        bad += 1
                    if inc == 'core/core.h' and me not in ('core', 'ring') \
                            and f'src/{rel}' not in CORE_H_USERS:
                        print(f'src/{rel}:{n}: only the engine includes core/core.h')
                        bad += 1
    bad += check_ucmd_prefix(root)
    bad += check_docs(root)
    bad += check_issue_citations(root)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
