"""Replaying executions against the IR after each pass, and naming what breaks the result.

The package's layers, each importing only those below it (and `workbench.model`, `hlo_ir`,
`loader`, `formats`, `sources`; never `output/`, `commands/` or `tui/`):

- `errors.py`: the exceptions every layer raises (`Unsupported`, `EvaluationError`);
  `deadline.py`: the time a step's loops have to finish (`DidNotFinish`).
- `processes/`: worker processes that can be stopped, and the memory limit.
- `hlo/`, `mlir/`: the evaluators (numpy HLO, xDSL MLIR) and their f64 shadows.
- `judge/`: the judgment: a value against its reference within legal rounding (`compare`,
  `error_bound`, the rounding noise inside the reference: `noise/`), the outcome kinds, the
  platform's legal numerics (`gpu_numerics`).
- `backends.py`, `inputs.py`, `recorded_io.py`, `iree_runner.py`, `steps.py`, `bisect.py`:
  a replay of one execution over a module's steps, and the bisection naming the culprit pass;
  `progress.py`: which evaluation of a replay runs, its process tree's memory, time left;
  `parallel_verdict.py`: a verdict's independent evaluations side by side on workers.
  `spill.py`: the values a replay keeps, on disk when they would crowd the memory limit.
- `localize/`: from the culprit pass to the culprit instruction (or MLIR op).
- `reduce/`: the culprit cut down to a small module that still shows it.
- `triage/`: every execution of a dump, bisected in worker processes or on Dask, with the
  signed results cache; one verdict's evaluations on Dask (`dask_verdict.py`).
"""
