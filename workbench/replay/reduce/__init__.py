"""A culprit cut down to a small module that still shows it: the culprit instruction (or MLIR
op) on the values it read, written as a runnable reproducer (`hlo.py`, `mlir.py`), and the
whole-module delta reduction (`reduction.py`). Imports `localize/` and below.
"""
