"""Make `jax_cpu/`: `program.py` run by real JAX on the CPU with per-pass dumps and no
snapshots, its calls recorded by `workbench.record.jax` into `jax_cpu/io/`.

    python tests/data/recorded/make.py    # a Python with jax, and the workbench on PYTHONPATH
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLAGS = "--xla_dump_hlo_pass_re=.* --xla_dump_hlo_as_text --xla_dump_hlo_as_proto"


def make(target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"--xla_dump_to={target} {FLAGS}")
    subprocess.run([sys.executable, str(HERE / "program.py")], env=env, check=True)


if __name__ == "__main__":
    make(HERE / "jax_cpu")
