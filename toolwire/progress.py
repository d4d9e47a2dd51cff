"""The progress bar the file and evaluation runners (:mod:`toolwire.batch`, :mod:`toolwire.eval`) draw on stderr."""

from __future__ import annotations

import sys
from typing import Any, Callable


def progress_bar(progress: bool | None, unit: str, total: Callable[[], int | None] = lambda: None) -> Any:
    """A ``tqdm`` bar on stderr counting ``unit``, or None: when ``progress`` is False (None: when stderr is not a
    terminal), or when tqdm is not installed. ``total()``, the number of steps (None: unknown), is only asked
    for when there is a bar."""
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total(), unit=unit, file=sys.stderr, dynamic_ncols=True)


__all__ = ["progress_bar"]
