"""Action-log parsing speed against `wc -l` and `grep -c`, measured in the same run.

    python benchmarks/actions_bench.py [--repeat 5] [FILE]

FILE defaults to the corpus's iree-compile action log (32,125 lines, 15,725 actions). Prints
the best-of-N wall time of:
  - `wc -l FILE` and `grep -c completed FILE` (baselines: one pass over the bytes),
  - `read_action_log` in this process (decode, tree of actions, problems),
  - the same plus the Chrome trace object of every action,
and the ratios against the baselines. The target: the corpus log parsed in under 1 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from timing import best_of  # noqa: E402

from workbench.formats.action_log import chrome_trace, read_action_log  # noqa: E402

DEFAULT = REPO / "tests" / "data" / "corpus" / "mlir" / "iree-compile-jit_f" / "actions.log"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path: Path = args.file

    def parse() -> object:
        return read_action_log(path.read_bytes(), path.name)

    log = read_action_log(path.read_bytes(), path.name)
    print(f"{path}: {path.stat().st_size:,} bytes, {log.events:,} action lines, "
          f"{len(log.actions):,} actions ({len(log.open_actions)} open), "
          f"{len(log.problems)} problems")
    wc = best_of(args.repeat, lambda: subprocess.run(["wc", "-l", str(path)], check=True,
                                                     capture_output=True))
    grep = best_of(args.repeat, lambda: subprocess.run(["grep", "-c", "completed", str(path)],
                                                       check=True, capture_output=True))
    parsed = best_of(args.repeat, parse)
    traced = best_of(args.repeat, lambda: chrome_trace(read_action_log(path.read_bytes(),
                                                                       path.name)))
    print(f"{'wc -l':<28}{wc * 1000:9.1f} ms")
    print(f"{'grep -c completed':<28}{grep * 1000:9.1f} ms")
    print(f"{'read_action_log':<28}{parsed * 1000:9.1f} ms   {parsed / wc:6.1f}x wc   "
          f"{parsed / grep:6.1f}x grep")
    print(f"{'read + chrome_trace':<28}{traced * 1000:9.1f} ms   {traced / wc:6.1f}x wc   "
          f"{traced / grep:6.1f}x grep")
    verdict = "under" if parsed < 1.0 else "OVER"
    print(f"target: parse in under 1 s -> {parsed:.3f} s, {verdict}")
    return 0 if parsed < 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
