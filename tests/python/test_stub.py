"""The .pyi stub lists exactly what the compiled module exports."""

import ast
from pathlib import Path

from eventpath import _eventpath

STUB = Path(__file__).resolve().parents[2] / "python/eventpath/_eventpath.pyi"


def test_stub_matches_module():
    tree = ast.parse(STUB.read_text())
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    exported = {n for n in dir(_eventpath) if not n.startswith("_")}
    assert stubbed == exported, f"only in stub: {stubbed - exported}; only in module: {exported - stubbed}"
