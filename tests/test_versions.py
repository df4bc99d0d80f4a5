"""All ember packages share one version (VERSION) and pin each other to exactly it."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = (ROOT / "VERSION").read_text().strip()
PACKAGES = sorted(p.parent for p in (ROOT / "packages").glob("*/pyproject.toml"))


def _pyproject(pkg: Path) -> dict:
    return tomllib.loads((pkg / "pyproject.toml").read_text())


def test_version_file_is_a_release_number() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+([.+-]?\w+)*", VERSION), VERSION


def _nox_layers() -> list[str]:
    """The keys of LAYERS in noxfile.py (read from its text: nox is not installed here)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "LAYERS":
            assert isinstance(node.value, ast.Dict)
            return [ast.literal_eval(k) for k in node.value.keys if k is not None]
    raise AssertionError("noxfile.py has no LAYERS")


def test_every_layer_has_a_package() -> None:
    """Each package is a layer the sessions build, test and lint (LAYERS), and back."""
    names = {p.name for p in PACKAGES}
    layers = _nox_layers()
    assert names == set(layers), f"packages/ {sorted(names)} vs noxfile LAYERS {layers}"
    assert {"c10py", "aten", "autograd", "nn", "optim", "data"} <= names


def test_versions_come_from_the_version_file() -> None:
    for pkg in PACKAGES:
        project = _pyproject(pkg)["project"]
        assert project["name"] == f"ember-{pkg.name}"
        assert "version" not in project, f"{pkg.name} hard-codes its version"
        assert "version" in project.get("dynamic", []), pkg.name
        text = (pkg / "pyproject.toml").read_text()
        assert "../../VERSION" in text, f"{pkg.name} does not read ../../VERSION"


def test_ember_pins_are_exact_and_current() -> None:
    pin = re.compile(r"^(ember-[a-z0-9]+)\s*(==|>=|<=|~=|>|<|!=)?\s*([^\s;,]*)")
    seen = 0
    for pkg in PACKAGES:
        data = _pyproject(pkg)
        requirements = list(data["project"].get("dependencies", []))
        requirements += list(data["build-system"].get("requires", []))
        for extra in data["project"].get("optional-dependencies", {}).values():
            requirements += list(extra)
        for req in requirements:
            m = pin.match(req)
            if not m:
                continue
            seen += 1
            assert m.group(2) == "==" and m.group(3) == VERSION, f"{pkg.name}: {req!r} must pin exactly =={VERSION}"
    assert seen >= 5  # every layer above c10py depends on one below it


def test_dependencies_point_down_only() -> None:
    allowed = {
        "c10py": set(),
        "aten": {"c10py"},
        "autograd": {"aten"},
        "nn": {"autograd"},
        "optim": {"autograd", "nn"},  # nn only as the optional [swa] extra
        "data": {"aten"},
        "distributed": {"nn", "autograd"},
        "distributions": {"autograd"},
        "torch": {"aten", "autograd", "nn", "optim", "data", "distributions", "distributed"},  # the facade
        "fx": {"autograd", "nn", "optim"},
        "onnx": {"aten", "autograd", "nn", "fx"},
        "vision": {"aten", "nn", "data"},
    }
    for pkg in PACKAGES:
        data = _pyproject(pkg)
        reqs = list(data["project"].get("dependencies", []))
        for extra in data["project"].get("optional-dependencies", {}).values():
            reqs += list(extra)
        deps = {r.split("==")[0].removeprefix("ember-") for r in reqs if r.startswith("ember-")}
        assert deps <= allowed[pkg.name], f"{pkg.name} depends on {deps - allowed[pkg.name]}"


def test_no_namespace_init() -> None:
    # ember is a PEP 420 namespace package: nobody ships ember/__init__.py
    offenders = [p for p in (ROOT / "packages").glob("*/*/ember/__init__.py")]
    assert offenders == []


def test_installed_versions_match() -> None:
    from importlib import metadata

    for pkg in PACKAGES:
        try:
            installed = metadata.version(f"ember-{pkg.name}")
        except metadata.PackageNotFoundError:
            continue
        assert installed == VERSION, f"ember-{pkg.name} {installed} installed, VERSION says {VERSION}"


def test_every_layer_ships_py_typed() -> None:
    """PEP 561: each layer marks itself typed, so that mypy reads the annotations of an
    installed ember layer instead of taking its names as Any (the wheels are checked by
    `nox -s lint`)."""
    for pkg in PACKAGES:
        folders = [pkg / root / "ember" / pkg.name for root in ("src", "python")]
        folders = [f for f in folders if f.is_dir()]
        assert folders, f"{pkg.name}: no ember/{pkg.name} import folder under src/ or python/"
        assert (folders[0] / "py.typed").is_file(), f"{pkg.name}: {folders[0]}/py.typed is missing"


def test_ci_runs_the_readme_check_command() -> None:
    """.ci/run is the README's check command, and that command lints as well as tests."""
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "nox" in line]
    assert len(ci) == 1, ci
    assert ci[0] in (ROOT / "README.md").read_text(), f"README lacks CI's command {ci[0]!r}"
    sessions = ci[0].split("-s", 1)[1].split()
    assert "tests" in sessions and "lint" in sessions, ci[0]
