#!/usr/bin/env bash
# benchmarks/gpu_check.sh -- the GPU run of ember in one command (docs/cuda.md).
#
#   benchmarks/gpu_check.sh [OUT_DIR]          # default: gpu-check-out/
#   benchmarks/gpu_check.sh --prepare-wheels DIR   # on a machine with a package index
#
# On a machine with an NVIDIA GPU and nvcc, from the repository root:
#   1. checks that there is a GPU (nvidia-smi); without one it says so and exits 3
#      at once, before building anything;
#   2. builds every layer from this checkout with CUDA (EMBER_CUDA=ON) into wheels under
#      $EMBER_GPU_WORK (default build/gpu-check/) and installs them into a venv there
#      that also sees the packages of the Python it was made from;
#   3. writes the machine's and ember.aten.cuda's facts;
#   4. runs the CUDA test selection: tests/aten/cuda/, test_cuda_api.py,
#      test_cuda_coverage.py, and every test marked `cuda` in tests/{aten,c10py,autograd,nn,optim,data}
#      (the device-parametrised OpInfo tests among them);
#   5. runs the GPU benchmarks (bench.py workloads whose name contains "gpu", against
#      PyTorch on CUDA when that is installed).
# Everything goes under OUT_DIR, in at most six files: gpu_check.log (all of it),
# facts.txt, tests.log, bench.txt, bench.json, summary.txt. Exit status: 0 if every
# step passed, 1 if a step failed, 2 for a usage error, 3 when there is no GPU.
#
# Assumptions (the GPU machine has no network): the Python it uses ($EMBER_GPU_PYTHON,
# default python3; 3.11 or newer) already has numpy, pytest, pyyaml, ninja and cmake
# (pytest-xdist and pytest-timeout are used when present, torch for the comparison).
# What it lacks or has in another version comes from a local wheel directory
# ($EMBER_GPU_WHEELS, default .gpu-wheels/ in the repository root), installed with
# --no-index: scipy-openblas32, hatchling (+ trove-classifiers), pybind11==3.1.0,
# scikit-build-core>=1.1 (and nvidia-cublas if the toolkit has no cuBLAS headers). Make
# that directory beforehand, for the GPU machine's Python version, with
# `benchmarks/gpu_check.sh --prepare-wheels .gpu-wheels`.
# With EMBER_GPU_SKIP_BUILD=1 it uses the ember already installed in that Python.
#
# Settings (environment):
#   EMBER_CUDA_ARCHITECTURES  default 90-real (H100/H200); 80-real for an A100
#   EMBER_GPU_JOBS            compile jobs (default: all cores)
#   EMBER_GPU_TEST_WORKERS    pytest-xdist workers (default 8; 0: none)
#   EMBER_GPU_TEST_ARGS       extra pytest arguments (e.g. "-x" or "-k add")
#   EMBER_GPU_PY_VERSION      --prepare-wheels: the GPU machine's Python (default 3.12)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${EMBER_GPU_PYTHON:-python3}"
WHEELS="${EMBER_GPU_WHEELS:-$ROOT/.gpu-wheels}"

if [ "${1:-}" = "--prepare-wheels" ]; then
  dest="${2:?usage: gpu_check.sh --prepare-wheels DIR}"
  pyver="${EMBER_GPU_PY_VERSION:-3.12}"
  mkdir -p "$dest"
  exec "$PY" -m pip download --only-binary=:all: --python-version "$pyver" \
    --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --implementation cp \
    -d "$dest" scipy-openblas32 "hatchling>=1.25" trove-classifiers "pybind11==3.1.0" "scikit-build-core>=1.1,<2"
fi
case "${1:-}" in -h | --help) sed -n '2,40p' "$0"; exit 0 ;; -*) echo "unknown option $1" >&2; exit 2 ;; esac

OUT="$(mkdir -p "${1:-gpu-check-out}" && cd "${1:-gpu-check-out}" && pwd)"
WORK="${EMBER_GPU_WORK:-$ROOT/build/gpu-check}"
ARCHS="${EMBER_CUDA_ARCHITECTURES:-90-real}"
JOBS="${EMBER_GPU_JOBS:-$(nproc)}"
WORKERS="${EMBER_GPU_TEST_WORKERS:-8}"
exec > >(tee "$OUT/gpu_check.log") 2>&1
: >"$OUT/summary.txt"
status=0
step() { echo; echo "==== $* ($(date -u +%H:%M:%S))"; }
record() { # record NAME RC
  if [ "$2" -eq 0 ]; then echo "PASS $1" | tee -a "$OUT/summary.txt"; else
    echo "FAIL $1 (exit $2)" | tee -a "$OUT/summary.txt"; status=1; fi
}

# ---- 1. is there a GPU? (before anything heavy) ------------------------------------------
step "1. GPU"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >"$OUT/facts.txt" 2>&1; then
  echo "gpu_check: no NVIDIA GPU on this machine (nvidia-smi missing or failing): nothing to check." \
    | tee -a "$OUT/summary.txt"
  cat "$OUT/facts.txt" 2>/dev/null
  exit 3
fi
nvidia-smi | tee -a "$OUT/facts.txt"

# ---- 2. build and install ember with CUDA --------------------------------------------------
VENV="$WORK/venv"
if [ "${EMBER_GPU_SKIP_BUILD:-0}" = 1 ]; then
  step "2. build: skipped (EMBER_GPU_SKIP_BUILD=1), using $PY"
  VPY="$PY"
else
  step "2. build (CUDA archs $ARCHS, $JOBS jobs) into $WORK"
  mkdir -p "$WORK/wheels"
  rm -f "$WORK"/wheels/ember_*.whl
  if [ ! -x "$VENV/bin/python" ]; then
    # A venv that also sees $PY's packages, after its own. (--system-site-packages would not
    # do: when $PY is itself a venv's python, it exposes the base interpreter's packages.)
    "$PY" -m venv "$VENV" || { record "build: venv" 1; exit 1; }
    "$PY" -c "import site; print('import site; ' + '; '.join(f'site.addsitedir({p!r})' for p in site.getsitepackages()))" \
      >"$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/_ember_gpu_check_base.pth"
  fi
  VPY="$VENV/bin/python"
  # already satisfied by the system's packages: nothing to do; else from the local wheel folder
  PIPI=("$VPY" -m pip install -q --no-index)
  [ -d "$WHEELS" ] && PIPI+=(--find-links "$WHEELS")
  if ! "${PIPI[@]}" numpy pyyaml "pybind11==3.1.0" "scikit-build-core>=1.1,<2" scipy-openblas32 \
    "hatchling>=1.25"; then
    echo "gpu_check: build requirements missing and not in $WHEELS (make it with --prepare-wheels)"
    record "build: requirements" 1
    exit 1
  fi
  export EMBER_CUDA=ON CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
  build_rc=0
  for layer in c10py aten autograd data nn optim; do
    args=(-m pip wheel -q --no-build-isolation --no-deps -w "$WORK/wheels")
    case $layer in c10py | aten)
      args+=("-Cbuild-dir=$WORK/$layer" "-Ccmake.define.EMBER_CUDA=ON"
        "-Ccmake.define.EMBER_CUDA_ARCHITECTURES=$ARCHS") ;; esac
    t0=$SECONDS
    if ! "$VPY" "${args[@]}" "packages/$layer"; then build_rc=1; echo "gpu_check: building $layer failed"; break; fi
    echo "built $layer in $((SECONDS - t0)) s"
    # the next C++ layer compiles against this one
    "$VPY" -m pip install -q --no-index --no-deps --force-reinstall "$WORK"/wheels/ember_"$layer"-*.whl || build_rc=1
  done
  record "build" $build_rc
  [ $build_rc -eq 0 ] || exit 1
fi

# ---- 3. facts ---------------------------------------------------------------------------------
step "3. facts"
"$VPY" - >>"$OUT/facts.txt" 2>&1 <<'EOF'
import ember.aten as ea, ember.c10py as c10
cuda = ea.cuda
print("ember build:", c10.build_info(), "aten built with CUDA:", ea._C._built_with_cuda)
print("is_available:", cuda.is_available(), "device_count:", cuda.device_count())
if not cuda.is_available():
    print("availability_error:", c10.cuda.availability_error())
for i in range(cuda.device_count()):
    p = cuda.get_device_properties(i)
    print(f"cuda:{i}: {p.name}, capability {cuda.get_device_capability(i)}, {p.total_memory / 2**30:.1f} GiB, "
          f"{p.multi_processor_count} SMs")
missing = [n for n, has in ea._C._dispatch_stubs() if not has]
print(f"DispatchStubs without a CUDA kernel: {len(missing)}")
try:
    import torch
    print("torch:", torch.__version__, "cuda:", torch.cuda.is_available())
except ImportError:
    print("torch: not installed")
EOF
record "facts" $?
cat "$OUT/facts.txt"
"$VPY" -c "import ember.aten as ea, sys; sys.exit(0 if ea.cuda.is_available() else 1)" || {
  echo "gpu_check: ember.aten.cuda.is_available() is False although nvidia-smi sees a GPU (see facts.txt)"
  record "ember sees the GPU" 1; exit 1; }

# ---- 4. the CUDA tests ---------------------------------------------------------------------------
step "4. tests"
PYTEST=("$VPY" -m pytest -ra --import-mode=importlib -p no:cacheprovider)
if [ "$WORKERS" != 0 ] && "$VPY" -c "import xdist" 2>/dev/null; then PYTEST+=(-n "$WORKERS"); fi
if "$VPY" -c "import pytest_timeout" 2>/dev/null; then PYTEST+=(--timeout 600); fi
# shell words, quotes allowed: EMBER_GPU_TEST_ARGS='-x -k "add or mul"'
eval "EXTRA=(${EMBER_GPU_TEST_ARGS:-})"
run_tests() { # run_tests NAME ARGS...
  local name=$1; shift
  echo "---- $name: ${*}" | tee -a "$OUT/tests.log"
  "${PYTEST[@]}" "$@" "${EXTRA[@]}" 2>&1 | tee -a "$OUT/tests.log" | tail -n 25
  record "tests: $name" "${PIPESTATUS[0]}"
}
: >"$OUT/tests.log"
cuda_files=(tests/aten/test_cuda_api.py tests/aten/test_cuda_coverage.py)
[ -d tests/aten/cuda ] && cuda_files+=(tests/aten/cuda)
run_tests "aten CUDA files" "${cuda_files[@]}"
run_tests "aten -m cuda" tests/aten -m cuda --deselect tests/aten/test_cuda_api.py --deselect tests/aten/cuda
# c10py first: its CUDA tests check the runtime every other test goes through (caching
# allocator, streams, events, pinned memory).
for layer in c10py autograd nn optim data; do
  run_tests "$layer -m cuda" "tests/$layer" -m cuda # exit status 5: nothing marked cuda there
done
sed -i 's/^FAIL \(tests: [a-z0-9]* -m cuda\) (exit 5)$/PASS \1 (no cuda tests)/' "$OUT/summary.txt"
grep -q '^FAIL' "$OUT/summary.txt" && status=1 || status=0

# ---- 5. GPU benchmarks ------------------------------------------------------------------------------
step "5. benchmarks"
"$VPY" benchmarks/bench.py --only gpu --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.txt"
record "benchmarks" "${PIPESTATUS[0]}"

step "summary"
cat "$OUT/summary.txt"
echo "outputs in $OUT"
exit $status
