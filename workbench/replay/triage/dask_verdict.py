"""One verdict's independent evaluations on a Dask cluster (`parallel_verdict.Executor`), so a
bigger cluster makes one bisection faster, not only many.

The recipe every evaluation starts from (`SharedStep`) is scattered to every worker once
(broadcast); each task names it, and the worker makes the step and the inputs from it once
per replay (`parallel_verdict.held_arguments`), from the dump at the client's path: the
workers share its filesystem, as triage's do without `--ship-files`. Tasks run in the
worker's thread under the client's `WORKBENCH_*` settings; a local cluster's workers are
this process's descendants, so their memory counts in `--memory-limit` here.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.replay.parallel_verdict import SharedStep, Task
from workbench.replay.processes.workers import Cancelled
from workbench.replay.steps import Evaluation
from workbench.replay.triage.dask_engine import DaskSettings, client_settings, cluster_client

if TYPE_CHECKING:
    from distributed import Client


def run_with_settings(function: Callable[..., Evaluation], shared: SharedStep, args: tuple,
                      environment: dict[str, str]) -> Evaluation:
    """`function(shared, *args)` on a worker, under the client's settings (a worker runs one
    task at a time: one thread)."""
    saved = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    try:
        return function(shared, *args)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class DaskWorkers:
    """The workers of a Dask cluster: the scheduler at `settings.scheduler`, or a local
    cluster of `settings.local_workers` processes, connected on creation."""

    def __init__(self, settings: DaskSettings) -> None:
        self._stack = contextlib.ExitStack()
        self.client: Client = self._stack.enter_context(cluster_client(settings))
        self.in_tree = settings.scheduler is None
        self.workers = max(1, sum(self.client.nthreads().values()))
        self._scattered: tuple[str, Any] | None = None  # the latest recipe's future

    def describe(self, at_once: int) -> str:
        return f"on {at_once} Dask worker{'s' if at_once > 1 else ''}"

    def run(self, shared: SharedStep, tasks: list[Task],
            done: Callable[[int, Evaluation], None], at_once: int,
            cancel: threading.Event | None, time_limit: float | None) -> None:
        """As `Executor.run`; a task runs in the worker's thread, which cannot be stopped:
        `time_limit` is not enforced here (a cancel abandons what runs)."""
        from distributed import as_completed

        if self._scattered is None or self._scattered[0] != shared.key:
            self._scattered = (shared.key, self.client.scatter(shared, broadcast=True,
                                                               hash=False))
        recipe = self._scattered[1]
        environment = client_settings()
        token = uuid.uuid4().hex[:12]
        waiting = deque(enumerate(tasks))
        indices: dict[Any, int] = {}
        pending = as_completed([], loop=self.client.loop)

        def submit() -> None:
            while waiting and len(indices) < at_once:
                index, (function, args) = waiting.popleft()
                future = self.client.submit(run_with_settings, function, recipe, args,
                                            environment, key=f"workbench-verdict-{token}-{index}",
                                            pure=False)
                indices[future] = index
                pending.add(future)

        try:
            submit()
            while not pending.is_empty():
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                batch = pending.next_batch(block=False)
                if not batch:
                    time.sleep(0.05)
                    continue
                for future in batch:
                    index = indices.pop(future)
                    try:
                        evaluation = future.result()
                    except Exception as error:  # KilledWorker and the like
                        evaluation = Evaluation("error", reason=f"{type(error).__name__}: "
                                                f"{error}")
                    done(index, evaluation)
                submit()
        except BaseException:
            with contextlib.suppress(Exception):
                self.client.cancel(list(indices), force=True)
            raise

    def release(self) -> None:
        """Nothing to give back here: a cluster's workers are its own (a local cluster's
        keep one replay's inputs, as long as the command runs)."""

    def close(self) -> None:
        self._scattered = None
        self._stack.close()
