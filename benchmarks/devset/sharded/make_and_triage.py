"""Dump every program of `programs.py` on 8 virtual CPU devices with per-pass steps, then
`workbench triage --fake-data` each dump and print its counts, and compare the last step's
replay on the program's own inputs with the output JAX computed (saved at dump time).

    python benchmarks/devset/sharded/make_and_triage.py [--python INTERPRETER] [--keep DIR]

The JAX side needs an interpreter with JAX (default: `python3.12` with PYENV_VERSION=3.12.1);
the workbench side runs with this interpreter. Dumps go to a temporary folder (or --keep)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FLAGS = ("--xla_force_host_platform_device_count=8 --xla_dump_to={out} "
         "--xla_dump_hlo_pass_re=.* --xla_dump_hlo_as_text --xla_dump_hlo_as_proto")


def dump(program: str, out: Path, python: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, XLA_FLAGS=FLAGS.format(out=out), PYENV_VERSION="3.12.1")
    subprocess.run([python, str(HERE / "run_one.py"), program, str(out)], check=True, env=env,
                   cwd=HERE)


def workbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default="python3.12")
    parser.add_argument("--keep", type=Path)
    parser.add_argument("programs", nargs="*")
    options = parser.parse_args()
    names = options.programs or subprocess.run(
        [options.python, "-c", "from programs import PROGRAMS; print(*PROGRAMS)"], cwd=HERE,
        env=dict(os.environ, PYENV_VERSION="3.12.1"), check=True, capture_output=True,
        text=True).stdout.split()
    base = options.keep or Path(tempfile.mkdtemp(prefix="sharded-devset-"))
    failures = 0
    for name in names:
        out = base / name
        dump(name, out, options.python)
        triage = json.loads(workbench("triage", str(out), "--fake-data", "--json").stdout)
        # Shardy's stage files are listed as modules of their own (not replayed here)
        hlo = [r for r in triage["results"] if not r["module"].startswith("shardy/")]
        counts = Counter(r["status"] for r in hlo)
        module = hlo[0]["module"]
        replay = json.loads(workbench("replay", str(out), module, "--fake-data", "--json").stdout)
        steps = Counter(r["kind"] for r in replay["results"])
        unsupported = sorted({r["status"] for r in replay["results"] if r["kind"] != "ok"})
        inputs = _numbered(out.glob(f"{name}.in.*.npy"))
        matched = last_step_matches(out, module, inputs, _numbered(out.glob(f"{name}.out.*.npy")))
        ok = counts["ok"] == len(hlo) and steps["ok"] == replay["steps"] and matched
        failures += not ok
        print(f"{name:24} executions {dict(counts)}, steps {dict(steps)} of {replay['steps']}"
              f"{' ' + str(unsupported) if unsupported else ''}; last step vs JAX: "
              f"{'equal' if matched else 'DIFFERENT'}")
    print(f"dumps in {base}")
    return 1 if failures else 0


def _numbered(paths) -> list[Path]:
    return sorted(paths, key=lambda p: int(p.name.split(".")[-2]))


def last_step_matches(root: Path, key: str, inputs: list[Path], outputs: list[Path]) -> bool:
    """The module's last step, replayed on the program's inputs, equals JAX's own output
    under the workbench's comparison."""
    from workbench.index import scan
    from workbench.replay.backends import open_backend
    from workbench.replay.judge.compare import compare

    module = scan(root).find_module(key)
    backend = open_backend(root, module)
    result = backend.evaluate(backend.steps()[-1], [np.load(p) for p in inputs])
    expected = [np.load(p) for p in outputs]
    results = list(result) if isinstance(result, tuple) else [result]
    return len(results) == len(expected) and all(
        compare(e, r).ok for e, r in zip(expected, results, strict=True))


if __name__ == "__main__":
    sys.exit(main())
