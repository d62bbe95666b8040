#!/usr/bin/env bash
# Proves the README's set-up commands share one build: after its build command, its run
# command compiles nothing. Reads both from README.md's "## Set up" block, runs the build,
# then asks cargo (`--message-format json`: one `compiler-artifact` record per unit, with
# `fresh`) what the run command would build, and fails naming every unit not fresh.
# A run command that starts a binary from target/ is checked as the build of that binary.
# Usage: scripts/check-shared-build.sh [README]   (README.md by default)
set -euo pipefail
cd "$(dirname "$0")/.."
readme=${1:-README.md}

block=$(awk '/^## Set up/{s=1} s&&/^```sh/{b=1;next} b&&/^```/{exit} b{print}' "$readme")
strip() { sed -e 's/[[:space:]]\{2,\}#.*$//' -e 's/[[:space:]]*$//'; }
build=$(printf '%s\n' "$block" | grep -E '^cargo build ' | head -n1 | strip)
run=$(printf '%s\n' "$block" | grep -E 'daemon' | head -n1 | strip)
[ -n "$build" ] || { echo "no \`cargo build\` line in $readme's Set up block" >&2; exit 2; }
[ -n "$run" ] || { echo "no daemon command in $readme's Set up block" >&2; exit 2; }
echo "build: $build"
echo "run:   $run"

# What the run command builds, as a `cargo build` command line.
case "$run" in
  "cargo run "*)
    check=${run#cargo run }
    check="cargo build ${check%% -- *}"
    ;;
  ./target/*)
    # A built binary: it is fresh if building the same set again compiles nothing.
    binary=${run%% *}
    check=$build
    ;;
  *) echo "cannot tell what \`$run\` builds" >&2; exit 2 ;;
esac

eval "$build"
if [ -n "${binary:-}" ] && [ ! -x "$binary" ]; then
  echo "after \`$build\`, $binary does not exist" >&2
  exit 1
fi
stale=$(eval "$check --message-format json" 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        record = json.loads(line)
    except ValueError:
        continue
    if record.get("reason") == "compiler-artifact" and not record.get("fresh", True):
        print(record["package_id"])
')
if [ -n "$stale" ]; then
  echo "after \`$build\`, \`$run\` compiles again:" >&2
  printf '  %s\n' $stale >&2
  exit 1
fi
echo "ok: after \`$build\`, \`$run\` compiles nothing"
