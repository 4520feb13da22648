"""One reader per on-disk format; pure functions of files, no UI imports."""
