#!/usr/bin/env bash
# The scale ladder's GPU rung in one shot (benchmarks/gpu_oneshot.py) on a CUDA machine, in two commands:
#
#   benchmarks/gpu_oneshot.sh --prepare     # here, before: copies into .gpu_carry/ (git-ignored, ~20 MB) what a
#                                           # bare GPU machine lacks: the CIFAR-10 archive, the pure-Python
#                                           # h5netcdf package, and the commit being run
#   benchmarks/gpu_oneshot.sh [OPTIONS]     # there: runs the script (8-minute budget): chapter 11's next rung
#                                           # (ResNet-9 width 64, else 32, on 45,000 images, SGD and Adam, 5 seeds)
#                                           # into results/gpu/11_scale_ladder; extra OPTIONS go to gpu_oneshot.py
#                                           # (e.g. --width 32 to continue a rung). Where $OUT is set (the device
#                                           # tool), results/gpu is also packed into $OUT/results-gpu.tar.gz
#
# With the device tool: run(command="bash benchmarks/gpu_oneshot.sh", carry=[".gpu_carry"], timeout_s=600).
# Then unpack the returned archive (tar -xzf results-gpu.tar.gz -C results) and commit results/gpu/.
# A second `timeout` stops the script 90 s after its budget in case its own clock fails; the script saves what
# finished either way.
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY=.gpu_carry

if [ "${1:-}" = "--prepare" ]; then
    mkdir -p "$CARRY/data" "$CARRY/pydeps"
    archive=""
    for candidate in "${INITMEM_DATA:-}" ../shared/data/cifar10-jpeg.tar.gz shared/data/cifar10-jpeg.tar.gz; do
        if [ -n "$candidate" ] && [ -f "$candidate" ]; then archive=$candidate; break; fi
    done
    if [ -z "$archive" ]; then echo "gpu_oneshot.sh: no CIFAR-10 archive found (set INITMEM_DATA)" >&2; exit 2; fi
    cp "$archive" "$CARRY/data/cifar10-jpeg.tar.gz"
    py="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}"
    h5=$("$py" -c 'import h5netcdf, os; print(os.path.dirname(h5netcdf.__file__))')
    rm -rf "$CARRY/pydeps/h5netcdf" && cp -r "$h5" "$CARRY/pydeps/h5netcdf"
    find "$CARRY/pydeps" -name __pycache__ -prune -exec rm -rf {} +
    (git rev-parse HEAD && git status --porcelain --untracked-files=no | grep -q . && echo dirty || true) \
        | paste -sd- > "$CARRY/COMMIT"
    du -sh "$CARRY"
    echo "prepared $CARRY (commit $(cat "$CARRY/COMMIT")); now run: bash benchmarks/gpu_oneshot.sh (carry $CARRY)"
    exit 0
fi

PYTHON="${PYTHON:-python3}"
export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}"
[ -d "$CARRY/pydeps" ] && export PYTHONPATH="$PYTHONPATH:$CARRY/pydeps"
[ -f "$CARRY/COMMIT" ] && export INITMEM_ONESHOT_COMMIT="$(cat "$CARRY/COMMIT")"
data_args=()
for candidate in "${INITMEM_DATA:-}" "$CARRY/data/cifar10-jpeg.tar.gz" ../shared/data/cifar10-jpeg.tar.gz \
                 shared/data/cifar10-jpeg.tar.gz; do
    if [ -n "$candidate" ] && [ -f "$candidate" ]; then data_args=(--data "$candidate"); break; fi
done
if [ ${#data_args[@]} -eq 0 ]; then
    echo "gpu_oneshot.sh: CIFAR-10 not found ($CARRY/data, ../shared/data, shared/data, \$INITMEM_DATA); run --prepare first" >&2
    exit 2
fi
export PYTHONUNBUFFERED=1
out=results/gpu
budget_min=8
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    [ "${args[$i]}" = "--budget-min" ] && budget_min="${args[$((i + 1))]}"
done
limit=$("$PYTHON" -c "print(int(float('$budget_min') * 60 + 90))")
set +e
timeout --signal=INT --kill-after=30 "$limit" "$PYTHON" benchmarks/gpu_oneshot.py --results-dir "$(dirname "$out")" \
    "${data_args[@]}" "$@"
code=$?
set -e
echo "gpu_oneshot.py exited with $code (0 complete, 3 stopped early with partial results saved); results in $out"
if [ -n "${OUT:-}" ] && [ -d "$out" ]; then
    # the device tool brings back at most 8 files: one archive of the folder, plus the summary and manifest to read
    tar -czf "$OUT/results-gpu.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
    cp "$out/summary.txt" "$out/oneshot.json" "$OUT/" 2>/dev/null || true
    echo "packed $out into \$OUT/results-gpu.tar.gz (unpack with: tar -xzf results-gpu.tar.gz -C results)"
fi
exit $code
