#!/usr/bin/env bash
# wrong_list.sh: the known-wrong versions of every lab, as the Markdown list
# that docs/known-wrong.md holds between its two "wrong versions" markers
# (docs/ is the instructors': ./lab dist leaves it out of the student copy).
#
#   tools/wrong_list.sh            print the list
#   tools/wrong_list.sh --write    put it into docs/known-wrong.md
#   tools/wrong_list.sh --check    exit 1 if docs/known-wrong.md's list is not the current one
#
# Each solutions/NN_name/wrong/<mistake>.patch starts with "# mistake:",
# "# catches:" and optionally "# devices:" lines (docs/authoring.md). One awk
# reads them all: a few processes, not a few per patch.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

begin='<!-- known-wrong versions: made by tools/wrong_list.sh -->'
end='<!-- end of the known-wrong versions -->'

list() {
  local patches=(solutions/[0-9][0-9]_*/wrong/*.patch)
  [[ -e ${patches[0]} ]] || return 0
  awk '
    function flush() {
      if (name == "") return
      if (lab != shown) {
        printf "\n### %s\n\n| mistake | what the student did | caught by | on |\n|---|---|---|---|\n", lab
        shown = lab
      }
      printf "| `%s` | %s | %s | %s |\n", name, mistake, catches, devices == "" ? "sim:0" : devices == "none" ? "--kernels only" : devices
    }
    function field(line, key) { sub("^# " key ": *", "", line); gsub(/\|/, "\\|", line); return line }
    FNR == 1 {
      flush()
      lab = FILENAME; sub(/^solutions\//, "", lab); sub(/\/wrong\/.*$/, "", lab)
      name = FILENAME; sub(/^.*\//, "", name); sub(/\.patch$/, "", name)
      mistake = catches = devices = ""
    }
    /^# mistake: / && mistake == "" { mistake = field($0, "mistake") }
    /^# catches: / && catches == "" { catches = field($0, "catches") }
    /^# devices: / && devices == "" { devices = field($0, "devices") }
    END { flush() }' "${patches[@]}"
}

# docs/known-wrong.md with the list between the markers replaced by $1.
with_list() {
  awk -v begin="$begin" -v end="$end" -v file="$1" '
    $0 == begin { print; while ((getline line < file) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }' docs/known-wrong.md
}

case ${1:-} in
  "") list ;;
  --write|--check)
    grep -qxF "$begin" docs/known-wrong.md && grep -qxF "$end" docs/known-wrong.md ||
      { echo "wrong_list: docs/known-wrong.md lacks the markers" >&2; exit 2; }
    tmp=$(mktemp)
    trap 'rm -f "$tmp" "$tmp.md"' EXIT
    { list; echo; } >"$tmp"
    with_list "$tmp" >"$tmp.md"
    if [[ $1 == --write ]]; then
      cp "$tmp.md" docs/known-wrong.md
      echo "wrong_list: docs/known-wrong.md lists $(grep -c '^| `' "$tmp") known-wrong versions"
    elif ! cmp -s "$tmp.md" docs/known-wrong.md; then
      echo "wrong_list: docs/known-wrong.md's list of known-wrong versions is out of date (tools/wrong_list.sh --write)" >&2
      exit 1
    else
      echo "wrong_list: docs/known-wrong.md lists the $(grep -c '^| `' "$tmp") known-wrong versions"
    fi
    ;;
  *) sed -n '2,10p' "$0"; exit 2 ;;
esac
