"""The package's imports run one way (docs: DESIGN.md, "No import circles"): read
from the source with ``ast``, the graph of jaxblitz's modules, core and compat
together, has no circle.

An edge is every ``import`` / ``from ... import`` of a jaxblitz module, at module
level or deferred inside a function, except under ``if TYPE_CHECKING:`` (never run).
``from package import name`` is an edge to ``package.name`` where that is a module,
else to ``package``. The package ``__init__`` that Python runs before a submodule is
not an edge of its own: only what the source names.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.parsing import parse

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jaxblitz"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {
    _module_name(p): p
    for p in sorted(PACKAGE.rglob("*.py"))
    if "__pycache__" not in p.parts
}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, outside ``if TYPE_CHECKING:`` bodies."""
    if isinstance(tree, ast.If) and _is_type_checking(tree.test):
        for node in tree.orelse:
            yield from _imports(node)
        return
    if isinstance(tree, ast.Import | ast.ImportFrom):
        yield tree
    for child in ast.iter_child_nodes(tree):
        yield from _imports(child)


def _targets(name: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The jaxblitz modules ``node`` (in module ``name``) imports."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in MODULES}
    base = node.module or ""
    if node.level:  # relative: from the importing module's package, up level - 1
        package = (
            name if MODULES[name].name == "__init__.py" else name.rsplit(".", 1)[0]
        )
        for _ in range(node.level - 1):
            package = package.rsplit(".", 1)[0]
        base = f"{package}.{base}" if base else package
    found = set()
    for alias in node.names:
        full = f"{base}.{alias.name}"
        if full in MODULES:
            found.add(full)
        elif base in MODULES:
            found.add(base)
    return found


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        tree = parse(path.read_text(), str(path))
        graph[name] = set().union(*(_targets(name, n) for n in _imports(tree)))
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (or one
    that imports itself), each sorted; Tarjan's algorithm, without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        found.append(sorted(component))
    return sorted(found)


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest cycle through the component's first module, for the message."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                return [*paths[node], start]
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start}")


def _describe(graph, found) -> str:
    return "; ".join(
        f"{len(c)} modules, e.g. {' -> '.join(one_cycle(graph, c))}" for c in found
    )


def _is_compat(name: str) -> bool:
    return name == "jaxblitz.compat" or name.startswith("jaxblitz.compat.")


def test_the_graph_reader_sees_deferred_imports_and_skips_type_checking_ones():
    graph = import_graph()
    assert "jaxblitz.nnx" in graph["jaxblitz.cli"]  # inside a function
    assert "jaxblitz.train" not in graph["jaxblitz.resources"]  # TYPE_CHECKING
    assert "jaxblitz.kernels" in graph["jaxblitz.resources"]
    assert "jaxblitz.compat.nn" in graph["jaxblitz.compat"]
    fake = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a"}}
    assert circles(fake) == [["a", "b", "c"], ["d"]]
    assert one_cycle(fake, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_the_core_never_imports_compat():
    graph = import_graph()
    core = [name for name in graph if not _is_compat(name)]
    assert not {(a, b) for a in core for b in graph[a] if _is_compat(b)}


def test_the_core_has_no_import_circle():
    graph = import_graph()
    found = [c for c in circles(graph) if not all(map(_is_compat, c))]
    assert not found, _describe(graph, found)


def test_compat_has_no_import_circle():
    graph = import_graph()
    found = [c for c in circles(graph) if any(map(_is_compat, c))]
    assert not found, _describe(graph, found)


def test_compat_lower_layers_never_import_the_facades():
    """The tensor, autograd, lazy, op and eager-speed modules sit under ``nn``,
    ``optim`` and the ``jaxblitz.compat`` facade, which they never import."""
    graph = import_graph()
    low = ("tensor", "autograd", "lazy", "ops", "_eager")
    high = ("jaxblitz.compat", "jaxblitz.compat.nn", "jaxblitz.compat.optim")
    lower = [
        m
        for m in graph
        if m.startswith("jaxblitz.compat.")
        and m.removeprefix("jaxblitz.compat.").startswith(low)
    ]
    assert len(lower) > 30
    wrong = {
        (m, t)
        for m in lower
        for t in graph[m]
        if t in high or t.startswith(("jaxblitz.compat.nn.", "jaxblitz.compat.optim."))
    }
    assert not wrong, sorted(wrong)
