"""Triage at model size: bisect a clean and a planted GPT training step of three sizes.

    python benchmarks/model_size.py [--sizes 2-layer 8-layer gpt2-small] [--python PY]
                                    [--out DIR] [--memory-limit SIZE]
                                    [--workers serial 2-local dask-2]

Each size is `gpt_adamw_step.py` (bf16 compute, f32 parameters, optax AdamW, under `jax.jit`)
made with JAX in another interpreter (`--python`) under the per-pass dump flags of the
corpus README, into OUT/<size> (reused while complete). XLA CPU writes an empty snapshot when a
step's arguments and results pass 2 GB, so every run here uses `--fake-data`. A copy,
OUT/<size>-planted, has `exponential -> exponential-minus-one` from the middle per-pass step
that holds an exponential on (`tests/helpers/planting.py`). Per size, in one run:

  - one XLA CPU execution of the step (best of two, after compiling), for scale;
  - `workbench bisect --fake-data` of the clean dump: must be ok;
  - `workbench bisect --fake-data --localize` of the planted copy: must name the planted step
    and an exponential-minus-one instruction;

each with its wall time, the CPU time of its whole process tree, evaluations (steps; f64 and
random-rounding evaluations of the reference) and the peak resident memory of that tree
(both sampled from /proc every 20 ms: `/usr/bin/time` sees only the parent), and in
brackets the peak of what no file backs (values a replay keeps on disk are mapped files the
system can drop). Each command
runs once per `--workers` choice: the verdict's independent evaluations one after the other
(`serial`), on two local workers (`2-local`: `--jobs 2`), on a local Dask cluster of two
worker processes (`dask-2`: `--dask-workers 2`). Goals (issue 37): the 2-layer
bisect within 15x one XLA execution and 400 MB; GPT-2 small's planted copy named within
15 minutes and 8 GB.
Run the large sizes inside a memory cgroup on a shared machine: a run over it is killed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "devset"))

from planted import plant_points  # noqa: E402

from tests.helpers.planting import plant  # noqa: E402
from workbench.replay.progress import tree_resident_bytes  # noqa: E402

PROGRAM = HERE / "gpt_adamw_step.py"
XLA_FLAGS = ("--xla_dump_to=. --xla_dump_hlo_pass_re=.* --xla_dump_hlo_snapshots "
             "--xla_dump_hlo_as_text --xla_dump_hlo_as_proto")
# layers, d_model, heads, vocabulary, batch (sequence 128)
SIZES = {
    "2-layer": (2, 256, 4, 1000, 8),
    "8-layer": (8, 256, 4, 1000, 8),
    "gpt2-small": (12, 768, 12, 50304, 4),
}
OLD, NEW = "exponential", "exponential-minus-one"
# Where the verdict's independent evaluations run: bisect's options for each choice.
WORKERS = {"serial": [], "2-local": ["--jobs", "2"], "dask-2": ["--dask-workers", "2"]}


def program_arguments(size: str, repeat: int) -> list[str]:
    layers, d, heads, vocabulary, batch = SIZES[size]
    return [str(PROGRAM), str(layers), str(repeat), str(d), str(heads), str(vocabulary),
            str(batch)]


def jax_environment() -> dict[str, str]:
    return {**os.environ, "JAX_PLATFORMS": "cpu"}


def make_dump(python: str, size: str, out: Path) -> Path:
    """The dump of one training step of `size`, made unless a complete one is in `out`."""
    folder = out / size
    if (folder / ".complete").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    subprocess.run([python, *program_arguments(size, 0)], cwd=folder, check=True,
                   env={**jax_environment(), "XLA_FLAGS": XLA_FLAGS}, stdout=subprocess.DEVNULL)
    (folder / ".complete").write_text(f"{size}\n")
    return folder


def train_step_module(folder: Path) -> str:
    """The key of the training step's module: the one with the most per-pass steps."""
    counts: dict[str, int] = {}
    for path in folder.glob("module_*.jit_train_step.*.after_*.txt"):
        key = path.name.split(".")[0]
        counts[key] = counts.get(key, 0) + 1
    return max(counts, key=lambda key: counts[key])


def planted_copy(folder: Path, module: str) -> tuple[Path, int]:
    """The copy with the planted bug (made unless complete) and the XLA step it starts at."""
    step = plant_points(folder, module, OLD)[1]
    target = folder.with_name(folder.name + "-planted")
    if not (target / ".complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        plant(folder, target, module, step, OLD, NEW)
        (target / ".complete").write_text(f"{OLD} -> {NEW} from step {step:04d}\n")
    return target, step


def xla_seconds(python: str, size: str) -> float:
    """Best wall time of XLA CPU running the compiled step (of two, after the first)."""
    done = subprocess.run([python, *program_arguments(size, 2)], check=True,
                          env=jax_environment(), capture_output=True, text=True)
    found = dict(line.split() for line in done.stdout.splitlines() if line.startswith("xla-"))
    return float(found["xla-seconds"])


@dataclass
class Run:
    seconds: float
    cpu_seconds: float
    peak_mb: float
    verdict: dict
    anonymous_mb: float = 0.0  # the peak of what no file backs (spilled values excluded)


def tree_cpu(root: int, seen: dict[int, float]) -> None:
    """Record in `seen` the CPU seconds (user and system) each process of `root`'s tree has
    used so far: a process that ended keeps its last sample."""
    proc = Path("/proc")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        used[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    for pid, seconds in used.items():
        ancestor = pid
        while ancestor not in (root, 0, 1) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor == root:
            seen[pid] = max(seen.get(pid, 0.0), seconds)


def bisect(folder: Path, module: str, localize: bool, memory_limit: str | None,
           workers: str) -> Run:
    """`workbench bisect --fake-data --json` (fresh results cache), timed and sampled."""
    arguments = ["bisect", str(folder), module, "--fake-data", "--json", *WORKERS[workers]]
    arguments += ["--localize"] if localize else []
    arguments += ["--memory-limit", memory_limit] if memory_limit else []
    workbench = Path(sys.executable).with_name("workbench")
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryFile("w+") as output:
        start = time.perf_counter()
        process = subprocess.Popen([str(workbench), *arguments], stdout=output,
                                   env={**os.environ, "XDG_CACHE_HOME": cache})
        peak = anonymous = 0
        cpu: dict[int, float] = {}
        while process.poll() is None:
            peak = max(peak, (tree_resident_bytes(process.pid) or 0))
            anonymous = max(anonymous, tree_resident_bytes(process.pid, anonymous=True) or 0)
            tree_cpu(process.pid, cpu)
            time.sleep(0.02)
        seconds = time.perf_counter() - start
        output.seek(0)
        text = output.read()
    try:
        verdict = json.loads(text)
    except json.JSONDecodeError:
        verdict = {"status": f"no verdict (exit {process.returncode})"}
    kind = "localize" if localize else "bisect"
    # beside the dump, not inside
    (folder.parent / f"{folder.name}.{kind}.{workers}.json").write_text(text)
    return Run(seconds, sum(cpu.values()), peak / 2**20, verdict, anonymous / 2**20)


def evaluations(verdict: dict) -> str:
    if "evaluations" not in verdict:
        return "-"
    return (f"{verdict['evaluations']}+{verdict.get('shadow_evaluations', 0)}f64"
            f"+{verdict.get('noise_evaluations', 0)}rr")


def clean_verdict(verdict: dict) -> str:
    return str(verdict.get("status"))


def planted_verdict(verdict: dict, step: int) -> str:
    """Whether the planted step (and an exponential-minus-one instruction) was named."""
    culprit = verdict.get("culprit") or {}
    named = culprit.get("xla_step")
    instruction = NEW in json.dumps(culprit)  # the localized instruction's opcode
    return (f"step {'-' if named is None else f'{named:04d}'}"
            f"{'' if named == step else ' (WRONG)'}, "
            f"{'instruction ' + NEW if instruction else 'instruction not named'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES))
    parser.add_argument("--python", default="python3.12", help="an interpreter with JAX")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "model-size")
    parser.add_argument("--memory-limit", help="passed to the workbench commands")
    parser.add_argument("--workers", nargs="+", choices=list(WORKERS), default=list(WORKERS),
                        help="where the verdict's independent evaluations run (default: each)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    rows = []
    for size in args.sizes:
        folder = make_dump(args.python, size, args.out)
        module = train_step_module(folder)
        planted, step = planted_copy(folder, module)
        xla = xla_seconds(args.python, size)
        print(f"{size}: {module}, XLA CPU step {xla:.2f} s; planted from step {step:04d}",
              flush=True)
        for workers in args.workers:
            clean = bisect(folder, module, False, args.memory_limit, workers)
            print(f"  {workers}: clean bisect {clean.seconds:.1f} s "
                  f"(CPU {clean.cpu_seconds:.0f} s), {clean.peak_mb:.0f} MB "
                  f"({clean.anonymous_mb:.0f} MB anonymous): "
                  f"{clean_verdict(clean.verdict)}", flush=True)
            found = bisect(planted, module, True, args.memory_limit, workers)
            print(f"  {workers}: planted bisect --localize {found.seconds:.1f} s "
                  f"(CPU {found.cpu_seconds:.0f} s), {found.peak_mb:.0f} MB "
                  f"({found.anonymous_mb:.0f} MB anonymous): "
                  f"{planted_verdict(found.verdict, step)}", flush=True)
            rows.append((size, workers, xla, clean, found, step))
    print()
    print("| size | workers | XLA step | clean bisect (CPU) | x XLA | evaluations | peak tree | "
          "planted --localize (CPU) | x XLA | evaluations | peak tree | named |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size, workers, xla, clean, found, step in rows:
        print(f"| {size} | {workers} | {xla:.2f} s | {clean.seconds:.1f} s "
              f"({clean.cpu_seconds:.0f} s) {clean_verdict(clean.verdict)} | "
              f"{clean.seconds / xla:.0f}x | {evaluations(clean.verdict)} | "
              f"{clean.peak_mb:.0f} ({clean.anonymous_mb:.0f}) MB | "
              f"{found.seconds:.1f} s ({found.cpu_seconds:.0f} s) | "
              f"{found.seconds / xla:.0f}x | {evaluations(found.verdict)} | "
              f"{found.peak_mb:.0f} ({found.anonymous_mb:.0f}) MB | "
              f"{planted_verdict(found.verdict, step)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
