"""Every ``python`` example in the README runs as written (each block after the ones before it)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 3, "README lost its examples"
    namespace: dict = {"__name__": "readme_example"}
    for n, block in enumerate(blocks):
        exec(compile(block, f"README.md python block {n + 1}", "exec"), namespace)
