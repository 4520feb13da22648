"""Run one program of `programs.py` (argv[1]) and save its output beside the dump (argv[2])."""

import sys
from pathlib import Path

import jax
import numpy as np
from programs import PROGRAMS

name, out = sys.argv[1], Path(sys.argv[2])
function, inputs = PROGRAMS[name]()
leaves = jax.tree_util.tree_leaves(function(*inputs))
for i, leaf in enumerate(leaves):
    np.save(out / f"{name}.out.{i}.npy", np.asarray(leaf))
for i, leaf in enumerate(jax.tree_util.tree_leaves(inputs)):
    np.save(out / f"{name}.in.{i}.npy", np.asarray(leaf))
