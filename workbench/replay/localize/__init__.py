"""From the culprit pass to the culprit instruction: the two steps around the pass evaluated
value by value and judged by the verdicts' rule (`localizer.py` says how).

`localizer.py` runs it; `match.py` pairs instructions of the two steps and `pair.py` works out
what holds whatever the inputs (settled values, what computes the same); `search.py` finds the
first departing value; `earlier_step.py` evaluates the earlier step in turns with the later;
`truth.py` and `regions.py` give each value its truth; `recorder.py` observes the evaluator;
`result.py` is what it finds; `text.py` ties it to the dump's text lines; `mlir.py` does the
same for MLIR steps; `partitioned.py` localizes the per-device steps of an SPMD-partitioned
module device by device; `culprit.py` picks the right one for a replay. Imports the replay core,
the judgment and the evaluators; nothing of `reduce/` or `triage/`.
"""
