"""The attnfuse package's module structure, read from its source with `ast`
(nothing is imported): its modules import each other without a cycle, and
none takes a private (`_name`) name from another.

Every `import`/`from ... import` statement counts, at module level or inside
a function (a function-level import only delays a cycle, it does not remove
it). `from . import x` depends on the module `x` where the package has one,
else on the package itself (`x` is a name its `__init__` defines). A
submodule's implicit import of its parent package is not an edge: a
package whose `__init__` imports its submodules would otherwise always be
a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "attnfuse"


def module_files(root: Path = PACKAGE) -> dict:
    """Dotted module name -> source file, for every module of the package
    (a package's name for its `__init__.py`)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_package(modules: dict, name: str) -> bool:
    return modules[name].name == "__init__.py"


def _base(modules: dict, module: str, node: ast.ImportFrom):
    """The absolute module a `from ... import` statement reads from, or None
    when it is outside the package."""
    if node.level == 0:
        return node.module if node.module and (
            node.module.split(".")[0] == PACKAGE.name) else None
    package = module if _is_package(modules, module) else \
        module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports(modules: dict, module: str, tree: ast.AST):
    """(target module, imported name or None, line) of each import of a
    package module by `module`'s source."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE.name:
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = _base(modules, module, node)
            if base is None:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    yield sub, None, node.lineno
                else:
                    yield base, alias.name, node.lineno


def module_aliases(modules: dict, module: str, tree: ast.AST) -> dict:
    """Local name -> package module, for the names an import binds to a
    module (`from .. import mlir`, `import attnfuse.tools as tools`)."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE.name:
                    local = alias.asname or alias.name.split(".")[0]
                    bound[local] = alias.name if alias.asname else \
                        PACKAGE.name
        elif isinstance(node, ast.ImportFrom):
            base = _base(modules, module, node)
            for alias in node.names if base else ():
                if f"{base}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    return bound


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def import_graph(modules: dict):
    """(module -> set of modules it imports, list of private reach-ins as
    'module:line: target.name')."""
    graph, private = {}, []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        graph[module] = set()
        for target, name, line in imports(modules, module, tree):
            if target not in modules:
                private.append(f"{module}:{line}: {target} does not exist")
                continue
            if target != module:
                graph[module].add(target)
            if name and _private(name) and target != module:
                private.append(f"{module}:{line}: {target}.{name}")
        aliases = module_aliases(modules, module, tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and \
                    isinstance(node.value, ast.Name) and \
                    node.value.id in aliases and _private(node.attr) and \
                    aliases[node.value.id] != module:
                private.append(f"{module}:{node.lineno}: "
                               f"{aliases[node.value.id]}.{node.attr}")
    return graph, private


def cycles(graph: dict) -> list:
    """The strongly connected components with more than one module (or a
    module that imports itself), each sorted (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_graph_sees_the_package():
    modules = module_files()
    graph, _ = import_graph(modules)
    assert {"attnfuse", "attnfuse.exporter", "attnfuse.ops",
            "attnfuse.ops.attention", "attnfuse.mlir"} <= set(modules)
    # The reader finds relative imports at both levels, and function-level
    # ones.
    assert "attnfuse.mlir" in graph["attnfuse.ops.attention"]
    assert "attnfuse.ops.views" in graph["attnfuse.ops.attention"]
    assert "attnfuse.ops" in graph["attnfuse.exporter"]


def test_no_import_cycle():
    graph, _ = import_graph(module_files())
    found = cycles(graph)
    assert not found, "import cycles in the attnfuse package: " + "; ".join(
        " <-> ".join(c) for c in found)


def test_no_private_import():
    _, private = import_graph(module_files())
    assert not private, ("private names taken from another attnfuse "
                         "module:\n  " + "\n  ".join(private))


def test_checks_catch_what_they_look_for(tmp_path):
    """The checks themselves, on a small package with a cycle through a
    function-level import and a private import."""
    pkg = tmp_path / PACKAGE.name
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("def f():\n    from .sub import g\n")
    (pkg / "sub" / "__init__.py").write_text("from .c import g\n")
    (pkg / "sub" / "c.py").write_text(
        "from .. import a\nfrom ..b import _h\n\ndef g():\n    a._x\n")
    modules = module_files(pkg)
    graph, private = import_graph(modules)
    assert cycles(graph) == [[f"{pkg.name}.a", f"{pkg.name}.b",
                              f"{pkg.name}.sub", f"{pkg.name}.sub.c"]]
    assert private == [f"{pkg.name}.sub.c:2: {pkg.name}.b._h",
                       f"{pkg.name}.sub.c:5: {pkg.name}.a._x"]
