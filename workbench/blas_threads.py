"""One BLAS thread per process unless the user chose otherwise.

The HLO evaluator calls BLAS for many dots of a few MFLOP each, and triage runs one worker per
core: OpenBLAS's own threads then spin against each other and against the other workers. On a
2-core machine with other work running, one evaluation of a GPT-style training step took 1.6 to
3.3 s with OpenBLAS's default threads and 0.5 s with one (`benchmarks/eval_vs_xla.py`). The
libraries read these variables when they are loaded, so this runs before numpy is imported.
"""

from __future__ import annotations

import os

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread_unless_set() -> None:
    """Set each BLAS thread-count variable to 1 where the environment does not name one."""
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
