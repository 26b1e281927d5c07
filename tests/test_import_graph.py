"""The package's layout: no import circle among its modules, and a root that holds only packages.

Every ``import`` and ``from ... import`` statement of every module is read with ``ast`` (those
inside functions and under ``TYPE_CHECKING`` too: a circle that only a lazy import closes is still
a circle), resolved to the package's own module it names, and the graph is searched for strongly
connected components. ``from conhex_zero.x import y`` is an arrow to ``conhex_zero.x.y`` when that
is a module and to ``conhex_zero.x`` when ``y`` is a name defined there.
"""

from __future__ import annotations

import ast
from pathlib import Path

import conhex_zero

PACKAGE = Path(conhex_zero.__file__).parent


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module under the package directory ``root`` (a package is
    named by its ``__init__.py``)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _own(name: str, known: dict[str, Path]) -> str | None:
    """The package's module that importing ``name`` runs: ``name`` itself, or its nearest parent
    that is a module (``a.b.NAME`` -> ``a.b``); None for other packages' modules."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports, anywhere in its file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: . is the module's own package, .. its parent ...
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from a.b import c``: the module a.b.c when there is one, else the name c of a.b
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names]
        else:
            continue
        targets.update(t for t in (_own(name, known) for name in names) if t is not None and t != module)
    return targets


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def test_no_import_cycle_among_the_package_modules():
    graph = import_graph(PACKAGE)
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300  # the whole package was read
    assert graph["conhex_zero.train.config_load"] >= {"conhex_zero.train.config", "conhex_zero.train.config_check"}
    found = cycles(graph)
    assert not found, "import circles among the package's modules:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_checker_finds_a_circle_closed_inside_a_function_and_reads_from_imports_right(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\nfrom pkg.sub.c import NAME\n")
    (pkg / "b.py").write_text("def later():\n    from pkg.a import something\n")
    (pkg / "sub" / "c.py").write_text("from .. import d\nNAME = 1\n")
    (pkg / "d.py").write_text("import json\nimport pkg.sub\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.b", "pkg.sub.c"}  # a module imported from its package; a name of a module
    assert graph["pkg.b"] == {"pkg.a"}  # the import inside a function counts
    assert graph["pkg.sub.c"] == {"pkg.d"}  # relative: .. is pkg
    assert graph["pkg.d"] == {"pkg.sub"}  # json is not the package's
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub.c import NAME\n")
    assert sorted(cycles(import_graph(pkg))) == [["pkg.a", "pkg.b"], ["pkg.d", "pkg.sub", "pkg.sub.c"]]


def test_the_package_root_holds_only_init_main_and_packages():
    loose = sorted(p.name for p in PACKAGE.iterdir()
                   if p.name not in ("__init__.py", "__main__.py", "__pycache__", "py.typed")
                   and not (p.is_dir() and (p / "__init__.py").is_file()))
    assert not loose, f"modules or files at the package root (each belongs in a package that names its role): {loose}"
