"""Hostile and oversized input: time and peak memory of the workbench on a gzip bomb and on a
1,000,000-instruction HLO module, against reading the same file once (`cat`), same run; and
peak memory against `--memory-limit` where an instruction's real result outgrows its declared
shape (pad, base dilation) or a snapshot is larger than the limit (issue 22).

    python benchmarks/hostile_bench.py [--bomb-gib 3] [--instructions 1000000] [--repeat 3]
        [--memory-only] [--snapshot-mb 400] [--memory-limit 100MB]

Goals (issue 13): the bomb is reported as a problem in under 30 s and under 1 GB; `ls --check`
of the large module within 10x of reading the file once (`cat`, and a Python process reading
and decoding it). The parser's own time per instruction is shown too. Files are made in a
temporary folder.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKBENCH = [sys.executable, "-m", "workbench"]
READ_ONCE = "import sys; open(sys.argv[1], 'rb').read().decode()"
PARSE = """import sys, time
from workbench.formats.hlo_text import parse_hlo_text
text = open(sys.argv[1]).read()
start = time.perf_counter()
module = parse_hlo_text(text)
print(time.perf_counter() - start, sum(len(c.instructions) for c in module.computations))
"""


def run(command: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in MB (of this child alone: wait4) and output of one run."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        _, _, usage = os.wait4(process.pid, 0)
        process.returncode = 0  # collected by wait4
        seconds = time.perf_counter() - start
        output.seek(0)
        return seconds, usage.ru_maxrss // 1024, output.read()


def best(repeat: int, command: list[str]) -> tuple[float, int, str]:
    runs = [run(command) for _ in range(repeat)]
    seconds = min(r[0] for r in runs)
    return seconds, max(r[1] for r in runs), runs[-1][2]


def make_bomb(folder: Path, gib: int) -> Path:
    path = folder / "module_0099.jit_f.before_optimizations.txt.gz"
    chunk = bytes(1 << 24)
    with gzip.open(path, "wb", compresslevel=9) as stream:
        for _ in range(gib * 64):
            stream.write(chunk)
    return path


def make_large_module(folder: Path, instructions: int) -> Path:
    path = folder / "module_0001.big.before_optimizations.txt"
    with open(path, "w") as stream:
        stream.write("HloModule big, entry_computation_layout={(f32[8])->f32[8]}\n\n"
                     "ENTRY main {\n  p0 = f32[8] parameter(0)\n  a0 = f32[8] negate(p0)\n")
        for i in range(1, instructions - 1):
            stream.write(f"  a{i} = f32[8] add(a{i - 1}, p0)\n")
        stream.write(f"  ROOT r = f32[8] negate(a{instructions - 2})\n}}\n")
    return path


# Modules whose attributes make a result far larger than declared (issue 22, item 5).
BYPASSES = {
    "pad declared f32[4], padding=0_250000000": """HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4] pad(x, zero), padding=0_250000000
}
""",
    "convolution lhs_dilate=80000000": """HloModule m
ENTRY main {
  x = f32[1,4,1] parameter(0)
  k = f32[1,1,1] constant({{{1}}})
  ROOT r = f32[1,1,1] convolution(x, k), window={size=1 stride=300000000 lhs_dilate=80000000},
    dim_labels=b0f_0io->b0f
}
""",
    "reduce-window lhs_dilate=80000000": """HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[1] reduce-window(x, zero), window={size=1 stride=300000000 lhs_dilate=80000000},
    to_apply=add
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
""",
}


def write_module(folder: Path, text: str) -> None:
    folder.mkdir()
    for step in ("before_optimizations", "cpu_after_optimizations"):
        (folder / f"module_0001.m.{step}.txt").write_text(text)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def _key(number: int, length: int) -> bytes:
    """The start of a length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(length)


def make_large_snapshot(folder: Path, megabytes: int) -> None:
    """A module negating f32[N] and a snapshot of it: argument and result, `megabytes` in all,
    written as wire bytes a megabyte at a time (protobuf's Python API would take minutes, and
    this process would grow: a child's peak counts the parent's memory at fork)."""
    import struct

    from workbench.protos import xla_data_pb2

    elements = megabytes * (1 << 20) // 8
    write_module(folder, f"HloModule m\nENTRY main {{\n  x = f32[{elements}] parameter(0)\n"
                         f"  ROOT y = f32[{elements}] negate(x)\n}}\n")
    shape = xla_data_pb2.ShapeProto(element_type=xla_data_pb2.F32, dimensions=[elements])
    shape.layout.minor_to_major.append(0)
    shape_field = _key(1, shape.ByteSize()) + shape.SerializeToString()
    chunk = 1 << 18  # elements per write
    with open(folder / "module_0001.m.snapshot.0.pb", "wb") as stream:
        for number, value in ((2, 1.0), (3, -1.0)):  # arguments, result
            data_key = _key(8, elements * 4)
            stream.write(_key(number, len(shape_field) + len(data_key) + elements * 4))
            stream.write(shape_field + data_key)
            block = struct.pack("<f", value) * chunk
            for start in range(0, elements, chunk):
                stream.write(block[:4 * min(chunk, elements - start)])


def memory_bypasses(work: Path, limit: str, snapshot_mb: int, repeat: int) -> None:
    """Peak memory of `replay --memory-limit` on each bypass, against the limit and against
    a process that only imports the CLI (the floor any command pays)."""
    _, floor, _ = best(repeat, [sys.executable, "-c", "import workbench.cli"])
    print(f"memory bypasses under --memory-limit {limit} (importing the CLI alone: peak "
          f"{floor} MB)")
    cases = []
    for number, (label, text) in enumerate(BYPASSES.items()):
        folder = work / f"bypass{number}"
        write_module(folder, text)
        cases.append((label, [*WORKBENCH, "replay", str(folder), "m", "--fake-data"]))
    folder = work / "snapshot"
    make_large_snapshot(folder, snapshot_mb)
    size = (folder / "module_0001.m.snapshot.0.pb").stat().st_size / 1e6
    cases.append((f"a {size:.0f} MB snapshot",
                  [*WORKBENCH, "replay", str(folder), "m", "--execution", "snapshot.0"]))
    from workbench.sizes import parse_size

    limit_mb = parse_size(limit) / 2**20
    for label, command in cases:
        seconds, peak, out = best(repeat, [*command, "--memory-limit", limit, "--json"])
        said = "names the limit" if "limit" in out and "--memory-limit" in out else "NO ERROR"
        print(f"  {label:<42} {seconds:6.2f} s  peak {peak:>5} MB = {peak / limit_mb:.2f}x the "
              f"limit, {peak - floor:>5} MB over the import floor  {said}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bomb-gib", type=int, default=3)
    parser.add_argument("--instructions", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-only", action="store_true",
                        help="only the memory-bypass cases")
    parser.add_argument("--snapshot-mb", type=int, default=400)
    parser.add_argument("--memory-limit", default="100MB")
    args = parser.parse_args()
    env_note = os.environ.get("WORKBENCH_READ_LIMIT", "default")
    work = Path(tempfile.mkdtemp(prefix="hostile-bench-"))
    try:
        memory_bypasses(work, args.memory_limit, args.snapshot_mb, args.repeat)
        if args.memory_only:
            return
        bomb_folder = work / "bomb"
        bomb_folder.mkdir()
        bomb = make_bomb(bomb_folder, args.bomb_gib)
        print(f"gzip bomb: {bomb.stat().st_size / 1e6:.1f} MB expanding to {args.bomb_gib} GiB "
              f"(read limit: {env_note})")
        for label, command in (
                ("ls --check", [*WORKBENCH, "ls", str(bomb_folder), "--check"]),
                ("show --changed", [*WORKBENCH, "show", str(bomb_folder), "module_0099",
                                    "--changed"])):
            seconds, peak, out = best(args.repeat, command)
            said = "names the read limit" if "read limit" in out else ""
            print(f"  {label:<16} {seconds:6.2f} s  peak {peak:>5} MB  {said}")
        large_folder = work / "large"
        large_folder.mkdir()
        large = make_large_module(large_folder, args.instructions)
        print(f"{args.instructions:,}-instruction module: {large.stat().st_size / 1e6:.1f} MB")
        cat, _, _ = best(args.repeat, ["cat", str(large)])
        read, read_peak, _ = best(args.repeat, [sys.executable, "-c", READ_ONCE, str(large)])
        seconds, peak, out = best(args.repeat, [*WORKBENCH, "ls", str(large_folder), "--check"])
        parses = [run([sys.executable, "-c", PARSE, str(large)]) for _ in range(args.repeat)]
        parse = min(float(said.split()[0]) for _, _, said in parses)
        count = int(parses[0][2].split()[1])
        print(f"  cat                        {cat:6.2f} s")
        print(f"  python: read and decode    {read:6.2f} s  peak {read_peak:>5} MB")
        print(f"  ls --check                 {seconds:6.2f} s  peak {peak:>5} MB  "
              f"{seconds / cat:.0f}x cat, {seconds / read:.0f}x python (goal: 10x); "
              f"says: {out.strip().splitlines()[-1]}")
        print(f"  parse_hlo_text alone       {parse:6.2f} s  peak {max(p[1] for p in parses):>5} MB"
              f"  {parse / count * 1e6:.2f} µs per instruction")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
