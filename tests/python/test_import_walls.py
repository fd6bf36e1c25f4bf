"""The Python package's import walls (issue 27): no module of ``eventpath`` imports, directly or
through others, a module that imports it back; ``calibrate`` and ``reproduce`` import each other
in one direction only; the experiments cannot see the published values they are compared with.

Imports are read from the source with ``ast`` (those inside functions count as well); a module's
implicit import of its parent package is not an edge. The compiled ``_eventpath`` is a leaf."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "python" / "eventpath"


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = ["eventpath", *p.relative_to(PKG).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        deps = set()
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from .x import y
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    deps.add(sub if sub in mods or sub.endswith("._eventpath") else base)
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        n = todo.pop()
        if n == goal:
            return True
        if n not in seen:
            seen.add(n)
            todo += graph.get(n, ())
    return False


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a list of modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for d in sorted(graph[n]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def _collapsed(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """``graph`` with ``package`` and its submodules as one node."""
    name = lambda m: package if m == package or m.startswith(package + ".") else m  # noqa: E731
    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(name(m), set()).update(name(d) for d in deps if name(d) != name(m))
    return out


def test_the_graph_sees_the_imports_it_should():
    g = _graph()
    assert "eventpath.api" in g["eventpath.qos"]
    assert "eventpath.reproduce.simulate" in g["eventpath.reproduce.es2"]
    assert "eventpath.reproduce" in g["eventpath.calibrate"]  # a lazy import inside a function counts
    assert not any(d.endswith("_eventpath") for deps in g.values() for d in deps)


def test_the_module_graph_has_no_cycle():
    assert _cycle(_graph()) is None, f"import cycle: {' -> '.join(_cycle(_graph()))}"


def test_the_package_graph_has_no_cycle_with_reproduce_as_one_node():
    g = _collapsed(_graph(), "eventpath.reproduce")
    assert _cycle(g) is None, f"import cycle: {' -> '.join(_cycle(g))}"


def test_calibrate_imports_reproduce_and_never_the_other_way():
    g = _graph()
    assert _reaches(g, "eventpath.calibrate", "eventpath.reproduce")
    for m in g:
        if m == "eventpath.reproduce" or m.startswith("eventpath.reproduce."):
            assert not _reaches(g, m, "eventpath.calibrate"), f"{m} reaches eventpath.calibrate"
    # Both read the targets from their own module, which imports neither.
    assert "eventpath.targets" in g["eventpath.calibrate"] and "eventpath.targets" in g["eventpath.reproduce"]
    assert not _reaches(g, "eventpath.targets", "eventpath.reproduce")


def test_experiments_cannot_see_the_published_values():
    """An experiment module returns simulated values only: it imports neither the published
    data nor the comparison framework that holds them beside the rows."""
    g = _graph()
    for m in ("es2", "es2_multi", "elvis", "did"):
        mod = f"eventpath.reproduce.{m}"
        for wall in ("eventpath.reproduce.published", "eventpath.comparison"):
            assert wall not in g[mod], f"{mod} imports {wall}"
