"""Triage of a large dump: the local process pool against a Dask cluster, and a warm cache.

    python benchmarks/triage_bench.py [--dump DIR] [--workers 2] [--executions N]
                                      [--scheduler ADDRESS] [--ship-files]

In one run, on the same dump (default: the first of /work/devset-dumps/many-executions,
/work/shared/corpus/xla-jax-tests/numpy-reducers and the test corpus's layernorm dump that
exists; `--executions` keeps the first modules up to that many executions):

- index: `scan` of the dump, best of 3;
- local pool: `triage(jobs=W)`, writing a fresh results cache (so this is also the cold run);
- Dask: `triage` on a `LocalCluster` of W single-threaded worker processes on this machine
  (started before the clock; `--scheduler` for a running cluster instead), no cache. The goal:
  within 1.2x of the local pool. The overhead per job is (Dask - local) x W / jobs (a task
  runs up to 8 jobs of one module);
- warm cache: `scan` and `triage` again with the cache of the local run, nothing evaluated,
  best of 3 (as the index). The goal: at most the index time plus 10%.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from workbench.index import scan
from workbench.model import Dump
from workbench.replay.triage.dask_engine import DaskSettings, chunks
from workbench.replay.triage.results_cache import ResultsCache
from workbench.replay.triage.run import triage, triage_jobs

CANDIDATES = [
    Path("/work/devset-dumps/many-executions"),
    Path("/work/shared/corpus/xla-jax-tests/numpy-reducers"),
    Path(__file__).resolve().parents[1] / "tests/data/corpus/xla/layernorm-broken-fusion",
]
TIME_LIMIT = 600.0


def default_dump() -> Path:
    for candidate in CANDIDATES:
        if candidate.is_dir() and (candidate.name != "many-executions"
                                   or (candidate / "READY").exists()):
            return candidate
    raise SystemExit("no dump found: give one with --dump")


def first_executions(dump: Dump, limit: int | None) -> Dump:
    """The dump cut to its first modules holding at most `limit` executions in all."""
    if limit is None:
        return dump
    kept, count = [], 0
    for module in dump.modules:
        if count + len(module.executions) > limit:
            break
        kept.append(module)
        count += len(module.executions)
    return Dump(dump.root, modules=kept)


def timed(run) -> tuple[float, object]:
    start = time.perf_counter()
    value = run()
    return time.perf_counter() - start, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--executions", type=int, metavar="N")
    parser.add_argument("--scheduler", metavar="ADDRESS")
    parser.add_argument("--ship-files", action="store_true")
    args = parser.parse_args(argv)
    root = args.dump or default_dump()

    index_seconds = min(timed(lambda: scan(root))[0] for _ in range(3))
    dump = first_executions(scan(root), args.executions)
    jobs = len(triage_jobs(dump))
    print(f"dump: {root}: {len(dump.modules)} modules, {jobs} jobs; index {index_seconds:.3f} s")

    with tempfile.TemporaryDirectory(prefix="triage-bench-cache-") as folder:
        cache = ResultsCache(Path(folder))
        local_seconds, local = timed(lambda: triage(dump, jobs=args.workers,
                                                    time_limit=TIME_LIMIT, cache=cache))
        print(f"local pool, {args.workers} processes (cold cache): {local_seconds:.2f} s, "
              f"{1000 * local_seconds * args.workers / jobs:.1f} ms per job per process")

        if args.scheduler is not None:
            settings = DaskSettings(scheduler=args.scheduler, ship_files=args.ship_files)
            dask_seconds, remote = timed(lambda: triage(dump, time_limit=TIME_LIMIT,
                                                        dask=settings))
            start_seconds = 0.0
        else:
            from distributed import LocalCluster

            start_seconds, cluster = timed(lambda: LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True,
                dashboard_address=None))
            with cluster:
                settings = DaskSettings(scheduler=cluster.scheduler_address,
                                        ship_files=args.ship_files)
                dask_seconds, remote = timed(lambda: triage(dump, time_limit=TIME_LIMIT,
                                                            dask=settings))
        same = ([(r.module, r.execution, r.status) for r in local]  # type: ignore[attr-defined]  # triage's results, typed loosely here
                == [(r.module, r.execution, r.status) for r in remote])  # type: ignore[attr-defined]  # triage's results, typed loosely here
        overhead = 1000 * (dask_seconds - local_seconds) * args.workers / jobs
        tasks = len(chunks(triage_jobs(dump), args.workers))
        print(f"Dask, {args.workers} workers{' (shipped files)' if args.ship_files else ''}: "
              f"{dask_seconds:.2f} s (cluster start {start_seconds:.2f} s, not counted); "
              f"{dask_seconds / local_seconds:.2f}x the local pool (goal <= 1.2x); "
              f"overhead {overhead:.1f} ms per job, {overhead * jobs / tasks:.1f} ms per task "
              f"({tasks} tasks); same statuses: {same}")

        def warm() -> list:
            return triage(first_executions(scan(root), args.executions), jobs=args.workers,
                          time_limit=TIME_LIMIT, cache=cache)

        runs = [timed(warm) for _ in range(3)]
        warm_seconds, again = min(runs, key=lambda run: run[0])
        evaluated = sum(not r.cached for r in again)  # type: ignore[attr-defined]  # triage's results, typed loosely here
        print(f"warm cache rerun (index included, best of 3): {warm_seconds:.3f} s, "
              f"{warm_seconds / index_seconds:.2f}x the index time (goal <= 1.1x); "
              f"{evaluated} job(s) evaluated again")
    return 0


if __name__ == "__main__":
    sys.exit(main())
