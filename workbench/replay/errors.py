"""Errors every evaluator raises, so the replay reports them the same way for any IR.

An evaluator never guesses: an op (or attribute, or custom-call target) it does not implement
raises `Unsupported` naming it, and that step's status is `unsupported: <name>`.
"""

from __future__ import annotations


class Unsupported(Exception):
    """The evaluator cannot do this op. `str()` is `unsupported: <what>`."""

    def __init__(self, what: str) -> None:
        super().__init__(f"unsupported: {what}")
        self.what = what


class EvaluationError(Exception):
    """The IR is well formed for the parser but cannot be evaluated (bad operands, shapes)."""


class MlirParseError(EvaluationError):
    """The printed MLIR could not be parsed; `str()` is the parser's message. Here, not beside
    the parser (`mlir/parse.py`), so that catching it does not import xDSL."""
