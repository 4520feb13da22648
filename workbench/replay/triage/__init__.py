"""Every execution of a dump bisected: the jobs (`job.py`), run in this machine's worker
processes or on Dask (`run.py`, `dask_engine.py`), and their signed results cache
(`results_cache.py`, `result_codec.py`). The top of the replay package: imports everything
below it, and nothing imports it but the commands and the app.
"""
