#!/usr/bin/env bash
# reference_figures.sh [--catches]: every kept real-GPU reference figure is
# where the course says it is, so that a CSV copied in without its README (or
# a README that names a figure no CSV draws) does not reach a class.
#
# For each labs/NN_name/<stem>.csv with a "# plot:" line (the CSVs that
# tools/reference_plots.sh draws), each figure it draws (<stem>.png, then
# <stem>-<name>.png for each later name of its "# figures:" line) must be
#   - beside the CSV, tracked by git or at least present;
#   - shown by the lab's README: a link "](<figure>.png)";
#   - named in labs/README.md, "Reference figures";
# and the CSV's "# devices:" line must name a real GPU (cuda:N), since a
# reference figure is a real GPU's. No gnuplot needed: nothing is drawn.
# --catches proves the check fails on known-wrong copies: a README without
# its link, a figure missing beside its CSV, labs/README.md without the
# figure, a CSV of a simulated GPU's run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The figures one CSV draws, one a line, as tools/reference_plots.sh names them.
figures_of() { # csv
  local csv=$1 stem first=1 name
  stem=$(basename "$csv" .csv)
  for name in $(sed -n 's/^# figures: //p' "$csv" | head -1); do
    if ((first)); then echo "$stem.png"; else echo "$stem-$name.png"; fi
    first=0
  done
  ((!first)) || echo "$stem.png"
}

# 0 when every kept CSV under TREE/labs is shown; says what is not.
check_tree() { # tree
  local tree=$1 csv lab_dir fig failed=0 count=0
  shopt -s nullglob
  for csv in "$tree"/labs/[0-9][0-9]_*/*.csv; do
    grep -q '^# plot: ' "$csv" || continue
    lab_dir=$(dirname "$csv")
    count=$((count + 1))
    if ! grep '^# devices: ' "$csv" | head -1 | grep -q 'cuda:[0-9]'; then
      echo "reference_figures: ${csv#"$tree"/}: its '# devices:' line names no real GPU (cuda:N); a reference figure is a real GPU's run (tools/reference_run.sh)"
      failed=1
    fi
    while read -r fig; do
      if [[ ! -f $lab_dir/$fig ]]; then
        echo "reference_figures: ${lab_dir#"$tree"/}/$fig is missing: run ./lab plots --reference and commit it"
        failed=1
      fi
      if ! grep -qF "]($fig)" "$lab_dir/README.md"; then
        echo "reference_figures: ${lab_dir#"$tree"/}/README.md does not show $fig: add ![what it shows, with its numbers]($fig) under \"On a real GPU\""
        failed=1
      fi
      if ! grep -qF "\`$fig\`" "$tree/labs/README.md"; then
        echo "reference_figures: labs/README.md, \"Reference figures\", does not name $fig"
        failed=1
      fi
    done < <(figures_of "$csv")
  done
  ((failed == 0)) || return 1
  echo "reference_figures: $count kept CSVs, each figure beside it, in its README and in labs/README.md"
}

if [[ ${1:-} != --catches ]]; then
  check_tree "$root"
  exit
fi

# --catches: copies of the labs folder, each spoilt one way. One cp a copy (a
# cp a file took 12 s for the five): hard links where the filesystem allows,
# which the spoiling leaves alone (sed -i writes a new file, rm unlinks).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy() { # dir
  local d=$1
  mkdir -p "$d"
  cp -al "$root/labs" "$d/labs" 2>/dev/null || { rm -rf "$d/labs" && cp -r "$root/labs" "$d/labs"; }
}
copy "$work/good"
check_tree "$work/good" >/dev/null || { echo "reference_figures: the unspoilt copy fails: the check itself is wrong"; exit 1; }
caught=0
copy "$work/link"
sed -i 's/](matmul-h200-speedup\.png)/](matmul-speedup.png)/' "$work/link/labs/04_matmul/README.md"
check_tree "$work/link" >/dev/null || caught=$((caught + 1))
copy "$work/png"
rm "$work/png/labs/06_precision/precision-h200-train.png"
check_tree "$work/png" >/dev/null || caught=$((caught + 1))
copy "$work/table"
sed -i 's/`copying-h200\.png`/the figure/' "$work/table/labs/README.md"
check_tree "$work/table" >/dev/null || caught=$((caught + 1))
copy "$work/sim"
sed -i 's/^# devices: .*/# devices: cpu; sim:0 (simulated GPU)/' "$work/sim/labs/02_copying/copying-h200.csv"
check_tree "$work/sim" >/dev/null || caught=$((caught + 1))
if ((caught != 4)); then
  echo "reference_figures: only $caught of 4 known-wrong copies were caught"
  exit 1
fi
echo "reference_figures: all 4 known-wrong copies caught (a README's link, a PNG, labs/README.md's table, a simulated GPU's CSV)"
