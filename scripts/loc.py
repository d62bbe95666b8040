#!/usr/bin/env python3
"""Lines of code per Rust source file: lines that are neither blank nor comments, with
`#[cfg(test)]` items (a `mod tests { ... }`, a test-only function) left out.

    scripts/loc.py FILE|DIR...            every .rs file, largest first
    scripts/loc.py --over 600 crates apps the files over 600 lines of code; exit 1 if any

A `tests.rs` or `*_tests.rs` beside a module (`#[cfg(test)] mod tests;`) is test code as a whole and is
skipped, as are `tests/`, `benches/` and `examples/` directories and `target/`. The count is
by lines, not by a parse: a `{` or `}` inside a string in a test item can throw it off, which
is good enough for a size limit.
"""
import os
import sys

SKIP_DIRS = {"target", "tests", "benches", "examples", ".git"}


def loc(path):
    n = 0
    in_block = False  # inside /* ... */
    skip_depth = None  # brace depth of the #[cfg(test)] item being skipped
    after_cfg_test = False
    with open(path, encoding="utf-8") as f:
        for raw in f:
            s = raw.strip()
            if in_block:
                in_block = "*/" not in s
                continue
            if s.startswith("/*"):
                in_block = "*/" not in s
                continue
            if skip_depth is not None:
                skip_depth += s.count("{") - s.count("}")
                if skip_depth <= 0:
                    skip_depth = None
                continue
            if s == "#[cfg(test)]":
                after_cfg_test = True
                continue
            if after_cfg_test:
                if s.startswith("#[") or s.startswith("//") or not s:
                    continue
                after_cfg_test = False
                depth = s.count("{") - s.count("}")
                if depth > 0:
                    skip_depth = depth
                continue
            if not s or s.startswith("//"):
                continue
            n += 1
    return n


def files(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, names in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for name in sorted(names):
                if name.endswith(".rs") and not name.endswith("tests.rs"):
                    yield os.path.join(root, name)


def main(argv):
    over = None
    if len(argv) >= 2 and argv[0] == "--over":
        over = int(argv[1])
        argv = argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    counts = sorted(((loc(f), f) for f in files(argv)), reverse=True)
    if over is not None:
        counts = [(n, f) for n, f in counts if n > over]
    for n, f in counts:
        print(f"{n:6d}  {f}")
    return 1 if over is not None and counts else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
