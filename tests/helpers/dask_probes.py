"""Functions the Dask tests run on workers (`client.run`): importable there by module name, as
the workers run with the repository's root on PYTHONPATH."""

from __future__ import annotations


def busy_job_processes() -> list[int]:
    """Process ids of this worker's job children that are not idle in its pool: a child still
    running a job."""
    import psutil

    from workbench.replay.triage import dask_engine

    idle = {child.process.pid for child in dask_engine._idle}
    return [child.pid for child in psutil.Process().children()
            if "workbench.replay.processes.job_process" in " ".join(child.cmdline())
            and child.pid not in idle]
