"""All ember packages share one version (VERSION) and pin each other to exactly it."""

from __future__ import annotations

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


def test_every_layer_has_a_package() -> None:
    names = {p.name for p in PACKAGES}
    assert names == {
        *("c10py", "aten", "autograd", "nn", "optim", "data", "distributed", "distributions", "torch", "fx", "onnx")
    }


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
        "torch": {"aten", "autograd", "nn", "optim", "data", "distributions"},  # the top layer (facade)
        "fx": {"autograd", "nn", "optim"},
        "onnx": {"aten", "autograd", "nn", "fx"},
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
