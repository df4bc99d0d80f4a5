"""cuBLAS settings (``torch.backends.cuda``).

``matmul.allow_tf32`` (default ``False``): float32 matrix products on CUDA may use
TF32 tensor cores (10-bit mantissa inputs, float32 accumulation): several times faster
on Ampere and later GPUs, about 1e-3 relative error.
``matmul.allow_fp16_reduced_precision_reduction`` /
``matmul.allow_bf16_reduced_precision_reduction`` (default ``True``): cuBLAS may use
reduced-precision reductions inside float16 / bfloat16 products.
"""

from __future__ import annotations

from ember.aten import _C

__all__ = ["cuBLASModule", "is_built", "matmul"]

# attribute -> (getter, setter, name in the type error)
_FLAGS = {
    "allow_tf32": (_C._get_cublas_allow_tf32, _C._set_cublas_allow_tf32, "set_allow_tf32_cublas"),
    "allow_fp16_reduced_precision_reduction": (
        _C._get_cublas_allow_fp16_reduced_precision_reduction,
        _C._set_cublas_allow_fp16_reduced_precision_reduction,
        "set_allow_fp16_reduced_precision_reduction",
    ),
    "allow_bf16_reduced_precision_reduction": (
        _C._get_cublas_allow_bf16_reduced_precision_reduction,
        _C._set_cublas_allow_bf16_reduced_precision_reduction,
        "set_allow_bf16_reduced_precision_reduction",
    ),
}


def is_built() -> bool:
    """Whether ember.aten was compiled with CUDA (not whether a GPU is present)."""
    return bool(_C._built_with_cuda)


class cuBLASModule:
    """The object behind ``ember.aten.backends.cuda.matmul``: reading or setting one of
    its flags reads or sets the process-wide C++ setting."""

    def __getattr__(self, name: str) -> bool:
        flag = _FLAGS.get(name)
        if flag is None:
            raise AttributeError("Unknown attribute " + name)
        return flag[0]()

    def __setattr__(self, name: str, value: object) -> None:
        flag = _FLAGS.get(name)
        if flag is None:
            raise AttributeError("Unknown attribute " + name)
        if not isinstance(value, bool):
            raise RuntimeError(f"{flag[2]} expects a bool, but got {type(value).__name__}")
        flag[1](value)

    def __dir__(self) -> list[str]:
        return sorted(_FLAGS)


matmul = cuBLASModule()
