"""Evaluation time of a sharded (per-device) step against the same module unpartitioned,
measured in the same run.

    python benchmarks/spmd_bench.py [DUMP_DIR ...]

For each dump (default: the sharded dumps of `tests/data/sharded`), the reference step (the
module before optimizations: global shapes, one program) and the last step (after the SPMD
partitioner and every later pass: one program per device, run as one interpreter per device
meeting at collectives) are evaluated on the same fake global inputs. Best of 5 runs each;
the ratio is sharded / unpartitioned. `cold` is the sharded step with its per-device
interpreters built anew each run (as before they were kept between evaluations), `reuse` the
cold time over the warm one. Make bigger dumps with
`benchmarks/devset/sharded/make_and_triage.py --keep DIR`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from timing import best_of

from workbench.index import scan
from workbench.replay.backends import HloBackend, open_backend
from workbench.replay.hlo.partitioned import INTERPRETERS
from workbench.replay.inputs import fake_inputs

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "sharded"


def measure(folder: Path) -> None:
    dump = scan(folder)
    backend = open_backend(dump.root, dump.modules[0])
    assert isinstance(backend, HloBackend)
    partitioning = backend.partitioning()
    specs = backend.parameter_specs()
    if partitioning is None or specs is None:
        print(f"{folder.name}: not a partitioned module with known parameters")
        return
    arguments = fake_inputs(specs)
    steps = backend.steps()
    reference, last = steps[0], steps[-1]
    for step in (reference, last):  # parse and plan outside the timing
        backend.evaluate(step, arguments)
    whole = best_of(5, lambda: backend.evaluate(reference, arguments))
    sharded = best_of(5, lambda: backend.evaluate(last, arguments))

    def cold_run() -> None:
        INTERPRETERS.clear()
        backend.evaluate(last, arguments)

    cold = best_of(5, cold_run)
    print(f"{folder.name:24} {partitioning.devices} devices  unpartitioned "
          f"{whole * 1e3:8.2f} ms  sharded ({last.pass_name}) {sharded * 1e3:8.2f} ms  "
          f"ratio {sharded / whole:5.2f}  cold {cold * 1e3:8.2f} ms  reuse {cold / sharded:5.2f}x")


def main() -> None:
    folders = [Path(a) for a in sys.argv[1:]] or sorted(p for p in DATA.iterdir() if p.is_dir())
    for folder in folders:
        measure(folder)


if __name__ == "__main__":
    main()
