#!/usr/bin/env bash
# Train a preset's runs with the package of one frozen commit, into this checkout's results/ (resumable).
#
#   bash scripts/run_preset.sh PRESET COMMIT [preset_specs.py options: --only ENTRY,... --set EXPERIMENT.PARAM=JSON]
#
# Environment: WORKTREE (default ../initmem-frozen), RESULTS (default this checkout's results/: train elsewhere and
# copy the runs in once an experiment is complete, so the checkout's committed runs never mix commits), SPECS (a
# folder of specs written by preset_specs.py beforehand, e.g. to queue a job behind another: used instead of writing
# them at start), PYTHON.
#
# Every run of a preset must come from one commit with a clean tree (training is chaotic: code, memory layout or
# thread changes move results by points). This script keeps a git worktree at COMMIT (default ../initmem-frozen),
# writes the preset's sweep specs from THIS checkout's registry (scripts/preset_specs.py) and trains them with the
# worktree's package, so the run files record COMMIT while work on this checkout goes on. Finished runs are cached
# per run: rerun the same command after an interruption and only the missing runs train. Run it in the background:
#   nohup bash scripts/run_preset.sh cpu 534d4b2 > preset.log 2>&1 &
# To stop it: pkill -f run_preset.sh; pkill -f sweep_job.py. A commit older than the executors' parent watchdog
# (534d4b2 is one) leaves its pool workers training after that: pkill -f 'multiprocessing.spawn' as well (a run
# with checkpoints resumes from its last one next time, others start again).
set -euo pipefail
preset=${1:?usage: run_preset.sh PRESET COMMIT [--only ENTRY,...] [--set EXPERIMENT.PARAM=JSON ...]}
commit=${2:?usage: run_preset.sh PRESET COMMIT [--only ENTRY,...] [--set EXPERIMENT.PARAM=JSON ...]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
worktree=${WORKTREE:-$root/../initmem-frozen}
results=${RESULTS:-$root/results}
python=${PYTHON:-$root/.venv/bin/python}
if [ ! -d "$worktree" ]; then
  git -C "$root" worktree add --detach "$worktree" "$commit"
fi
[ "$(git -C "$worktree" rev-parse HEAD)" = "$(git -C "$root" rev-parse "$commit")" ] || {
  echo "error: $worktree is not at $commit" >&2; exit 2; }
[ -z "$(git -C "$worktree" status --porcelain --untracked-files=no -- src pyproject.toml)" ] || {
  echo "error: $worktree has local changes to the package; its runs would be recorded as dirty" >&2; exit 2; }
if [ -n "${SPECS:-}" ]; then
  specs=$SPECS
else
  specs=$(mktemp -d)
  PYTHONPATH="$root/src" "$python" "$root/scripts/preset_specs.py" "$preset" "$specs" "$@"
fi
cd "$worktree"  # the data search (../shared/data) and git_commit() look from here
for spec in "$specs"/*.json; do
  echo "=== $(date -u +%FT%TZ) $(basename "$spec")"
  PYTHONPATH="$worktree/src" "$python" "$root/scripts/sweep_job.py" "$spec" "$results" "$preset"
done
echo "=== $(date -u +%FT%TZ) all specs done"
