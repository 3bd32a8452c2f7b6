#!/usr/bin/env bash
# The weaver's layers by its object files (tests/integration/layers.py): no cycle among the C files,
# every call down the layers.  Reads the sanitizer build's objects, which `make test` builds first.
source "$(dirname "$0")/../lib.sh"

check "the weaver's objects build" make -s -C "$LT_ROOT" build/san/libweaver.a || exit 1
python3 "$LT_ROOT/tests/integration/layers.py" "$LT_BUILD/san/obj" | tap_relay
done_testing
