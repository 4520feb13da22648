"""A folder only its owner can write, as ssh asks of `~/.ssh`: what the results cache needs
before it trusts a byte it reads back.

The folder must belong to the user and be writable by nobody else; each parent up to the
user's home folder (or `/`) must belong to the user or root and be writable by nobody else,
unless its sticky bit keeps others from renaming what they do not own (`/tmp`). A folder that
does not exist yet is made private (0700).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class UnsafeCacheFolder(Exception):
    """The folder, or a parent, can be written by another user; the message says which, why,
    and what to do."""


def _refuse(folder: Path, path: Path, why: str) -> UnsafeCacheFolder:
    fix = (f"chmod go-w {path}" if "writable" in why else "use a folder of your own")
    return UnsafeCacheFolder(
        f"the results cache folder {folder} is not used: {path} {why}, so another user could "
        f"plant or change its entries ({fix}, or choose another folder with --cache DIR)")


def check_private_folder(folder: Path) -> None:
    """Make `folder` if it is missing; raise `UnsafeCacheFolder` when another user could write
    it or replace it (see the module)."""
    user = os.geteuid()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        own = os.stat(folder)
    except OSError as error:
        raise UnsafeCacheFolder(f"the results cache folder {folder} cannot be made: "
                                f"{error.strerror}") from None
    if not stat.S_ISDIR(own.st_mode):
        raise _refuse(folder, folder, "is not a folder")
    if own.st_uid != user:
        raise _refuse(folder, folder, f"belongs to user {own.st_uid}, not to you ({user})")
    if own.st_mode & 0o022:
        raise _refuse(folder, folder, "is writable by its group or by everyone")
    home = Path.home().resolve()
    path = folder.resolve()
    while path != path.parent and path != home:
        path = path.parent
        info = os.stat(path)
        if info.st_uid not in (user, 0):
            raise _refuse(folder, path, f"belongs to user {info.st_uid}, not to you or root")
        if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            raise _refuse(folder, path, "is writable by its group or by everyone")
