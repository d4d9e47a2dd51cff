"""Fetch vLLM's own tool-parser and reasoning-parser tests (setup time only; the tests never download).

vLLM's wheel ships no tests; its sdist on PyPI carries ``tests/tool_parsers/`` and ``tests/reasoning/``.
``pip download`` of the sdist would build its metadata, which needs torch and CUDA, so the file is found in
the registry's PEP 503 simple index instead, checked against the pinned sha256, and only those two folders
are unpacked, into ``<venv>/vllm-tests/<version>/tests/`` (git-ignored, never part of the repository). The
sdist itself is kept in ``<venv>/vllm-tests/`` too, so a second run downloads nothing.

    python tests_engines/fetch_vllm_tests.py <venv> [version sha256]
"""

from __future__ import annotations

import hashlib
import html.parser
import os
import shutil
import sys
import tarfile
import urllib.parse
import urllib.request
from pathlib import Path

VERSION = "0.33.0"
SHA256 = "f4c33c2503d52bb411146afa9618a4f48bed68912f617e6803ac8d76e4c74112"
INDEX = os.environ.get("VLLM_SDIST_INDEX", "https://pypi.org/simple/vllm/")
FOLDERS = ("tests/tool_parsers/", "tests/reasoning/",
           # the one helper module outside them that a tool-parser test imports (its MockTokenizer)
           "tests/parser/__init__.py", "tests/parser/engine/__init__.py", "tests/parser/engine/replay_harness.py")


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.extend(value for key, value in attrs if key == "href" and value)


def sdist_url(version: str) -> str:
    """The sdist's URL in the simple index (``vllm-<version>.tar.gz``), without its fragment."""
    with urllib.request.urlopen(INDEX, timeout=120) as page:
        links = _Links()
        links.feed(page.read().decode("utf-8"))
    wanted = f"vllm-{version}.tar.gz"
    for href in links.hrefs:
        url = urllib.parse.urljoin(INDEX, href)
        if urllib.parse.urlparse(url).path.endswith("/" + wanted):
            return url.split("#", 1)[0]
    raise SystemExit(f"{wanted} is not in {INDEX}")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(venv: Path, version: str = VERSION, sha256: str = SHA256) -> Path:
    """The unpacked ``tests`` folder of vLLM ``version`` under ``venv`` (downloaded once)."""
    home = venv / "vllm-tests"
    target = home / version
    done = target / ".complete"
    stamp = f"{sorted(FOLDERS)} from vllm-{version}.tar.gz sha256 {sha256}\n"
    if done.exists() and done.read_text() == stamp:
        return target / "tests"
    home.mkdir(parents=True, exist_ok=True)
    sdist = home / f"vllm-{version}.tar.gz"
    if not sdist.exists() or sha256_of(sdist) != sha256:
        part = sdist.with_suffix(".part")
        with urllib.request.urlopen(sdist_url(version), timeout=600) as response, part.open("wb") as out:
            shutil.copyfileobj(response, out)
        got = sha256_of(part)
        if got != sha256:
            part.unlink()
            raise SystemExit(f"vllm-{version}.tar.gz: sha256 {got}, expected {sha256}")
        part.rename(sdist)
    shutil.rmtree(target, ignore_errors=True)
    prefix = f"vllm-{version}/"
    with tarfile.open(sdist) as tar:
        members = []
        for member in tar.getmembers():
            inner = member.name[len(prefix):] if member.name.startswith(prefix) else ""
            if member.isfile() and inner.startswith(FOLDERS):
                member.name = inner
                members.append(member)
        tar.extractall(target, members=members, filter="data")
    if not members:
        raise SystemExit(f"vllm-{version}.tar.gz holds no {FOLDERS}")
    (target / "tests" / "__init__.py").touch()  # one package, as in vLLM's tree: ``tests.tool_parsers.utils``
    done.write_text(stamp)
    return target / "tests"


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 3):
        raise SystemExit(__doc__)
    print(fetch(Path(args[0]), *args[1:]))
