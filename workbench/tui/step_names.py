"""How the app names a step wherever it names one (diff titles, the culprit, the bisect bar,
the log): the timeline's row number, the pass, and for XLA the pass pipeline that ran it.

XLA runs passes of one name in several pipelines, and starts every pipeline with a
`pipeline-start` step: `0050.fusion.after_pipeline-start` is the start of the pipeline
`fusion`, so the pass alone ("pipeline-start") does not say which step it is.
"""

from __future__ import annotations

from workbench.model import Step


def pass_in_pipeline(step: Step) -> str:
    """`fusion in HLO_passes_after_layout_assignment`; the pass alone when the dump names no
    pipeline (MLIR, the endpoints)."""
    if step.xla_step is None or not step.pipeline:
        return step.pass_name
    return f"{step.pass_name} in {step.pipeline}"


def step_name(step: Step) -> str:
    """`#30 fusion in HLO_passes_after_layout_assignment`: the row the timeline shows it in
    (its `#` column), then its pass and pipeline."""
    return f"#{step.index} {pass_in_pipeline(step)}"
