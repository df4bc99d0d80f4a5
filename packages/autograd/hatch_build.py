"""Build hook: generates ember/autograd/_generated.py (backward nodes and Autograd kernels) into the wheel.

The generator (src/ember/autograd/_codegen.py) reads this package's derivatives.yaml and
aten's operators, which it takes from ../aten/native_functions.yaml (schemas, and which
operators have a CPU / CompositeExplicitAutograd kernel -- exactly what ember.aten
registers at import). Nothing of ember is imported: both files are loaded by path.

    python packages/autograd/hatch_build.py OUT_DIR    # writes OUT_DIR/_generated.py to read

Built outside the monorepo (no native_functions.yaml beside it), the wheel ships without
the file, and ember.autograd generates the same source in memory at import.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ATEN = HERE.parent / "aten"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def aten_operators(yaml_path: Path, schema_mod: ModuleType) -> tuple[dict[str, str], set[str]]:
    """(qualname -> schema text, the qualnames with a backend kernel) from native_functions.yaml."""
    import yaml

    functions = schema_mod.parse_native_functions(yaml.safe_load(yaml_path.read_text()) or [])
    by_name = {f.qualname: f for f in functions}
    schemas: dict[str, str] = {}
    backend: set[str] = set()
    for f in functions:
        schemas[f.qualname] = f.schema.text
        # as tools/codegen: C++ kernels for CPU/CUDA (a structured delegate's), Python CompositeExplicitAutograd
        d = by_name[f.structured_delegate].dispatch if f.structured_delegate else f.dispatch
        if any(k in ("CPU", "CUDA") for k in d) or "CompositeExplicitAutograd" in f.dispatch:
            backend.add(f.qualname)
    return schemas, backend


def generate() -> str | None:
    yaml_path = ATEN / "native_functions.yaml"
    if not yaml_path.exists():
        return None
    saved = {k: sys.modules.get(k) for k in ("ember.aten._schema", "ember.aten.extension", "_ember_autograd_codegen")}
    try:
        schema_mod = _load("ember.aten._schema", ATEN / "python" / "ember" / "aten" / "_schema.py")
        # _codegen takes FunctionSchema from aten's extension API: give it that name alone
        sys.modules["ember.aten.extension"] = extension = ModuleType("ember.aten.extension")
        extension.FunctionSchema = schema_mod.FunctionSchema  # type: ignore[attr-defined]
        codegen = _load("_ember_autograd_codegen", HERE / "src" / "ember" / "autograd" / "_codegen.py")
        schemas, backend = aten_operators(yaml_path, schema_mod)
        derivatives = (HERE / "src" / "ember" / "autograd" / "derivatives.yaml").read_text()
        text: str = codegen.generate(derivatives, schemas, backend)
        return text
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script
    BuildHookInterface = object  # type: ignore[misc, assignment]


class CodegenHook(BuildHookInterface):  # type: ignore[misc, valid-type]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        import tempfile

        text = generate()
        if text is None:
            return
        self._tmp = tempfile.TemporaryDirectory(prefix="ember-autograd-codegen-")
        out = Path(self._tmp.name) / "_generated.py"
        out.write_text(text)
        build_data["force_include"][str(out)] = "ember/autograd/_generated.py"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    dest = Path(sys.argv[1] if len(sys.argv) > 1 else "build/generated/autograd")
    dest.mkdir(parents=True, exist_ok=True)
    src = generate()
    if src is None:
        raise SystemExit(f"no {ATEN / 'native_functions.yaml'}: run from the ember source tree")
    (dest / "_generated.py").write_text(src)
    print(f"wrote {dest / '_generated.py'} ({src.count(chr(10))} lines)")
