#!/usr/bin/env bash
# Every fuzz target (fuzz/fuzz_targets.h) for FUZZ_CI_RUNS inputs each (default 8000, at most FUZZ_CI_SECONDS), one after the
# other, seeded from the corpus and fuzz/regress: a crash, a hang, a leak or a sanitizer report fails
# the suite, and the input is kept under build/fuzz/crash/ (fuzz/run.sh; docs/TESTING.md).
source "$(dirname "$0")/../lib.sh"

check "corpus builds" corpus_build || exit 1
# A fixed seed and run count make this suite repeatable: it tries the same inputs on every machine,
# so a new finding comes from a code change, not from chance.  `make fuzz` explores freely.
FUZZ_SEED=${FUZZ_SEED:-1} FUZZ_RUNS=${FUZZ_CI_RUNS:-8000} FUZZ_SECONDS=${FUZZ_CI_SECONDS:-120} bash "$LT_ROOT/fuzz/run.sh" | tap_relay
done_testing
