"""Replaying executions against the IR after each pass: evaluators, comparison, bisection."""
