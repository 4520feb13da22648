"""Long module names cut for tables.

TensorFlow names a module after the traced function and its whole config proto
(`a_inference_train_step_1509__XlaMustCompile_true_config_proto_…_.33`): at full length every
row of a table that shows it wraps over many lines. Tables show the head and the tail (where
the module's number is) around an ellipsis; `--json` and the app's detail keep the full name.
"""

from __future__ import annotations

NAME_LIMIT = 32  # characters of a module name a table shows
_TAIL = 12  # of which at the end


def short_name(name: str) -> str:
    """`name`, or its head and tail around `…` when longer than NAME_LIMIT."""
    if len(name) <= NAME_LIMIT:
        return name
    head = NAME_LIMIT - _TAIL - 1
    return f"{name[:head]}…{name[-_TAIL:]}"


def with_short_name(text: str, name: str) -> str:
    """`text` (a file name, a module key) with the module `name` in it shortened."""
    if len(name) <= NAME_LIMIT or not name:
        return text
    return text.replace(name, short_name(name))
