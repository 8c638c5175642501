#!/usr/bin/env python3
"""Fails when a function in luod/*.c or luod/shared/*.c is longer than 80 lines.

A function's length counts every line from the first line of its signature
to its closing brace, both included.  In the systemd style of these sources
a definition starts at column 0 with its return type (or name), its
signature ends in ") {", and its body ends at the first line that is
exactly "}".  Prints each function over the limit and exits 1, or exits 0.

ALLOWED names the functions (file:function) that may still be longer; each
is to be split, and then dropped from it: an allowed function that is no
longer over the limit, or no longer exists, fails the check too, so that the
list only ever shrinks.

    check-function-length.py [SOURCE_ROOT]       (default: the parent of tools/)
"""
import os
import re
import sys

MAX_LINES = 80

ALLOWED = {
}

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
dirs = ["luod", os.path.join("luod", "shared")]
# The name is the identifier right before the first "(" of the signature.
name_re = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
starts_definition = re.compile(r"^[A-Za-z_]")


def functions(path):
    """Yields (name, first line, length) of each function defined in path."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    i = 0
    while i < len(lines):
        if not starts_definition.match(lines[i]) or "(" not in lines[i]:
            i += 1
            continue
        # Collect the signature up to the line that ends in "{" (a
        # definition) or in ";" (a declaration, a statement).
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
            j += 1
        signature = " ".join(lines[i:j + 1])
        if j == len(lines) or not re.search(r"\)\s*\{$", signature.rstrip()) or "=" in signature:
            i = j + 1
            continue
        end = j + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        m = name_re.search(signature)
        yield m.group(1), i + 1, end - i + 1
        i = end + 1


too_long, seen = [], {}
for d in dirs:
    for f in sorted(os.listdir(os.path.join(root, d))):
        if not f.endswith(".c"):
            continue
        rel = os.path.join(d, f)
        for name, line, length in functions(os.path.join(root, rel)):
            key = f"{rel}:{name}"
            seen[key] = length
            if length > MAX_LINES and key not in ALLOWED:
                too_long.append(f"{rel}:{line}: {name}() is {length} lines (at most {MAX_LINES})")

stale = [f"{key} is allowed to be longer than {MAX_LINES} lines but is "
         + (f"{seen[key]} now" if key in seen else "gone")
         + ": drop it from ALLOWED in tools/check-function-length.py"
         for key in sorted(ALLOWED) if seen.get(key, 0) <= MAX_LINES]

for msg in too_long + stale:
    print(msg)
if too_long or stale:
    sys.exit(1)
print(f"no function over {MAX_LINES} lines ({len(seen)} functions, {len(ALLOWED)} allowed)")
