"""Make the PyTorch/XLA development set: real XLA CPU dumps written by torch_xla.

    PJRT_DEVICE=CPU python tests/data/producers/torch_xla/make.py OUT [PROGRAM ...]

Needs torch and torch_xla (the `torch-xla` extra: `pip install -e '.[torch-xla]'`); the default
tests do not. Each program (`mlp_sgd`, `encoder_bf16_adamw`, `conv_batchnorm_sgd`) runs two
training steps in a child process from an empty folder `OUT/<program>/` with the corpus's dump
flags (per-pass steps, text and proto) and `XLA_IR_DEBUG=1 XLA_HLO_DEBUG=1`, which make torch_xla
write each instruction's `op_type`, `op_name` (`aten__convolution_overrideable`) and
`source_file`/`source_line` metadata. torch_xla writes no HLO snapshot on the CPU client, so
replay uses `--fake-data` or recorded inputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

DUMP_FLAGS = ("--xla_dump_hlo_pass_re=.* --xla_dump_hlo_as_text --xla_dump_hlo_as_proto "
              "--xla_dump_hlo_snapshots")
PROGRAMS = ("mlp_sgd", "encoder_bf16_adamw", "conv_batchnorm_sgd")


def build(program: str, device: Any) -> tuple[Any, Any, Any, Any]:
    """The model (on `device`), its optimizer, the batch and the loss function of one program
    (seeded)."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    if program == "mlp_sgd":
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        batch = (torch.randn(8, 16), torch.randint(0, 4, (8,)))
        return model, optimizer, batch, nn.CrossEntropyLoss()
    if program == "encoder_bf16_adamw":
        model = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                           batch_first=True).to(device, torch.bfloat16)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        batch = (torch.randn(2, 8, 32).to(torch.bfloat16), torch.randn(2, 8, 32).to(torch.bfloat16))
        return model, optimizer, batch, nn.MSELoss()
    if program == "conv_batchnorm_sgd":
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        batch = (torch.randn(4, 3, 8, 8), torch.randint(0, 4, (4,)))
        return model, optimizer, batch, nn.CrossEntropyLoss()
    raise SystemExit(f"make.py: no program {program!r} (known: {', '.join(PROGRAMS)})")


def run(program: str) -> None:
    """Two training steps of `program` on the XLA device, in this process's folder."""
    import torch_xla

    model, optimizer, (inputs, target), loss_fn = build(program, torch_xla.device())
    inputs, target = inputs.to(torch_xla.device()), target.to(torch_xla.device())
    for _ in range(2):
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), target)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
    print(f"{program}: loss {loss.item():.4f}")


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "--run":
        run(sys.argv[2])
        return
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out = Path(sys.argv[1]).resolve()
    for program in sys.argv[2:] or PROGRAMS:
        folder = out / program
        folder.mkdir(parents=True, exist_ok=False)
        env = dict(os.environ, PJRT_DEVICE="CPU", XLA_IR_DEBUG="1", XLA_HLO_DEBUG="1",
                   XLA_FLAGS=f"--xla_dump_to={folder} {DUMP_FLAGS}")
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--run", program],
                       cwd=folder, env=env, check=True)


if __name__ == "__main__":
    main()
