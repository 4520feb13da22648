"""Plant a real-looking bug in each dev-set dump and check that triage names it.

    python benchmarks/devset/planted.py [SET ...] [--out OUT] [--old OP --new OP]

For every dump of the sets (as `make.py` writes them) and its module with the most per-pass
steps, `old` is rewritten to `new` from an early, a middle and a late step that holds `old`
(`tests/helpers/planting.py`: every step from there on, and `*after_optimizations`, as a miscompile
leaves it; the snapshot keeps the correct recorded result), each in a copy in a temporary
folder. Each copy is bisected execution by execution: the bug is *named* when the culprit is
the planted step, within ceil(log2 N) + 2 evaluations. Prints one line per dump and plant.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.helpers.planting import plant
from workbench.index import scan
from workbench.replay.bisect import bisect_replay, evaluation_bound
from workbench.replay.steps import open_replay

DEFAULT_OUT = Path(os.environ.get("DEVSET_OUT", "/work/devset-dumps"))


def plant_points(dump: Path, module_key: str, old: str) -> list[int]:
    """XLA step numbers of the early, middle and late steps whose text holds `old`."""
    pattern = re.compile(rf"\b{re.escape(old)}\(")
    found = []
    for path in sorted(dump.glob(f"{module_key}.*.txt")):
        match = re.search(r"\.(\d{4})\.[^.]+\.after_", path.name)
        if match and pattern.search(path.read_text()):
            found.append(int(match.group(1)))
    if not found:
        return []
    found = sorted(set(found))
    picks = [found[min(1, len(found) - 1)], found[len(found) // 2],
             found[-2 if len(found) > 2 else -1]]
    return list(dict.fromkeys(picks))


def check(dump: Path, old: str, new: str) -> list[str]:
    index = scan(dump)
    modules = [m for m in index.modules if m.executions]
    module = max(modules, key=lambda m: len(m.steps))
    lines = []
    for label, step_number in zip(("early", "middle", "late"),
                                  plant_points(dump, module.key, old), strict=False):
        with tempfile.TemporaryDirectory() as temporary:
            target = Path(temporary) / "dump"
            plant(dump, target, module.key, step_number, old, new)
            planted = next(m for m in scan(target).modules if m.key == module.key)
            named = 0
            worst = 0
            for execution in planted.executions:
                with open_replay(target, planted, execution) as replay:
                    verdict = bisect_replay(replay)
                culprit = verdict.culprit.step.xla_step if verdict.culprit else None
                bound = evaluation_bound(verdict.steps)
                worst = max(worst, verdict.evaluations)
                named += culprit == step_number and verdict.evaluations <= bound
            lines.append(f"{dump.name:24} {module.key:22} {label:6} step {step_number:04d}: "
                         f"named in {named} of {len(planted.executions)} executions "
                         f"(at most {worst} evaluations, bound {bound})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", default=["models"])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--old", default="exponential")
    parser.add_argument("--new", default="exponential-minus-one")
    args = parser.parse_args(argv)
    for name in args.sets:
        for dump in sorted(p for p in (args.out / name).iterdir() if p.is_dir()):
            for line in check(dump, args.old, args.new):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
