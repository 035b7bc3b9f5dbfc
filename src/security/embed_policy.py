#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Turn policy/default.ini into a C string, so the engine carries its
# default policy and the file in the repository stays the one source.
import sys

src, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(src, encoding='utf-8').read()
with open(out, 'w', encoding='utf-8') as f:
    f.write('/* generated from %s: do not edit */\n' % name)
    f.write('const char policy_default_name[] = "%s";\n' % name)
    f.write('const char policy_default_text[] =\n')
    for line in text.splitlines(True):
        esc = line.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n')
        f.write('\t"%s"\n' % esc)
    f.write('\t"";\n')
