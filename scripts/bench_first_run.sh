#!/usr/bin/env bash
# A fresh install's first run (BENCHMARKS.md, "A fresh install's first run"): `fastir eval`
# of the default measures on the MS MARCO dev shape (data/msmarco-dev.*, made by
# `./dev bench --case msmarco`) with an empty numba cache, no worker, each run started once
# the 1-minute load average is under 0.5, alternated over the checkouts given (each one's
# fastir put first on PYTHONPATH) and `binary`, the trec_eval binary on PATH.
# usage: scripts/bench_first_run.sh ROUNDS CHECKOUT|binary...
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/data/msmarco-dev.qrels R=$PWD/data/msmarco-dev.run
M='-m map -m recall.1000 -m recip_rank -m ndcg_cut.10 -m P.10'
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
quiet() { while awk '{exit !($1 > 0.5)}' /proc/loadavg; do sleep 5; done; }
rounds=$1; shift
for _ in $(seq "$rounds"); do
  for side in "$@"; do
    quiet
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    if [ "$side" = binary ]; then
      /usr/bin/time -f "binary: wall %e s, user %U s, load $load" trec_eval $M "$Q" "$R" >/dev/null
      continue
    fi
    rm -rf "${cache:?}"/*
    said=$( { /usr/bin/time -f "$side: wall %e s, user %U s, load $load" env FASTIR_WORKER=off \
      NUMBA_CACHE_DIR="$cache" PYTHONPATH="$(cd "$side" && pwd)" fastir eval "$Q" "$R" \
      >/dev/null; } 2>&1 )
    echo "$(tail -1 <<<"$said"); said: $(grep -o 'about [0-9-]* s' <<<"$said" || true)"
  done
done
