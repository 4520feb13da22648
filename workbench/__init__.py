"""Dump Triage Workbench: browse, diff and replay XLA and MLIR compiler dumps."""

__version__ = "0.1.0"
