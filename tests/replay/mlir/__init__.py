"""Tests of the MLIR replay (workbench/replay/mlir)."""
