#!/usr/bin/env bash
# Tuning time on the GPU, exhaustive against the default, for one bucket of
# specs/gemm.yaml (its task 2, bf16 nn 4096^3): bench/exhaustive_spec.sh on
# that task alone (fourth session's figures in bench/archive/RESULTS-2026.md).
#   bench/archive/exhaustive_one.sh OUTDIR [--budget D]
out=${1:?usage: bench/archive/exhaustive_one.sh OUTDIR [--budget D]}
shift
exec "$(dirname "$0")/../exhaustive_spec.sh" "$out" specs/gemm.yaml 2 -- "$@"
