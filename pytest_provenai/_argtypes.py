"""argparse value types shared by the ``provenai`` command and its subcommand modules.

A module below both :mod:`pytest_provenai.cli` and :mod:`pytest_provenai.retrieval.cli`, so
neither imports the other for it (the top-level command imports the subcommands, never the
reverse).
"""

from __future__ import annotations

import argparse

__all__ = ["days", "positive_int"]


def positive_int(text: str) -> int:
    """A whole number >= 1; anything else is an ``argparse.ArgumentTypeError``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def days(text: str) -> float:
    """A finite number of days >= 0; anything else is an ``argparse.ArgumentTypeError``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of days, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of days >= 0, got {text!r}")
    return value + 0.0  # -0 reads as 0
