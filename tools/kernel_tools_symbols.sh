#!/usr/bin/env bash
# kernel_tools_symbols.sh OBJECT ARCHIVE: every __tsan_* and __sanitizer_*
# symbol that an object compiled for the kernel tools needs (nm -u OBJECT) is
# defined in ARCHIVE (the kit's core): the program links without libtsan, whose
# place the kit's own callbacks take (common/core/src/sim/ktools.c). Run by
# CTest with common/tests/kernel_tools_probe.c, which uses every kind of access.
set -euo pipefail
(($# == 2)) || { echo "usage: $0 OBJECT ARCHIVE" >&2; exit 2; }
needed=$(nm -u "$1" | awk '{print $2}' | grep -E '^__(tsan|sanitizer)_' | sort -u)
defined=$(nm --defined-only "$2" 2>/dev/null | awk 'NF == 3 && $2 == "T" {print $3}' | sort -u)
[[ -n $needed ]] || { echo "kernel_tools_symbols: $1 needs no __tsan_ symbol: was it compiled with -fsanitize=thread?" >&2; exit 1; }
missing=$(comm -23 <(printf '%s\n' "$needed") <(printf '%s\n' "$defined"))
if [[ -n $missing ]]; then
  echo "kernel_tools_symbols: the instrumentation calls these, which the kit does not define:" >&2
  printf '  %s\n' $missing >&2
  exit 1
fi
echo "kernel_tools_symbols: all $(wc -l <<<"$needed") callbacks an instrumented kernel needs are defined"
