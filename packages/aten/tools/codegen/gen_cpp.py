"""C++ side of the codegen: kernel declarations and their registrations.

For every (operator, dispatch key, C++ kernel) it emits a registration that wraps
the kernel in a pybind11 function, so the Python dispatcher can call it with the
operator's positional arguments. Registrations are sharded by the source file that
defines the kernel (Register_BinaryOps.cpp registers the kernels of
csrc/native/BinaryOps.cpp), so adding an op recompiles one shard.

Kernel signature rule (what a kernel author writes): the C++ kernel takes the
schema's arguments in order (Layout arguments dropped) and returns the schema's
return type with aliases stripped -- an in-place kernel returns `self`, an out
kernel returns its out tensors. A `structured_delegate: f.out` lets the functional
and in-place variants reuse the out kernel: the functional one passes undefined
outputs (the kernel allocates them), the in-place one passes `self` as the output.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from schema_model import Argument, FunctionSchema, NativeFunction, Type

BACKEND_KEYS = ("CPU", "CUDA")


def cpp_arg_type(t: Type) -> str:
    b = t.base
    if b == "Tensor":
        if t.is_list:
            return (
                "const std::vector<std::optional<at::Tensor>>&" if t.elem_optional else "const std::vector<at::Tensor>&"
            )
        return "const std::optional<at::Tensor>&" if t.optional else "const at::Tensor&"
    if b in ("int", "SymInt"):
        if t.is_list:
            return "const std::optional<c10::DimVector>&" if t.optional else "at::IntArrayRef"
        return "std::optional<int64_t>" if t.optional else "int64_t"
    if b == "float":
        if t.is_list:
            return "const std::optional<std::vector<double>>&" if t.optional else "const std::vector<double>&"
        return "std::optional<double>" if t.optional else "double"
    if b == "bool":
        if t.is_list:
            return "const std::vector<bool>&"
        return "std::optional<bool>" if t.optional else "bool"
    if b == "str":
        return "const std::optional<std::string>&" if t.optional else "const std::string&"
    if b == "Scalar":
        if t.is_list:
            return "const std::vector<at::Scalar>&"
        return "const std::optional<at::Scalar>&" if t.optional else "const at::Scalar&"
    if b == "ScalarType":
        return "std::optional<c10::ScalarType>" if t.optional else "c10::ScalarType"
    if b == "Device":
        return "std::optional<c10::Device>" if t.optional else "c10::Device"
    if b == "MemoryFormat":
        return "std::optional<at::MemoryFormat>" if t.optional else "at::MemoryFormat"
    if b == "Generator":
        return "const std::optional<at::Generator>&"
    if b == "Layout":
        return "const pybind11::object&"
    raise ValueError(f"no C++ type for {t}")


def cpp_return_type(schema: FunctionSchema) -> str:
    rets = schema.returns
    if not rets:
        return "void"

    def one(t: Type) -> str:
        if t.base == "Tensor":
            return "std::vector<at::Tensor>" if t.is_list else "at::Tensor"
        return (
            {
                "Scalar": "at::Scalar",
                "int": "int64_t",
                "SymInt": "int64_t",
                "float": "double",
                "bool": "bool",
                "ScalarType": "c10::ScalarType",
            }[t.base]
            if not t.is_list
            else {"int": "std::vector<int64_t>", "SymInt": "std::vector<int64_t>"}[t.base]
        )

    if len(rets) == 1:
        return one(rets[0].type)
    return "std::tuple<" + ", ".join(one(r.type) for r in rets) + ">"


def kernel_args(schema: FunctionSchema) -> list[Argument]:
    """Arguments the C++ kernel receives (Layout dropped)."""
    return [a for a in schema.arguments if a.type.base != "Layout"]


def kernel_declaration(schema: FunctionSchema, kernel: str) -> str:
    params = ", ".join(f"{cpp_arg_type(a.type)} {a.name}" for a in kernel_args(schema))
    return f"{cpp_return_type(schema)} {kernel}({params});"


# A kernel definition starts at column 0 with a return type: `Tensor add_out(`.
_DEF_RE = re.compile(r"^(?!return\b|static_assert\b|if\b|for\b|while\b)[A-Za-z_][\w:<>,\s\*&]*?[\s\*&](\w+)\s*\(", re.M)


def scan_kernel_sources(native_dir: Path) -> dict[str, tuple[str, int]]:
    """kernel name -> (source path relative to the package, 1-based line) of its definition."""
    found: dict[str, tuple[str, int]] = {}
    for path in sorted(native_dir.rglob("*")):
        if path.suffix not in (".cpp", ".cu") or "/cpu/" in path.as_posix():
            continue
        text = path.read_text()
        for m in _DEF_RE.finditer(text):
            name = m.group(1)
            # skip declarations (end with ';' before '{')
            rest = text[m.end() :]
            brace, semi = rest.find("{"), rest.find(";")
            if semi != -1 and (brace == -1 or semi < brace):
                continue
            line = text.count("\n", 0, m.start()) + 1
            found.setdefault(name, (path.relative_to(native_dir.parents[1]).as_posix(), line))
    return found


def _call_args(schema: FunctionSchema) -> list[str]:
    return [a.name for a in kernel_args(schema)]


def _lambda_params(schema: FunctionSchema) -> str:
    return ", ".join(f"{cpp_arg_type(a.type)} {a.name}" for a in schema.arguments)


def registration_for(f: NativeFunction, kernel: str, out_fn: NativeFunction | None) -> str:
    """The C++ lambda that is registered for f (calling `kernel`)."""
    s = f.schema
    params = _lambda_params(s)
    if out_fn is not None:
        # structured delegate: call the out kernel
        out_schema = out_fn.schema
        out_names = [a.name for a in out_schema.out_arguments]
        args = []
        mutated = [a.name for a in s.mutated_arguments]
        for a in kernel_args(out_schema):
            if a.name in out_names:
                if s.is_inplace:
                    args.append(mutated[0])
                else:
                    args.append("at::Tensor()")
            else:
                args.append(a.name)
        call = f"native::{kernel}({', '.join(args)})"
        if s.is_inplace:
            return f"[]({params}) {{ {call}; }}"
        return f"[]({params}) {{ return {call}; }}"
    call = f"native::{kernel}({', '.join(_call_args(s))})"
    if s.mutated_arguments and all(s.returns_alias_of_input):
        # in-place / out: Python returns the argument object itself
        return f"[]({params}) {{ {call}; }}"
    return f"[]({params}) {{ return {call}; }}"


def generate_cpp(
    functions: list[NativeFunction],
    sources: dict[str, tuple[str, int]],
    out_dir: Path,
    with_cuda: bool,
) -> dict[str, str]:
    """Writes Register_<Shard>.cpp files and RegisterAll.cpp; returns {file name: text}."""
    by_name = {f.qualname: f for f in functions}
    shards: dict[str, list[str]] = defaultdict(list)
    decls: dict[str, dict[str, str]] = defaultdict(dict)
    errors: list[str] = []

    for f in functions:
        out_fn = by_name[f.structured_delegate] if f.structured_delegate else None
        entries: list[tuple[str, str]] = []  # (key, kernel)
        if out_fn is not None:
            for key, kernel in out_fn.dispatch.items():
                if key in BACKEND_KEYS:
                    entries.append((key, kernel))
        else:
            for key, kernel in f.dispatch.items():
                if key in BACKEND_KEYS:
                    entries.append((key, kernel))
                elif key not in ("CompositeImplicitAutograd", "CompositeExplicitAutograd"):
                    errors.append(f"{f.qualname}: unknown dispatch key {key}")
        # one wrapper per distinct kernel, registered under each of its keys
        kernels: dict[str, list[str]] = defaultdict(list)
        for key, kernel in entries:
            kernels[kernel].append(key)
        for kernel, keys in kernels.items():
            if not with_cuda:
                keys = [k for k in keys if k != "CUDA"]
            if not keys:
                continue
            if kernel not in sources:
                errors.append(f"{f.qualname}: kernel {kernel} (for {', '.join(keys)}) is not defined in csrc/native/")
                continue
            src = sources[kernel][0]
            shard = Path(src).stem
            decl_schema = out_fn.schema if out_fn is not None else f.schema
            decls[shard][kernel] = kernel_declaration(decl_schema, kernel)
            lam = registration_for(f, kernel, out_fn)
            keys_list = "{" + ", ".join(f'"{k}"' for k in keys) + "}"
            shards[shard].append(
                f'  sink.add("aten::{f.qualname}", {keys_list}, "{kernel}", pybind11::cpp_function({lam}));'
            )

    if errors:
        raise SystemExit("native_functions.yaml:\n  " + "\n  ".join(errors))

    files: dict[str, str] = {}
    for shard in sorted(shards):
        lines = [
            "// Generated by tools/codegen/gen.py from native_functions.yaml. Do not edit.",
            "#include <ember/aten/python/casters.h>",
            "",
            "namespace ember::at::native {",
            *sorted(decls[shard].values()),
            "}  // namespace ember::at::native",
            "",
            "namespace ember::at::generated {",
            f"void register_{shard}(python::KernelSink& sink) {{",
            *shards[shard],
            "}",
            "}  // namespace ember::at::generated",
            "",
        ]
        files[f"Register_{shard}.cpp"] = "\n".join(lines)
    all_lines = [
        "// Generated by tools/codegen/gen.py. Do not edit.",
        "#include <ember/aten/python/casters.h>",
        "",
        "namespace ember::at::generated {",
        *[f"void register_{s}(python::KernelSink& sink);" for s in sorted(shards)],
        "void register_all(python::KernelSink& sink) {",
        *[f"  register_{s}(sink);" for s in sorted(shards)],
        "}",
        "}  // namespace ember::at::generated",
        "",
    ]
    files["RegisterAll.cpp"] = "\n".join(all_lines)
    return files
