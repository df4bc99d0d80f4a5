"""The generated backward nodes and Autograd kernels are a module on disk; importing writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ember.autograd  # noqa: F401
from ember.autograd import _codegen, _kernels


def test_generated_module_is_a_file_of_the_install() -> None:
    import ember.autograd._generated as gen

    # built with the wheel (hatch_build.py), for exactly these operators: no generation at import
    assert gen.__file__ is not None and gen.__file__.endswith(os.path.join("ember", "autograd", "_generated.py"))
    text = Path(gen.__file__).read_text()
    assert "def _k_mul_Tensor(ks, self, other):" in text
    assert "class MulBackward0(_Node):" in text
    assert gen.SOURCE == text
    assert ("mul.Tensor", "generated") in gen.PLAN
    assert gen.KERNELS["mul.Tensor"].__code__.co_filename == gen.__file__  # tracebacks point at the file


def test_generated_module_matches_the_generator() -> None:
    # what the build wrote is what the generator gives for the installed aten's operators
    import ember.autograd._generated as gen
    from ember.aten import _dispatch
    from ember.c10py import DispatchKey

    ops = {op.qualname: op for op in _dispatch.all_ops() if op.namespace == "aten"}
    backend = (DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.CompositeExplicitAutograd)
    backend_ops = {q for q, op in ops.items() if any(op.has_kernel_for(k) for k in backend)}
    schemas = {q: op.schema for q, op in ops.items()}
    import importlib.resources

    text = importlib.resources.files("ember.autograd").joinpath("derivatives.yaml").read_text()
    assert gen.FINGERPRINT == _codegen.fingerprint(text, schemas, backend_ops)
    assert gen.SOURCE == _codegen.generate(text, schemas, backend_ops)


def test_stale_module_is_regenerated_in_memory(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # another aten (other operators): the same source is generated again, in memory only
    import ember.autograd._generated as gen

    saved = sys.modules["ember.autograd._generated"]
    try:
        monkeypatch.setattr(gen, "FINGERPRINT", "stale")
        text = "- name: neg(Tensor self) -> Tensor\n  self: grad.neg()\n"
        mod = _kernels._load_generated(text, {"neg": "neg(Tensor self) -> Tensor"}, {"neg"})
        assert mod is not gen and mod.PLAN == [("neg", "generated")]
        assert "def _k_neg(ks, self):" in mod.SOURCE
    finally:
        sys.modules["ember.autograd._generated"] = saved


def test_import_writes_nothing_to_home(tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    code = (
        "import ember.aten as ea, ember.autograd\n"
        "x = ea.tensor([1.0, 2.0], requires_grad=True)\n"
        "(x * x).sum().backward()\n"
        "assert x.grad.tolist() == [2.0, 4.0]\n"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
