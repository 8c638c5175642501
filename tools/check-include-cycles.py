#!/usr/bin/env python3
"""Fails when the modules of luod/ include each other in a cycle.

A module is a .c file; module A depends on module B when A.c (or a header
A.c includes, followed transitively) includes B.h and B.c exists in the same
directory tree (luod/ and luod/shared/).  Headers without a .c of their own
(types only, such as liveupdate-uapi.h) make no edge.  Prints each cycle
found and exits 1, or prints the module order and exits 0.

    check-include-cycles.py [SOURCE_ROOT]        (default: the parent of tools/)
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
dirs = [os.path.join(root, "luod"), os.path.join(root, "luod", "shared")]
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

files = {}
for d in dirs:
    for f in os.listdir(d):
        if f.endswith((".c", ".h")):
            files[f] = os.path.join(d, f)


def includes(name):
    with open(files[name], encoding="utf-8", errors="replace") as fh:
        return [i for i in inc.findall(fh.read()) if i in files]


# Program entry points (main) depend on everything and nothing depends on them.
programs = {"luod.c", "luoctl.c"}
modules = sorted(f for f in files if f.endswith(".c") and f not in programs)


def deps(mod):
    own = mod[:-2] + ".h"
    seen, todo, out = set(), [mod], set()
    while todo:
        cur = todo.pop()
        for h in includes(cur):
            if h == own or h in seen:
                continue
            seen.add(h)
            c = h[:-2] + ".c"
            if c in files and c not in programs:
                out.add(c)          # stop here: that module's own deps are its edges
            else:
                todo.append(h)      # a types-only header: follow what it includes
    out.discard(mod)
    return out


graph = {m: deps(m) for m in modules}
WHITE, GREY, BLACK = 0, 1, 2
colour = {m: WHITE for m in modules}
stack, cycles, order = [], [], []


def visit(m):
    colour[m] = GREY
    stack.append(m)
    for d in sorted(graph[m]):
        if colour[d] == GREY:
            cycles.append(stack[stack.index(d):] + [d])
        elif colour[d] == WHITE:
            visit(d)
    stack.pop()
    colour[m] = BLACK
    order.append(m)


for m in modules:
    if colour[m] == WHITE:
        visit(m)
if cycles:
    for c in cycles:
        print("include cycle: " + " -> ".join(c))
    sys.exit(1)
print("no include cycle among %d modules; order: %s" % (len(modules), " ".join(order)))
