#!/usr/bin/env bash
# check_layers.sh: proves the library's layering from what was built.
#
#   tools/check_layers.sh BUILD_DIR
#
# 1. No loop between the library's source files. Each object file defines some
#    symbols and uses others (nm); "A uses a symbol that B defines" is an edge,
#    and tsort refuses a graph that has a loop. So a file that needs another
#    sits above it and never also below it.
# 2. The core never needs the harness: no object of labkit_core (or of its CUDA
#    part) uses a symbol that only the harness, labkit, defines.
set -euo pipefail
build=${1:?usage: check_layers.sh BUILD_DIR}
core=$build/common/core/liblabkit_core.a
harness=$build/common/harness/liblabkit.a
cuda=$build/common/core/liblabkit_cuda.a
[[ -f $cuda ]] || cuda=""
if [[ ! -f $core || ! -f $harness ]]; then
  echo "check_layers: liblabkit_core.a or liblabkit.a is not under $build (build it first)" >&2
  exit 2
fi
core_libs=("$core")
[[ -n $cuda ]] && core_libs+=("$cuda")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "symbol object" lines: what each object defines, and what it uses.
defined() { nm -A -P --defined-only "$@" 2>/dev/null | awk '$3 ~ /^[TDRBVW]$/ { sub(/.*\[/, "", $1); sub(/\]:$/, "", $1); print $2, $1 }' | sort -u; }
used() { nm -A -P --undefined-only "$@" 2>/dev/null | awk '{ sub(/.*\[/, "", $1); sub(/\]:$/, "", $1); print $2, $1 }' | sort -u; }

defined "${core_libs[@]}" "$harness" >"$tmp/defs"
used "${core_libs[@]}" "$harness" >"$tmp/uses"
# Edges "definer user" for every symbol; a file using its own symbols is no edge.
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $3, $2 }' | sort -u >"$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
  echo "check_layers: the library's files depend on each other in a loop:" >&2
  sed -e "s|^tsort: $tmp/edges: input contains a loop:|  a loop:|" -e "s/^tsort: /    /" "$tmp/loop" >&2
  exit 1
fi

defined "$harness" | awk '{ print $1 }' | sort -u >"$tmp/harness_defs"
defined "${core_libs[@]}" | awk '{ print $1 }' | sort -u >"$tmp/core_defs"
used "${core_libs[@]}" >"$tmp/core_uses"
bad=$(comm -23 "$tmp/harness_defs" "$tmp/core_defs" | join - "$tmp/core_uses" || true)
if [[ -n $bad ]]; then
  echo "check_layers: the core uses the harness (symbol, core file):" >&2
  printf '%s\n' "$bad" | sed 's/^/  /' >&2
  exit 1
fi
echo "check_layers: $(wc -l <"$tmp/edges") dependencies between $(awk '{print $2}' "$tmp/defs" | sort -u | wc -l) files of the library, no loop; the core needs nothing of the harness"
