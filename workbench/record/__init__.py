"""Record a program's compiled calls (arguments and results) where XLA writes no snapshot.

One or two lines in the user's program: `workbench.record.jax.record(fn)` wraps a JAX
function; `workbench.record.torch_xla.record_sync()`, in place of `torch_xla.sync()`, records
each PyTorch/XLA step. They write a recording folder (`formats/recording.py`: `.npy` files and
`recording.json`), by default `io/` inside the dump folder `--xla_dump_to` names, where
`triage`, `bisect` and the app find it as the modules' executions. Each imports its framework
only when called: the workbench itself needs neither.
"""
