#!/bin/sh
# Dump JAX programs with the corpus README's flags (JAX on CPU), each into OUT/<name>/ with
# the program beside its dump. Usage: make_dumps.sh OUT [PROGRAM.py ...]
# (default: every program of this folder). Example, from the repository root:
#   benchmarks/devset/linalg/make_dumps.sh /work/devset-dumps/linalg
#   benchmarks/devset/linalg/make_dumps.sh /work/devset-dumps/ops benchmarks/devset/ops/*.py
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=$1
shift
if [ $# -eq 0 ]; then set -- "$here"/[a-z]*.py; fi
for program in "$@"; do
    program=$(cd "$(dirname "$program")" && pwd)/$(basename "$program")
    name=$(basename "$program" .py)
    mkdir -p "$out/$name"
    cp "$program" "$out/$name/program.py"
    if [ -f "$(dirname "$program")/_common.py" ]; then cp "$(dirname "$program")/_common.py" "$out/$name/"; fi
    (cd "$out/$name" && XLA_FLAGS="--xla_dump_to=. --xla_dump_hlo_pass_re=.* \
        --xla_dump_hlo_snapshots --xla_dump_hlo_as_text --xla_dump_hlo_as_proto" \
        JAX_PLATFORMS=cpu python program.py)
    echo "$name: $(ls "$out/$name" | grep -c snapshot) snapshots"
done
