"""Make the development set: real XLA CPU dumps written by JAX, one folder per program.

    python benchmarks/devset/make.py [SET ...] [--out OUT] [--python PY]
    python benchmarks/devset/make.py --jax-tests tests/fft_test.py ... [--tests-root DIR]

A set is a folder of this directory holding one JAX program per `.py` file (`lowp`, `linalg`,
...). Each program runs from an empty folder `OUT/<set>/<program>/` with the corpus's dump flags
(`--xla_dump_to=. --xla_dump_hlo_pass_re=.* --xla_dump_hlo_snapshots --xla_dump_hlo_as_text
--xla_dump_hlo_as_proto`, `JAX_PLATFORMS=cpu`) and leaves a copy of itself as `program.py`
beside its dump, as the corpus folders do. `--jax-tests` runs JAX's own test files the same
way, one generated case per parameterization by default, each cut by a time limit, into
`OUT/jax-tests/<file>/` (or all in one pytest run into `OUT/<--into>/`, with a `READY` file
when it has finished). When every program of a set has its
dump and none of this run's failed, `OUT/<set>/READY` is written (and removed while a whole set
is being made again).

The JAX interpreter is `--python`, else `$DEVSET_PYTHON`, else this interpreter if it can
import jax. OUT (default `$DEVSET_OUT` or `/work/devset-dumps`) must be outside the repository.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_OUT = Path(os.environ.get("DEVSET_OUT", "/work/devset-dumps"))
DUMP_FLAGS = ("--xla_dump_hlo_snapshots", "--xla_dump_hlo_as_text", "--xla_dump_hlo_as_proto")
PASS_STEPS_FLAG = "--xla_dump_hlo_pass_re=.*"
READY = "READY"


@dataclass
class Run:
    """One program's or test file's run: where it dumped and how it ended."""

    name: str
    folder: Path
    status: str  # "ok", "failed (exit N)", "time limit"
    seconds: float

    def line(self) -> str:
        files, size = folder_size(self.folder)
        return (f"{self.name:40s} {self.status:16s} {self.seconds:7.1f} s "
                f"{files:7d} files {size / 1e6:8.1f} MB  {self.folder}")


def folder_size(folder: Path) -> tuple[int, int]:
    """Number of files under `folder` and their total size in bytes."""
    files = size = 0
    for path in folder.rglob("*"):
        if path.is_file():
            files += 1
            size += path.stat().st_size
    return files, size


def sets() -> dict[str, Path]:
    """Every set: a folder of this directory with at least one program (not `sharded/`,
    which needs several devices and has its own `make_and_triage.py`)."""
    return {path.name: path for path in sorted(HERE.iterdir())
            if path.is_dir() and any(path.glob("*.py"))
            and not (path / "make_and_triage.py").exists()}


def find_python(option: str | None) -> str:
    """The interpreter with JAX: the option, $DEVSET_PYTHON, or this one if it has jax."""
    chosen = option or os.environ.get("DEVSET_PYTHON")
    if chosen:
        if shutil.which(chosen) is None:
            sys.exit(f"make.py: the JAX interpreter {chosen} does not exist")
        return chosen
    probe = subprocess.run([sys.executable, "-c", "import jax"], capture_output=True)
    if probe.returncode == 0:
        return sys.executable
    sys.exit("make.py: this interpreter cannot import jax; give one that can with --python PY "
             "or DEVSET_PYTHON=PY (pip install jax)")


def dump_env(dump_to: Path, pass_steps: bool) -> dict[str, str]:
    flags = [f"--xla_dump_to={dump_to}", *DUMP_FLAGS]
    if pass_steps:
        flags.insert(1, PASS_STEPS_FLAG)
    env = dict(os.environ, XLA_FLAGS=" ".join(flags), JAX_PLATFORMS="cpu")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def fresh_folder(folder: Path, replace: bool) -> None:
    """An empty folder for one dump; an existing one is replaced only when asked."""
    if folder.exists() and any(folder.iterdir()):
        if not replace:
            sys.exit(f"make.py: {folder} already holds a dump; --replace to make it again")
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)


def run_limited(command: list[str], cwd: Path, env: dict[str, str],
                time_limit: float | None) -> tuple[str, float]:
    """Run `command`; past the time limit interrupt it (Ctrl-C, so files being written are
    finished), then kill its process group if it is still there 30 s later."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True)
    try:
        code = process.wait(timeout=time_limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        return "time limit", time.perf_counter() - start
    except KeyboardInterrupt:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    return ("ok" if code == 0 else f"failed (exit {code})"), time.perf_counter() - start


def make_set(name: str, folder: Path, out: Path, python: str, pass_steps: bool,
             only: list[str], replace: bool, time_limit: float | None) -> list[Run]:
    programs = [p for p in sorted(folder.glob("*.py")) if not only or p.stem in only]
    target = out / name
    if not only:
        (target / READY).unlink(missing_ok=True)
    runs = []
    for program in programs:
        dump = target / program.stem
        fresh_folder(dump, replace)
        shutil.copyfile(program, dump / "program.py")
        print(f"== {name}/{program.stem}", flush=True)
        status, seconds = run_limited([python, "program.py"], dump,
                                      dump_env(dump, pass_steps), time_limit)
        runs.append(Run(f"{name}/{program.stem}", dump, status, seconds))
    complete = all((target / p.stem).is_dir() for p in folder.glob("*.py"))
    if complete and all(run.status == "ok" for run in runs):
        (target / READY).touch()
    return runs


def run_jax_tests(files: list[str], tests_root: Path, out: Path, into: str | None,
                  python: str, pass_steps: bool, replace: bool, time_limit: float | None,
                  generated_cases: int, x64: bool, pytest_args: list[str]) -> list[Run]:
    """Each test file with the dump flags, `generated_cases` per parameterization; with
    `into`, one pytest run of all of them into one folder (XLA numbers modules per process,
    so two processes dumping into one folder would overwrite each other's files)."""
    tests = [Path(file) if Path(file).is_absolute() else tests_root / file for file in files]
    for test in tests:
        if not test.is_file():
            sys.exit(f"make.py: {test}: no such test file (--tests-root is {tests_root})")
    suffix = "-x64" if x64 else ""
    batches = ([(into, tests)] if into else
               [(f"jax-tests/{test.stem}{suffix}", [test]) for test in tests])
    runs = []
    for name, batch in batches:
        dump = out / name
        fresh_folder(dump, replace)
        env = dump_env(dump, pass_steps)
        env["JAX_NUM_GENERATED_CASES"] = str(generated_cases)
        if x64:
            env["JAX_ENABLE_X64"] = "1"
        print(f"== {name}: {' '.join(test.name for test in batch)}", flush=True)
        command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   *map(str, batch), *pytest_args]
        # pytest exits 1 when a test fails; the dump is still what XLA ran.
        status, seconds = run_limited(command, tests_root, env, time_limit)
        runs.append(Run(name, dump, status, seconds))
        if into:  # finished writing, whether the tests passed or the time limit cut them
            (dump / READY).touch()
    return runs


def inside_repo(path: Path) -> bool:
    return path.resolve().is_relative_to(REPO)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="*", help=f"sets to make (default all: {', '.join(sets())})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where the dumps go (default $DEVSET_OUT or %(default)s)")
    parser.add_argument("--python", help="interpreter with jax (default $DEVSET_PYTHON, "
                        "else this one)")
    parser.add_argument("--only", nargs="+", default=[], metavar="PROGRAM",
                        help="make only these programs of the sets")
    parser.add_argument("--replace", action="store_true", help="replace existing dumps")
    parser.add_argument("--pass-steps", action=argparse.BooleanOptionalAction, default=None,
                        help="dump the HLO after each pass (default: on for programs, off "
                        "for --jax-tests)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per program or test file (default: none for programs, "
                        "400 for test files)")
    parser.add_argument("--jax-tests", nargs="+", metavar="FILE",
                        help="JAX test files to run with the dump flags (relative to "
                        "--tests-root)")
    parser.add_argument("--tests-root", type=Path, default=Path(os.environ.get(
        "DEVSET_JAX_TESTS", "/work/jax-tests")),
        help="folder holding JAX's tests/ at the installed jax's tag (default "
        "$DEVSET_JAX_TESTS or %(default)s)")
    parser.add_argument("--generated-cases", type=int, default=1, metavar="N",
                        help="JAX_NUM_GENERATED_CASES for the test files (default 1)")
    parser.add_argument("--x64", action="store_true",
                        help="JAX_ENABLE_X64=1 (f64 and c128, so LAPACK's d and z routines); "
                        "the folders are named <file>-x64")
    parser.add_argument("--into", metavar="NAME",
                        help="put every test file's dump into one folder OUT/NAME")
    parser.add_argument("--pytest-args", nargs=argparse.REMAINDER, default=[],
                        help="the rest of the line goes to pytest (e.g. -k 'Fft and not Ifft')")
    args = parser.parse_args(argv)
    if inside_repo(args.out):
        parser.error(f"--out {args.out} is inside the repository; dumps go outside it")
    python = find_python(args.python)
    runs: list[Run] = []
    try:
        if args.jax_tests:
            runs = run_jax_tests(args.jax_tests, args.tests_root.resolve(),
                                 args.out.resolve(), args.into, python, bool(args.pass_steps),
                                 args.replace, args.time_limit or 400, args.generated_cases,
                                 args.x64, args.pytest_args)
        else:
            known = sets()
            for name in args.sets or list(known):
                if name not in known:
                    parser.error(f"no set {name!r}: the sets are {', '.join(known)}")
                runs += make_set(name, known[name], args.out.resolve(), python,
                                 args.pass_steps is not False, args.only, args.replace,
                                 args.time_limit)
    finally:
        print()
        for run in runs:
            print(run.line())
    failed = [run for run in runs if run.status.startswith("failed") and not args.jax_tests]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
