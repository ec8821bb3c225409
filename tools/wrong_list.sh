#!/usr/bin/env bash
# wrong_list.sh: the known-wrong versions of every lab, as the Markdown list
# that labs/README.md holds between its two "wrong versions" markers.
#
#   tools/wrong_list.sh            print the list
#   tools/wrong_list.sh --write    put it into labs/README.md
#   tools/wrong_list.sh --check    exit 1 if labs/README.md's list is not the current one
#
# Each solutions/NN_name/wrong/<mistake>.patch starts with "# mistake:",
# "# catches:" and optionally "# devices:" lines (labs/README.md, the template).
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

begin='<!-- known-wrong versions: made by tools/wrong_list.sh -->'
end='<!-- end of the known-wrong versions -->'

field() { sed -n "s/^# $1: *//p" "$2" | head -n1 | sed 's/|/\\|/g'; }

list() {
  local lab patch devices
  for lab in solutions/[0-9][0-9]_*/; do
    lab=$(basename "$lab")
    compgen -G "solutions/$lab/wrong/*.patch" >/dev/null || continue
    printf '\n### %s\n\n| mistake | what the student did | caught by | on |\n|---|---|---|---|\n' "$lab"
    for patch in solutions/"$lab"/wrong/*.patch; do
      devices=$(field devices "$patch")
      printf '| `%s` | %s | %s | %s |\n' "$(basename "$patch" .patch)" "$(field mistake "$patch")" \
        "$(field catches "$patch")" "${devices:-cpu sim:0}"
    done
  done
}

# labs/README.md with the list between the markers replaced by $1.
with_list() {
  awk -v begin="$begin" -v end="$end" -v file="$1" '
    $0 == begin { print; while ((getline line < file) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }' labs/README.md
}

case ${1:-} in
  "") list ;;
  --write|--check)
    grep -qxF "$begin" labs/README.md && grep -qxF "$end" labs/README.md ||
      { echo "wrong_list: labs/README.md lacks the markers" >&2; exit 2; }
    tmp=$(mktemp)
    trap 'rm -f "$tmp" "$tmp.md"' EXIT
    { list; echo; } >"$tmp"
    with_list "$tmp" >"$tmp.md"
    if [[ $1 == --write ]]; then
      cp "$tmp.md" labs/README.md
      echo "wrong_list: labs/README.md lists $(grep -c '^| `' "$tmp") known-wrong versions"
    elif ! cmp -s "$tmp.md" labs/README.md; then
      echo "wrong_list: labs/README.md's list of known-wrong versions is out of date (tools/wrong_list.sh --write)" >&2
      exit 1
    else
      echo "wrong_list: labs/README.md lists the $(grep -c '^| `' "$tmp") known-wrong versions"
    fi
    ;;
  *) sed -n '2,10p' "$0"; exit 2 ;;
esac
