#!/usr/bin/env python3
"""The tree's structure, checked: check_rooms.py SOURCE_DIR BUILD_DIR.

A room is a top-level folder whose CMakeLists.txt makes one coldstart_*
library; the rooms it links (target_link_libraries) are the rooms below
it. This fails, naming every offender, when
  - the rooms' links form a circle;
  - a source file includes a header of a room its room does not link,
    directly or through the rooms below (a header of a room above, or of
    a room beside it);
  - the files include each other in a circle;
  - the files call each other in a circle: file A uses a symbol defined in
    B and B, directly or through others, one defined in A (read from the
    built libraries with nm, so only code that is linked counts);
  - a file has more than 800 lines;
  - MiB, KiB, GiB, cmp_double or now_ns is defined anywhere but
    base/units.h and base/units.c (in the rooms or in tests/).
"""
import os
import re
import subprocess
import sys

MAX_LINES = 800
SHARED = {
    "MiB": r"#\s*define\s+MiB\b",
    "KiB": r"#\s*define\s+KiB\b",
    "GiB": r"#\s*define\s+GiB\b",
    "cmp_double": r"^(static\s+)?(inline\s+)?int\s+cmp_double\s*\([^;]*$",
    "now_ns": r"^(static\s+)?(inline\s+)?uint64_t\s+now_ns\s*\([^;]*$",
}
UNITS = {"base/units.h", "base/units.c"}

problems = []


def problem(text):
    problems.append(text)


def read_rooms(src):
    """{room: (library, [linked libraries])} from each room's CMakeLists."""
    rooms = {}
    for room in sorted(os.listdir(src)):
        cm = os.path.join(src, room, "CMakeLists.txt")
        if room.startswith((".", "build")) or room in ("tests",) \
                or not os.path.isfile(cm):
            continue
        text = re.sub(r"#[^\n]*", "", open(cm).read())
        libs = re.findall(r"add_library\(\s*(coldstart_\w+)\s+STATIC", text)
        if not libs:
            continue
        links = set()
        for lib in libs:
            for m in re.finditer(r"target_link_libraries\(\s*%s\s+([^)]*)\)"
                                 % lib, text):
                links |= set(re.findall(r"coldstart_\w+", m.group(1)))
        rooms[room] = (set(libs), links - set(libs))
    return rooms


def room_graph(rooms):
    """room -> rooms it links directly."""
    owner = {lib: r for r, (libs, _) in rooms.items() for lib in libs}
    graph = {}
    for r, (_, links) in rooms.items():
        graph[r] = {owner[l] for l in links if l in owner} - {r}
    return graph


def circles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def closure(graph, r):
    seen, todo = set(), [r]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def sources(src, rooms):
    """Every .c and .h of the rooms, as paths relative to src."""
    out = []
    for room in rooms:
        for dirpath, _, files in os.walk(os.path.join(src, room)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, f), src))
    return sorted(out)


def check_shared(f, n, line):
    """A copy of what base/units.h defines, on line n of f."""
    for name, pattern in SHARED.items():
        if f not in UNITS and re.search(pattern, line):
            problem("%s:%d: defines %s (base/units.h has it)" % (f, n, name))


def check_includes(src, rooms, graph, files):
    headers = {}
    for f in files:
        if f.endswith(".h"):
            headers.setdefault(os.path.basename(f), []).append(f)
    below = {r: closure(graph, r) | {r} for r in rooms}
    edges = {}
    for f in files:
        room = f.split("/")[0]
        here = os.path.dirname(f)
        edges[f] = set()
        with open(os.path.join(src, f), errors="replace") as fh:
            lines = fh.readlines()
        if len(lines) > MAX_LINES:
            problem("%s: %d lines (at most %d)" % (f, len(lines), MAX_LINES))
        for n, line in enumerate(lines, 1):
            check_shared(f, n, line)
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            local = os.path.normpath(os.path.join(here, inc))
            if local in files:
                target = local
            else:
                cands = headers.get(os.path.basename(inc), [])
                cands = [c for c in cands if c.endswith(inc)]
                if not cands:
                    continue  # generated (skeletons, seccomp_bpf) or system
                if len(cands) > 1:
                    problem("%s:%d: \"%s\" names %s" % (f, n, inc,
                                                        " and ".join(cands)))
                    continue
                target = cands[0]
            edges[f].add(target)
            troom = target.split("/")[0]
            if troom not in below[room]:
                problem("%s:%d: includes %s, of %s/, which %s/ does not link"
                        % (f, n, target, troom, room))
    for c in circles(edges):
        problem("files include each other in a circle: " + " -> ".join(c))


def archives(build):
    out = []
    for dirpath, _, files in os.walk(build):
        if "/tests" in dirpath[len(build):] or "CMakeFiles" in dirpath:
            continue
        for f in files:
            if f.startswith("libcoldstart_") and f.endswith(".a"):
                out.append(os.path.join(dirpath, f))
    return sorted(out)


def check_calls(build, rooms):
    """File -> file references from the libraries' symbol tables."""
    defined, used = {}, {}
    for ar in archives(build):
        room = os.path.relpath(os.path.dirname(ar), build).split("/")[0]
        res = subprocess.run(["nm", "-A", ar], capture_output=True,
                             text=True, check=True)
        for line in res.stdout.splitlines():
            # lib.a:file.c.o:0000000000000000 T name  /  lib.a:file.c.o: U name
            m = re.match(r"[^:]+:([^:]+):\s*(?:[0-9a-f]+\s+)?([A-Za-z])\s+(\S+)$",
                         line)
            if not m:
                continue
            obj, kind, sym = m.groups()
            unit = room + "/" + re.sub(r"\.o$", "", obj)
            if kind == "U":
                used.setdefault(unit, set()).add(sym)
            elif kind.isupper():
                defined[sym] = unit
    edges = {}
    for unit, syms in used.items():
        edges[unit] = {defined[s] for s in syms if s in defined} - {unit}
    if not defined:
        problem("no coldstart library found under " + build)
    for c in circles(edges):
        problem("files call each other in a circle: " + " -> ".join(c))


def main():
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rooms = read_rooms(src)
    graph = room_graph(rooms)
    for c in circles(graph):
        problem("rooms link each other in a circle: " + " -> ".join(c))
    files = sources(src, rooms)
    check_includes(src, rooms, graph, files)
    for extra in ("tests",):
        for dirpath, _, fs in os.walk(os.path.join(src, extra)):
            for f in fs:
                if f.endswith((".c", ".h")):
                    p = os.path.join(dirpath, f)
                    rel = os.path.relpath(p, src)
                    with open(p, errors="replace") as fh:
                        lines = fh.readlines()
                    if len(lines) > MAX_LINES:
                        problem("%s: more than %d lines" % (rel, MAX_LINES))
                    for n, line in enumerate(lines, 1):
                        check_shared(rel, n, line)
    check_calls(build, rooms)
    for p in problems:
        print(p)
    print("%d rooms, %d files: %d problem(s)" % (len(rooms), len(files),
                                                 len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
