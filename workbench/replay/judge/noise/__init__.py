"""Rounding noise inside a program: the reference evaluated with random rounding."""
