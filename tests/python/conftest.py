import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the installed CLI as a user would (same interpreter as the tests)."""
    return subprocess.run([sys.executable, "-m", "eventpath.cli", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=600)


@pytest.fixture
def cli():
    return run_cli
