#!/usr/bin/env bash
# Every fuzz target (fuzz/fuzz_targets.h) for FUZZ_CI_SECONDS seconds each (default 45), one after the
# other, seeded from the corpus and fuzz/regress: a crash, a hang, a leak or a sanitizer report fails
# the suite, and the input is kept under build/fuzz/crash/ (fuzz/run.sh; docs/TESTING.md).
source "$(dirname "$0")/../lib.sh"

check "corpus builds" corpus_build || exit 1
FUZZ_SECONDS=${FUZZ_CI_SECONDS:-45} bash "$LT_ROOT/fuzz/run.sh"
