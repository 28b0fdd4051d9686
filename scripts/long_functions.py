#!/usr/bin/env python3
"""Lists functions of library code longer than LIMIT lines (default 80).

A review aid for the rule "no function over 80 lines in library code", not a
test. Braces are counted outside strings, character literals and comments;
a function body is a brace block opened at namespace or class scope by a line
that is not a namespace, class, struct, enum or union (nor an initializer).
Usage: scripts/long_functions.py [LIMIT]
"""
import glob
import re
import sys

LIBS = ["base", "trace", "hw", "collectives", "check", "replay", "cli",
        "models", "import", "report"]
SCOPE = re.compile(r"^\s*(namespace|class|struct|enum|union|extern)\b")


def strip(line, in_comment):
    out, i = [], 0
    while i < len(line):
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            i, in_comment = j + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        elif line[i] in "\"'":
            q, i = line[i], i + 1
            while i < len(line) and line[i] != q:
                i += 2 if line[i] == "\\" else 1
            i += 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_comment


def functions(path):
    stack, in_comment, sig = [], False, ""
    for n, raw in enumerate(open(path, encoding="utf-8"), 1):
        code, in_comment = strip(raw, in_comment)
        if not in_comment and code.lstrip().startswith("#"):
            continue  # preprocessor lines
        for ch in code:
            if ch == "{":
                scope = not stack or stack[-1][0] == "scope"
                kind = "other"
                if scope:
                    kind = "scope" if SCOPE.match(sig) or "=" in sig.split("(")[0] else "func"
                stack.append((kind, n, sig.strip()))
                sig = ""
            elif ch == "}":
                kind, start, name = stack.pop()
                if kind == "func":
                    yield n - start + 1, start, name
                sig = ""
            elif ch == ";" and (not stack or stack[-1][0] == "scope"):
                sig = ""
            elif not stack or stack[-1][0] == "scope":
                sig += ch
        if not stack or stack[-1][0] == "scope":
            sig += " "


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    rows = []
    for lib in LIBS:
        for path in sorted(glob.glob(f"{lib}/*.cc") + glob.glob(f"{lib}/*.h")):
            for length, start, name in functions(path):
                if length > limit:
                    rows.append((length, f"{path}:{start}", " ".join(name.split())[:70]))
    for length, place, name in sorted(rows, reverse=True):
        print(f"{length:4d} {place} {name}")


if __name__ == "__main__":
    main()
