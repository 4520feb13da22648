"""Regenerate the committed `*_pb2.py` / `*_pb2.pyi` modules from the `.proto` files here.

Run after `pip install -e '.[protogen]'`:

    python workbench/protos/generate.py

Generated code refuses to import under a protobuf runtime older than the `protoc` that wrote
it, so the `protobuf>=` bound in pyproject.toml must be at least the version this prints.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def main() -> int:
    from grpc_tools import protoc

    include = Path(protoc.__file__).parent / "_proto"
    sources = sorted(str(path.relative_to(REPO)) for path in HERE.glob("*.proto"))
    # Proto paths relative to the repository root make the generated imports package-qualified
    # (`from workbench.protos import xla_data_pb2`).
    status = protoc.main(["protoc", f"-I{REPO}", f"-I{include}", f"--python_out={REPO}",
                          f"--pyi_out={REPO}", *sources])
    if status != 0:
        return status
    generated = (HERE / "hlo_pb2.py").read_text()
    version = re.search(r"Protobuf Python Version: (\S+)", generated)
    print(f"generated {len(sources)} modules; they need protobuf>="
          f"{version.group(1) if version else '?'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
