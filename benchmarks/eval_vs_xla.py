"""The HLO evaluator against real XLA CPU on a GPT-style training step, measured in one run.

    python benchmarks/eval_vs_xla.py [--python PY] [--layers 2] [--dump DIR] [--repeat 3]
                                     [--bisect] [--triage]

The program is `gpt_adamw_step.py` (bf16 compute, f32 parameters, optax AdamW, under
`jax.jit`). Without --dump it is run once with XLA's dump flags (per-pass steps, snapshots)
into a folder under the temporary directory, reused while complete. JAX runs in another
interpreter (`--python`, default `python3.12`; the project itself needs no JAX), which then
times the compiled step on the same arguments (best of `--repeat`, after the first call).
In this process: the optimized module (`cpu_after_optimizations`) evaluated on the snapshot's
arguments, best of `--repeat` (wall and CPU). Goal: at most 1.5x XLA. XLA CPU runs a step
on every core and the evaluator on one: the CPU times' ratio says how they compare per core.
`--bisect`: `workbench bisect` of the module as a command (fresh results cache), against one
XLA execution (goal: at most 15x) with its peak resident memory; `--triage`: `workbench
triage --jobs 2` of the whole dump (goal: 15 s), with the peak memory of its process tree.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workbench.blas_threads import one_blas_thread_unless_set

one_blas_thread_unless_set()  # as the CLI does, before numpy is imported

import argparse  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from workbench.index import scan  # noqa: E402
from workbench.replay.backends import open_backend  # noqa: E402
from workbench.replay.hlo import evaluate_module  # noqa: E402
from workbench.replay.inputs import InputSpec, resolve_inputs  # noqa: E402
from workbench.replay.progress import tree_resident_bytes  # noqa: E402

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "gpt_adamw_step.py"
XLA_FLAGS = (
    "--xla_dump_to=. --xla_dump_hlo_pass_re=.* --xla_dump_hlo_snapshots "
    "--xla_dump_hlo_as_text --xla_dump_hlo_as_proto"
)


def jax_environment(python: str) -> dict[str, str]:
    environment = {**os.environ, "JAX_PLATFORMS": "cpu"}
    if python == "python3.12":
        environment.setdefault("PYENV_VERSION", "3.12.1")
    return environment


def make_dump(python: str, layers: int) -> Path:
    """The dump of one training step, made unless a complete one is in the temporary folder."""
    folder = Path(tempfile.gettempdir()) / f"gpt-adamw-{layers}-layers"
    if (folder / ".complete").exists():
        return folder
    folder.mkdir(exist_ok=True)
    subprocess.run(
        [python, str(PROGRAM), str(layers)],
        cwd=folder,
        check=True,
        env={**jax_environment(python), "XLA_FLAGS": XLA_FLAGS},
        stdout=subprocess.DEVNULL,
    )
    (folder / ".complete").write_text(f"layers={layers}\n")
    return folder


def xla_seconds(python: str, layers: int, repeat: int) -> tuple[float, float]:
    """Best wall time of XLA CPU running the compiled step on the same arguments, and the
    best CPU time of all its threads (XLA CPU runs a step on every core)."""
    done = subprocess.run(
        [python, str(PROGRAM), str(layers), str(repeat)],
        check=True,
        env=jax_environment(python),
        capture_output=True,
        text=True,
    )
    found = dict(line.split() for line in done.stdout.splitlines() if line.startswith("xla-"))
    return float(found["xla-seconds"]), float(found["xla-cpu-seconds"])


def evaluation_seconds(folder: Path, repeat: int) -> tuple[float, float, str]:
    """Best wall and CPU time of evaluating the optimized train step; and the module's key."""
    dump = scan(folder)
    module = next(m for m in dump.modules if m.name.endswith("train_step") and m.executions)
    backend = open_backend(dump.root, module)
    inputs = resolve_inputs(backend, module.executions[0], InputSpec())
    hlo = backend.load(backend.steps()[-1])
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        evaluate_module(hlo, inputs.arguments)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), module.key


def command_seconds(arguments: list[str]) -> tuple[float, float]:
    """Wall time of a workbench command (fresh results cache), and the most resident memory
    its process tree held at once (MB; sampled every 20 ms from /proc: a worker pool's
    processes are not all children the command waits for, so `getrusage` misses them)."""
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "XDG_CACHE_HOME": cache}
        workbench = Path(sys.executable).with_name("workbench")
        start = time.perf_counter()
        process = subprocess.Popen([str(workbench), *arguments], env=environment,
                                   stdout=subprocess.DEVNULL)
        peak = 0
        while process.poll() is None:
            peak = max(peak, (tree_resident_bytes(process.pid) or 0))
            time.sleep(0.02)
        seconds = time.perf_counter() - start
    return seconds, peak / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default="python3.12", help="an interpreter with JAX")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dump", type=Path, help="an existing dump of gpt_adamw_step.py")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bisect", action="store_true")
    parser.add_argument("--triage", action="store_true")
    args = parser.parse_args()
    folder = args.dump or make_dump(args.python, args.layers)
    print(
        f"dump {folder}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    xla, xla_cpu = xla_seconds(args.python, args.layers, args.repeat)
    wall, cpu, key = evaluation_seconds(folder, args.repeat)
    print(
        f"XLA CPU step {xla:.3f} s (CPU {xla_cpu:.3f} s on all its threads); evaluation of "
        f"{key} optimized {wall:.3f} s (CPU {cpu:.3f} s, one thread): {wall / xla:.2f}x XLA "
        f"(goal 1.5x), CPU time {cpu / xla_cpu:.2f}x XLA's"
    )
    if args.bisect:
        seconds, peak = command_seconds(["bisect", str(folder), key])
        print(
            f"bisect {seconds:.1f} s: {seconds / xla:.1f}x one XLA execution (goal 15x); "
            f"peak memory {peak:.0f} MB"
        )
    if args.triage:
        seconds, peak = command_seconds(["triage", str(folder), "--jobs", "2"])
        print(f"triage --jobs 2 {seconds:.1f} s (goal 15 s); peak memory of the process "
              f"tree {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
