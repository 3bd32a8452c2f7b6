#!/usr/bin/env python3
"""Writes a C source holding a file's bytes: the run-time template for the weaver's merger.

    embed.py IN OUT SYMBOL    OUT defines `const uint8_t SYMBOL[]` (IN's bytes) and `const size_t SYMBOL_len`

OUT is written to a temporary file beside it and renamed, so a failed run leaves no half source.
"""
import hashlib
import os
import sys


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    src, out, symbol = argv[1], argv[2], argv[3]
    with open(src, "rb") as f:
        data = f.read()
    lines = [
        f"/* {os.path.basename(out)} - generated from {src} by weaver/runtime/embed.py; do not edit.",
        f" * {len(data)} bytes, SHA-256 {hashlib.sha256(data).hexdigest()}. */",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        f"extern const uint8_t {symbol}[];",
        f"extern const size_t {symbol}_len;",
        "",
        f"const uint8_t {symbol}[{max(len(data), 1)}] = {{",
    ]
    for i in range(0, len(data), 16):
        lines.append("\t" + " ".join(f"0x{b:02x}," for b in data[i:i + 16]))
    lines += ["};", f"const size_t {symbol}_len = {len(data)};", ""]
    tmp = f"{out}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write("\n".join(lines))
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
