"""The judgment of every verdict: a value against its reference, within the tolerance or
within legal rounding (the f64 truth's error bound, on perturbed inputs, widened by the
rounding noise, `noise/`), the outcome kinds, and what a platform may legally compute (TF32
dots).

Imports the evaluators (`replay.hlo`; the noise model evaluates the reference with its own
interpreter subclass) and the data model; nothing above.
"""
