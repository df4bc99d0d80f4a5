"""How the layers' modules depend on each other, read from their sources (nothing is imported).

* A layer uses only another layer's public names: no import of, or attribute access to, an
  underscore module or name of another layer (``from ember.aten._tensor import ...``,
  ``ember.aten._dispatch.tls``, ``import ember.autograd._meta``). What the layers above aten
  need is in ``ember.aten.extension`` (docs/layer_api.md). Three kinds of underscore names are
  public by that module's documentation: the Tensor protocol attributes (its
  ``TENSOR_PROTOCOL``), operators whose PyTorch name begins with an underscore
  (``ember.aten._foreach_add_``: every name native_functions.yaml declares) and the generated
  dispatcher entries ``_call_<op>`` of ``ember.aten.extension.entries``.
* No two modules of one layer import each other in a cycle (imports run at module level:
  outside function bodies, outside ``if TYPE_CHECKING:``).
* An import inside a function body of a layer (of one of ember's modules) says why on its
  line or the line above: the deferred imports that used to hide import cycles are gone.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"

# Modules that exist only in a built package (compiled, or generated at build time), with the
# modules of their layer that they import (what the generators write at their top): nodes of
# the import graph, so that ``from . import _C`` is an import of a module.
BUILT_MODULES: dict[str, set[str]] = {
    "ember.c10py._C": set(),
    "ember.aten._C": set(),
    "ember.aten._generated": set(),
    # packages/aten/tools/codegen/gen.py
    "ember.aten._generated._ops": {"ember.aten._dispatch", "ember.aten._memory_format", "ember.aten._dtypes"},
    "ember.aten._generated._kernel_sources": set(),
    # packages/autograd/src/ember/autograd/_codegen.py
    "ember.autograd._generated": {"ember.autograd._kernels"},
    "ember.vision._C": set(),
}


def _layer_roots() -> dict[str, Path]:
    roots = {}
    for pkg in sorted(PACKAGES.iterdir()):
        for base in ("src", "python"):
            root = pkg / base / "ember" / pkg.name
            if root.is_dir():
                roots[pkg.name] = root
    return roots


LAYERS = _layer_roots()


def _module_name(layer: str, path: Path) -> str:
    rel = path.relative_to(LAYERS[layer]).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["ember", layer, *parts])


def _sources(layer: str) -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(LAYERS[layer].rglob("*.py")):
        yield _module_name(layer, path), path, ast.parse(path.read_text(), str(path))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _public_underscore_names() -> frozenset[str]:
    """The underscore names ember.aten.extension documents as public (see the module docstring)."""
    tree = ast.parse((LAYERS["aten"] / "extension.py").read_text())
    protocol: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "TENSOR_PROTOCOL" for t in node.targets
        ):
            protocol = {
                c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
    assert protocol, "ember.aten.extension defines TENSOR_PROTOCOL"
    yaml = (PACKAGES / "aten" / "native_functions.yaml").read_text()
    ops = set(re.findall(r"^- func: (\w+)", yaml, re.M))
    return frozenset(protocol | {o for o in ops if o.startswith("_")})


PUBLIC_UNDERSCORE = _public_underscore_names()
OPERATORS = frozenset(re.findall(r"^- func: (\w+)", (PACKAGES / "aten" / "native_functions.yaml").read_text(), re.M))


def _allowed(attr: str) -> bool:
    if attr in PUBLIC_UNDERSCORE:
        return True
    if attr.startswith("_call_"):
        # _call_<op>_<overload>: a generated entry of an operator native_functions.yaml declares
        rest = attr[len("_call_") :]
        return rest in OPERATORS or any(rest[:i] in OPERATORS for i, c in enumerate(rest) if c == "_")
    return False


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "ember" else None


def _private_uses(layer: str, path: Path, tree: ast.Module) -> Iterator[str]:
    """Imports of another layer's underscore modules / names, and underscore attributes read
    from a name that an import from another layer bound."""
    foreign: set[str] = set()  # local names bound to another layer's modules or objects
    where = path.relative_to(ROOT)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                other = _layer_of(alias.name)
                if other is None or other == layer:
                    continue
                if any(_is_private(p) for p in alias.name.split(".")[2:]):
                    yield f"{where}:{node.lineno}: import {alias.name}"
                foreign.add(alias.asname or "ember")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "ember":
                continue
            if len(parts) == 1:  # from ember import aten
                foreign.update(a.asname or a.name for a in node.names if a.name != layer)
                continue
            if parts[1] == layer:
                continue
            for alias in node.names:
                if any(_is_private(p) for p in parts[2:]) or (_is_private(alias.name) and not _allowed(alias.name)):
                    yield f"{where}:{node.lineno}: from {node.module} import {alias.name}"
                foreign.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in foreign and _is_private(node.attr):
                if not _allowed(node.attr):
                    yield f"{where}:{node.lineno}: {value.id}.{'.'.join(reversed(chain))}"
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            # getattr(ea, "_private")
            fn, target, name = node.func, node.args[0], node.args[1]
            if (
                isinstance(fn, ast.Name)
                and fn.id in ("getattr", "setattr", "hasattr")
                and isinstance(target, ast.Name)
                and target.id in foreign
                and isinstance(name, ast.Constant)
                and isinstance(name.value, str)
                and _is_private(name.value)
                and not _allowed(name.value)
            ):
                yield f"{where}:{node.lineno}: {fn.id}({target.id}, {name.value!r})"
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            # importlib.import_module("ember.aten._x")
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            arg = node.args[0].value
            if name == "import_module" and isinstance(arg, str):
                other = _layer_of(arg)
                if other not in (None, layer) and any(_is_private(p) for p in arg.split(".")[2:]):
                    yield f"{where}:{node.lineno}: import_module({arg!r})"


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layer_uses_only_public_names_of_other_layers(layer: str) -> None:
    found = [use for _, path, tree in _sources(layer) for use in _private_uses(layer, path, tree)]
    assert not found, f"ember.{layer} uses private names of other layers:\n" + "\n".join(found)


def test_the_checker_sees_private_uses() -> None:
    src = (
        "import ember.aten as ea\n"
        "import ember.autograd._meta\n"
        "from ember.aten._tensor import Tensor\n"
        "from ember.aten import _dispatch, Tensor as T\n"
        "from ember.aten.extension import entries as ops\n"
        "x = ea._dispatch.tls\n"
        "y = T._private_helper\n"
        "z = getattr(ea, '_secret')\n"
        "ok = (ea._foreach_add_, ops._call_add_Tensor, T._impl, ea.__version__)\n"
    )
    found = list(_private_uses("nn", ROOT / "packages" / "nn" / "x.py", ast.parse(src)))
    assert sorted(f.split(": ", 1)[1] for f in found) == sorted(
        [
            "import ember.autograd._meta",
            "from ember.aten._tensor import Tensor",
            "from ember.aten import _dispatch",
            "ea._dispatch",
            "T._private_helper",
            "getattr(ea, '_secret')",
        ]
    )


# ---------------------------------------------------------------------------
# import cycles
# ---------------------------------------------------------------------------


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id.lstrip("_") == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported: not in a function, not under TYPE_CHECKING."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _function_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> Iterator[str]:
    """The modules of `known` that an import statement makes `module` import."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in known:
                yield alias.name
        return
    source = _resolve(module, is_package, node)
    for alias in node.names:
        sub = f"{source}.{alias.name}"
        if sub in known:
            yield sub
        elif source in known:
            yield source


def _import_graph(layer: str) -> tuple[dict[str, set[str]], dict[str, Path]]:
    parsed = {name: (path, tree) for name, path, tree in _sources(layer)}
    known = set(parsed) | {m for m in BUILT_MODULES if _layer_of(m) == layer}
    graph: dict[str, set[str]] = {m: set(BUILT_MODULES.get(m, ())) for m in known}
    for name, (path, tree) in parsed.items():
        is_package = path.name == "__init__.py"
        for node in _module_level_imports(tree):
            graph[name].update(t for t in _targets(name, is_package, node, known) if t != name)
    return graph, {name: path for name, (path, _) in parsed.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_no_import_cycles_within_a_layer(layer: str) -> None:
    graph, _ = _import_graph(layer)
    cycles = _cycles(graph)
    assert not cycles, f"ember.{layer}: modules importing each other in a cycle: {cycles}"


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _ember_import(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] == "ember" for a in node.names)
    return _resolve(module, is_package, node).split(".")[0] == "ember"


def _justified(lines: list[str], lineno: int) -> bool:
    if "#" in lines[lineno - 1]:
        return True
    above = lines[lineno - 2].strip() if lineno >= 2 else ""
    return above.startswith("#")


# The methods of aten's Python Tensor class (_tensor.py) import _factories, _indexing and cuda
# when called (those modules stand on Tensor). The class is being replaced by a C type (the
# native-tensor work, ARCHITECTURE.md "One tensor object"), which takes these methods with it;
# until then its class body is left alone here.
PENDING = {"packages/aten/python/ember/aten/_tensor.py"}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_function_level_imports_say_why(layer: str) -> None:
    unexplained = []
    for name, path, tree in _sources(layer):
        if str(path.relative_to(ROOT)) in PENDING:
            continue
        lines = path.read_text().splitlines()
        for node in _function_level_imports(tree):
            if _ember_import(name, path.name == "__init__.py", node) and not _justified(lines, node.lineno):
                unexplained.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not unexplained, (
        f"ember.{layer}: imports inside functions without a comment saying why (move them to the top "
        "of the module, or say why they must wait):\n" + "\n".join(unexplained)
    )
