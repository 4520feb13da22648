"""Processes that run evaluations so that they can be stopped (a time limit, a cancel): this
machine's worker pool (`workers.py`), a Dask worker's child (`job_process.py`), and the
memory limit every evaluation is held to (`memory.py`). Imports only `replay.errors` and
`workbench.sizes`.
"""
