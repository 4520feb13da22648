"""The command raises its soft limit on open files to the hard one: a model-size replay maps
thousands of files from disk, each holding a descriptor."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import resource
from workbench.open_files import UNLIMITED_WANTED, allow_open_files

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
low = 64 if hard == resource.RLIM_INFINITY else min(64, hard)
resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
allow_open_files()
raised, kept = resource.getrlimit(resource.RLIMIT_NOFILE)
wanted = UNLIMITED_WANTED if hard == resource.RLIM_INFINITY else hard
print(raised == wanted, kept == hard)
"""


def test_the_soft_limit_on_open_files_is_raised_to_the_hard_one() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["True", "True"]
