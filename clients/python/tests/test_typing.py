"""The package type-checks under ``mypy --strict`` (it ships ``py.typed``, so its users' mypy reads it)."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "src" / "vigil"


def test_the_package_passes_mypy_strict() -> None:
    if importlib.util.find_spec("mypy") is None:
        message = "mypy is not installed (Debian package python3-mypy)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir=/dev/null", str(PACKAGE)],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parents[1],
    )
    assert run.returncode == 0, run.stdout + run.stderr
