"""IREE capture dump and replay through the workbench against the bare tools, in the same run.

    python benchmarks/iree_replay_bench.py [--repeat 20] [CAPTURE]

CAPTURE defaults to the corpus's jit_f.ireereplay. Needs the `iree` extra on PATH. Prints the
best-of-N wall time of:
  - `iree-dump-replay --format=jsonl` run bare (the baseline for the summary),
  - `read_replay` (the same tool through ToolProcess, JSONL parsed, executable formats read),
  - `iree-run-replay --device=local-sync` run bare (the baseline for the replay),
  - `start_replay(...).wait()` (the same replay through ToolProcess),
and the workbench/bare ratios: what the workbench adds on top of IREE's own tools.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from timing import best_of  # noqa: E402

from workbench.external_tools import DUMP_TOOL, RUN_TOOL, find_tool  # noqa: E402
from workbench.formats.iree_replay import read_replay  # noqa: E402
from workbench.replay.iree_runner import ReplayOptions, start_replay  # noqa: E402

CAPTURE = REPO / "tests" / "data" / "corpus" / "iree" / "jit_f" / "jit_f.ireereplay"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", nargs="?", type=Path, default=CAPTURE)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    dump_tool, run_tool = find_tool(DUMP_TOOL), find_tool(RUN_TOOL)
    capture = str(args.capture)

    def bare(command: list[str]) -> Callable[[], object]:
        return lambda: subprocess.run(command, check=True, capture_output=True)

    def replay() -> None:
        result = start_replay(args.capture, ReplayOptions()).wait()
        assert result.ok, result.describe()

    rows = [
        ("summary", best_of(args.repeat, bare([dump_tool, "--format=jsonl", capture])),
         best_of(args.repeat, lambda: read_replay(args.capture))),
        ("replay", best_of(args.repeat, bare([run_tool, "--device=local-sync", capture])),
         best_of(args.repeat, replay)),
    ]
    records = read_replay(args.capture).summary.record_count
    print(f"{args.capture.name}: {records} records, best of {args.repeat}")
    print(f"{'':8} {'bare tool':>10} {'workbench':>10} {'ratio':>6}")
    for name, baseline, ours in rows:
        print(f"{name:8} {baseline * 1000:8.1f}ms {ours * 1000:8.1f}ms {ours / baseline:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
