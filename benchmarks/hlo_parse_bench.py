"""HLO reader speed: the text parser and the proto reader on the largest module of a dump, and
on every module of it, against protobuf's own decoding of the same protos in the same run.

    python benchmarks/hlo_parse_bench.py [--dump DIR] [--repeat 5]

The baseline, `HloProto.FromString`, is protobuf's C decoder: it only builds protobuf
messages, so it is a floor no Python-level reader of the same module reaches; the ratios say
how far above it the readers are. The default dump is the large transformer dump that
`benchmarks/large_dump.py` makes (its largest module has about 6,000 HLO lines) when it is
there, else the corpus's `xla` folder. The dump is only read.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from large_dump import COMPLETE, default_folder  # noqa: E402
from timing import best_of  # noqa: E402

from workbench.formats.hlo_proto import read_hlo_proto  # noqa: E402
from workbench.formats.hlo_text import parse_hlo_text  # noqa: E402
from workbench.protos import hlo_pb2  # noqa: E402

REPORTS = re.compile(r"buffer-assignment|memory-usage-report|live-range")


def pairs(dump: Path) -> list[tuple[Path, Path]]:
    """(text, proto) of every step dumped both ways."""
    found = []
    for text in sorted(dump.rglob("*.txt")):
        proto = text.with_name(text.name[: -len(".txt")] + ".hlo.pb")
        if not REPORTS.search(text.name) and proto.exists():
            found.append((text, proto))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, help="an XLA dump folder with .txt and .hlo.pb")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (best kept)")
    args = parser.parse_args()
    dump = args.dump
    if dump is None:
        large = default_folder(4)
        dump = large if (large / COMPLETE).exists() else REPO / "tests/data/corpus/xla"
    found = pairs(dump)
    if not found:
        print(f"no step with both .txt and .hlo.pb under {dump}", file=sys.stderr)
        return 2
    texts = [(t.read_text(), p.read_bytes()) for t, p in found]
    largest = max(range(len(texts)), key=lambda i: texts[i][0].count("\n"))
    text, data = texts[largest]
    lines = text.count("\n")
    print(f"dump: {dump} ({len(found)} steps with text and proto)")
    print(f"largest module: {found[largest][0].name} ({lines} lines, {len(data)} proto bytes)")

    decode = best_of(args.repeat, lambda: hlo_pb2.HloProto.FromString(data))
    parse = best_of(args.repeat, lambda: parse_hlo_text(text))
    read = best_of(args.repeat, lambda: read_hlo_proto(data))
    print(f"  protobuf decode (baseline) {decode * 1e3:8.1f} ms")
    print(f"  parse_hlo_text             {parse * 1e3:8.1f} ms  {parse / decode:5.1f}x baseline"
          f"  ({lines / parse:,.0f} lines/s)")
    print(f"  read_hlo_proto             {read * 1e3:8.1f} ms  {read / decode:5.1f}x baseline")

    def each(reader: Callable[[object], object], index: int) -> Callable[[], None]:
        def run() -> None:
            for pair in texts:
                reader(pair[index])  # results dropped at once, as a browser would
        return run

    repeat = max(1, args.repeat // 2)
    all_decode = best_of(repeat, each(hlo_pb2.HloProto.FromString, 1))
    all_parse = best_of(repeat, each(parse_hlo_text, 0))
    all_read = best_of(repeat, each(read_hlo_proto, 1))
    total_lines = sum(t.count("\n") for t, _ in texts)
    print(f"all {len(texts)} modules ({total_lines} lines):")
    print(f"  protobuf decode (baseline) {all_decode:8.2f} s")
    print(f"  parse_hlo_text             {all_parse:8.2f} s  "
          f"{all_parse / all_decode:5.1f}x baseline  ({total_lines / all_parse:,.0f} lines/s)")
    print(f"  read_hlo_proto             {all_read:8.2f} s  {all_read / all_decode:5.1f}x baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
