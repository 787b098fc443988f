#!/usr/bin/env bash
# The GPU check, in one command, on a machine with an NVIDIA GPU and CuPy (pip install 'gradcli[cuda]'):
#   1. CuPy and a GPU are there (else: a one-line message and exit 2);
#   2. the whole test suite with CUDA as the default device (ENGINE_TEST_DEVICE=cuda);
#   3. the GPU benchmarks (scripts/bench.py --device cuda mlp chain; against torch when it has CUDA);
#   4. a summary. Exit 0 when the suite passed, 1 when it did not (or the benchmarks failed).
# PYTHON=... picks the interpreter (default: python); extra arguments go to pytest.
set -u
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"

"$PYTHON" - <<'EOF' || exit 2
import sys

import engine

try:
    cupy = engine.backend.cuda_module()
except engine.backend.CudaUnavailable as exc:
    print(f"gpu_check: CUDA is unavailable: {exc}", file=sys.stderr)
    sys.exit(2)
try:
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
except Exception:  # the name is only informative
    name = "GPU 0"
print(f"gpu_check: CuPy {cupy.__version__}, {cupy.cuda.runtime.getDeviceCount()} GPU(s), cuda:0 is {name}")
EOF

logs="$(mktemp -d)"
echo "gpu_check: running the test suite on cuda (log: $logs/tests.log)"
ENGINE_TEST_DEVICE=cuda "$PYTHON" -m pytest -o addopts="" -q -p no:cacheprovider -rfE "$@" >"$logs/tests.log" 2>&1
tests_rc=$?
tail -n 25 "$logs/tests.log"

echo "gpu_check: GPU benchmarks (log: $logs/bench.log)"
"$PYTHON" scripts/bench.py --device cuda mlp chain >"$logs/bench.log" 2>&1
bench_rc=$?
cat "$logs/bench.log"

echo
echo "==================================== gpu_check summary ===================================="
echo "tests on cuda: $(grep -E '^[0-9]+ (passed|failed)|^=* ?[0-9]+ (passed|failed)' "$logs/tests.log" | tail -n 1 | tr -d '=')"
echo "  (xfailed: tests comparing CPU-only text, listed in tests/conftest.py CPU_TEXT_TESTS)"
grep -E '^(FAILED|ERROR) ' "$logs/tests.log" | head -n 20
echo "benchmarks (exit $bench_rc):"
grep -E ': .* (us/op|ms)' "$logs/bench.log" | sed 's/^/  /'
if [ "$tests_rc" -ne 0 ] || [ "$bench_rc" -ne 0 ]; then
    echo "gpu_check: FAILED (pytest exit $tests_rc, bench exit $bench_rc)"
    exit 1
fi
echo "gpu_check: OK"
