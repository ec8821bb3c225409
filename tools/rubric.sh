#!/usr/bin/env bash
# rubric.sh: every lab's rubric, the claims its check.c states, as the
# Markdown that docs/rubric.md holds between its two "rubric" markers, so that
# the rubric a course grades by is what `./lab check` verifies, and stays so.
#
#   tools/rubric.sh            print it
#   tools/rubric.sh --write    put it into docs/rubric.md
#   tools/rubric.sh --check    exit 1 if docs/rubric.md's is not the current one (kit.rubric)
#   tools/rubric.sh --catches  prove --check can fail: a copy with one claim changed differs
#
# Any lab present with a check.c is in it (a new lab too); a claim whose text
# is computed (%d, %s) shows "…" where the figure goes (tools/rubric.py).
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
command -v python3 >/dev/null || { echo "rubric.sh: needs python3" >&2; exit 77; }

begin='<!-- rubric: made by tools/rubric.sh -->'
end='<!-- end of the rubric -->'
doc=docs/rubric.md

# What the doc holds between the markers (awk: the markers hold slashes).
current() { awk -v begin="$begin" -v end="$end" '$0 == end { on = 0 } on { print } $0 == begin { on = 1 }' "$doc"; }

case ${1:-} in
  '') python3 tools/rubric.py . ;;
  --write)
    [[ -f $doc ]] || { echo "rubric.sh: $doc is missing" >&2; exit 1; }
    python3 tools/rubric.py . >"$doc.made"
    # The made text is read from a file: awk -v would take its backslashes (\|) as escapes.
    awk -v begin="$begin" -v end="$end" -v made="$doc.made" '
      $0 == begin { print; while ((getline line < made) > 0) print line; skip = 1; next }
      $0 == end { skip = 0 }
      !skip { print }' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
    rm -f "$doc.made"
    echo "rubric.sh: $doc written"
    ;;
  --check)
    if [[ "$(current)" != "$(python3 tools/rubric.py .)" ]]; then
      echo "rubric.sh: $doc is not the checks' current claims; run tools/rubric.sh --write" >&2
      diff <(current) <(python3 tools/rubric.py .) | head -20 >&2 || true
      exit 1
    fi
    echo "rubric.sh: $doc matches the checks' claims"
    ;;
  --catches)
    # A copy of the checks with one claim's text changed must not match the doc.
    copy=$(mktemp -d)
    trap 'rm -rf "$copy"' EXIT
    for d in labs/[0-9][0-9]_*/; do
      [[ -f $d/check.c ]] || continue
      mkdir -p "$copy/$d"
      cp "$d/check.c" "$copy/$d/"
      [[ -f $d/README.md ]] && head -1 "$d/README.md" >"$copy/$d/README.md"
    done
    # The first claim written in full (no figure filled in, no escaped |), changed in its check.c.
    claim=$(python3 tools/rubric.py "$copy" | sed -n 's/^| [0-9]* | \([^…\\]*\) | |$/\1/p' | awk 'NR == 1')
    [[ -n $claim ]] || { echo "rubric.sh: no claim to change" >&2; exit 1; }
    first=$(grep -l -F "\"$claim\"" "$copy"/labs/*/check.c | awk 'NR == 1')
    CLAIM=$claim perl -0pi -e 's/\Q"$ENV{CLAIM}"\E/"$ENV{CLAIM} (changed)"/' "$first"
    if [[ "$(current)" == "$(python3 tools/rubric.py "$copy")" ]]; then
      echo "rubric.sh: a changed claim in $(basename "$(dirname "$first")") went unnoticed" >&2
      exit 1
    fi
    echo "rubric.sh: a changed claim is caught"
    ;;
  *) echo "usage: tools/rubric.sh [--write | --check | --catches]" >&2; exit 2 ;;
esac
