"""Make the large real XLA dump the replay benchmark runs on (needs JAX).

It runs the small transformer training step of `tests/data/corpus/xla-large/program.py` with
XLA's dump flags, in a fresh folder under the user's cache directory (never in the
repository), and prints that folder. An existing complete dump is reused.

    python benchmarks/large_dump.py [--layers 4] [--out DIR] [--force]

With 4 layers the dump has about 2,600 files (77 MB); its largest module has about 6,000
HLO lines per pass.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROGRAM = REPO / "tests" / "data" / "corpus" / "xla-large" / "program.py"
XLA_FLAGS = ("--xla_dump_to=. --xla_dump_hlo_pass_re=.* --xla_dump_hlo_snapshots "
             "--xla_dump_hlo_as_text --xla_dump_hlo_as_proto")
COMPLETE = ".complete"  # written last: a folder without it is a dump cut short


class MissingJax(RuntimeError):
    """JAX is not installed, so the dump cannot be made here."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dump-triage-workbench"


def default_folder(layers: int) -> Path:
    return cache_root() / f"xla-large-{layers}-layers"


def make_dump(layers: int = 4, out: Path | None = None, force: bool = False) -> Path:
    """The dump folder, generated with JAX unless a complete one is already there."""
    folder = out or default_folder(layers)
    if (folder / COMPLETE).exists() and not force:
        return folder
    if importlib.util.find_spec("jax") is None:
        raise MissingJax(
            "JAX is not installed, so the large dump cannot be generated: install it with "
            "`pip install jax` (or `pip install '.[jax]'`), or pass an existing dump with "
            "--dump DIR")
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    environment = {**os.environ, "XLA_FLAGS": XLA_FLAGS, "JAX_PLATFORMS": "cpu"}
    try:
        subprocess.run([sys.executable, str(PROGRAM), str(layers)], cwd=work, check=True,
                       env=environment, stdout=subprocess.DEVNULL)
        shutil.copy(PROGRAM, work / "program.py")
        (work / COMPLETE).write_text(f"layers={layers}\n")
        if folder.exists():
            shutil.rmtree(folder)
        work.rename(folder)
    finally:
        if work.exists():
            shutil.rmtree(work)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--out", type=Path, help="folder to write (default: in the cache)")
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    args = parser.parse_args()
    try:
        folder = make_dump(args.layers, args.out, args.force)
    except MissingJax as error:
        print(f"large_dump: {error}", file=sys.stderr)
        return 3
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    print(f"{folder} ({files} files, {size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
