#!/usr/bin/env python3
"""Checks that two JSON files say the same thing: same structure, same keys in
the same order, equal strings and integers, and every number of the OLD file
equal to the NEW file's number printed at the OLD file's precision (the
digits after its decimal point), rounded as printf rounds a double.
Usage: json_equal.py OLD NEW ... (pairs); exit 1 on the first difference."""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        # Keep each number's text, to know the precision it was printed at.
        return json.load(f, parse_float=lambda s: ("float", s),
                         parse_int=lambda s: ("int", s),
                         object_pairs_hook=lambda pairs: ("object", pairs))


def same(old, new, where):
    if isinstance(old, tuple) and old[0] == "object":
        if not (isinstance(new, tuple) and new[0] == "object"):
            return f"{where}: object vs {new!r}"
        ok, nk = [k for k, _ in old[1]], [k for k, _ in new[1]]
        if ok != nk:
            return f"{where}: keys {ok} vs {nk}"
        for (k, o), (_, n) in zip(old[1], new[1]):
            err = same(o, n, f"{where}.{k}")
            if err:
                return err
        return None
    if isinstance(old, tuple) and old[0] in ("float", "int"):
        if not (isinstance(new, tuple) and new[0] in ("float", "int")):
            return f"{where}: number {old[1]} vs {new!r}"
        if old[0] == "int":
            if new[0] != "int" or int(new[1]) != int(old[1]):
                return f"{where}: integer {old[1]} vs {new[1]}"
            return None
        digits = len(old[1].split(".")[1].split("e")[0].split("E")[0])
        printed = "%.*f" % (digits, float(new[1]))
        if printed != old[1] and not (float(old[1]) == 0 and float(printed) == 0):
            return f"{where}: {old[1]} vs {new[1]} (printed {printed})"
        return None
    if isinstance(old, list):
        if not isinstance(new, list) or len(old) != len(new):
            return f"{where}: list of {len(old)} vs {new!r:.80}"
        for i, (o, n) in enumerate(zip(old, new)):
            err = same(o, n, f"{where}[{i}]")
            if err:
                return err
        return None
    if old != new:
        return f"{where}: {old!r} vs {new!r}"
    return None


def main(args):
    bad = 0
    for old_path, new_path in zip(args[0::2], args[1::2]):
        err = same(load(old_path), load(new_path), "$")
        print(f"{'DIFFERENT' if err else 'equal'}: {old_path} {new_path}"
              + (f": {err}" if err else ""))
        bad += bool(err)
    print(f"{len(args) // 2 - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
