"""The install path the README gives works today: ``pip install`` of this folder into a fresh
virtual environment, offline, then the README's quick start run by that environment's Python
(outside the checkout) against the real service."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Iterator

import pytest

from support import NodeProcess

HERE = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def venv() -> Iterator[pathlib.Path]:
    with tempfile.TemporaryDirectory(prefix="vigil-py-install-") as tmp:
        root = pathlib.Path(tmp)
        # A copy, so the build leaves nothing in the checkout.
        source = root / "vigil-python"
        shutil.copytree(HERE, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
        # Debian's setuptools is the build backend: the venv sees the system's packages.
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(root / "venv")], check=True)
        python = root / "venv" / "bin" / "python"
        install = subprocess.run(
            [str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation", "--quiet", str(source)],
            capture_output=True,
            text=True,
        )
        assert install.returncode == 0, install.stdout + install.stderr
        yield python


def quick_start() -> str:
    readme = (HERE / "README.md").read_text()
    section = readme[readme.index("## Quick start") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README has a quick start"
    return match.group(1)


def test_the_readme_quick_start_runs_from_a_fresh_venv(venv: pathlib.Path) -> None:
    service = NodeProcess("real-service.mjs", ["--plan", "free"])
    try:
        with tempfile.TemporaryDirectory() as cwd:
            run = subprocess.run(
                [str(venv), "-c", quick_start() + "\nprint(vigil.__file__)\n"],
                capture_output=True,
                text=True,
                cwd=cwd,
                env={**os.environ, "VIGIL_API_KEY": service.info["accounts"]["free"]["secret"], "VIGIL_BASE_URL": service.info["base"]},
                timeout=60,
            )
    finally:
        service.stop()
    assert run.returncode == 0, run.stderr
    outcome, location = run.stdout.strip().splitlines()
    assert outcome.startswith("accepted ") and int(outcome.split()[1]) >= 0
    assert "/venv/lib/" in location and "site-packages" in location, "the installed package ran, not the checkout"
