#!/usr/bin/env bash
# full_config.sh BUILD: make BUILD build everything meson builds by default
# (the tests and the BPF enforcer) if `make run` configured it with only what
# it runs (-Dtests=false -Dbpf=auto). Does nothing to a build that has them.
set -euo pipefail
dir=$1
[ -f "$dir/meson-info/intro-buildoptions.json" ] || exit 0
if ! python3 - "$dir/meson-info/intro-buildoptions.json" <<'PY'
import json, sys
o = {x["name"]: x["value"] for x in json.load(open(sys.argv[1]))}
sys.exit(0 if o.get("tests") is True and o.get("bpf") == "enabled" else 1)
PY
then
	meson configure "$dir" -Dtests=true -Dbpf=enabled
fi
