#!/usr/bin/env bash
# reference_plots.sh [DIR]: redraws every lab's real-GPU reference figure from
# the CSV kept beside it (`./lab plots --reference` runs it; no GPU, no run).
#
# A kept CSV is labs/NN_name/<stem>-<machine>.csv written by a lab program
# (tools/reference_run.sh on a GPU machine). Its "# plot:" line holds the
# plot variables the program passed (devices, device_names, busy_cores, the
# lab's own), its "# figures:" line the names of the figures one run draws
# (lab 06: copy error speed train). Each figure is drawn by the lab's own
# plot.gp: the PNG beside the CSV (what the lab's README shows), and PNG, SVG
# and PDF into DIR (default plots/reference). A CSV without a "# plot:" line
# is not a reference figure's and is left alone, said once.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/plots/reference}
style=$root/common/harness/plot/style.gp
command -v gnuplot >/dev/null || { echo "reference_plots: gnuplot is missing (./lab deps installs it)" >&2; exit 1; }
mkdir -p "$out"
drawn=0 failed=0
shopt -s nullglob
for csv in "$root"/labs/[0-9][0-9]_*/*.csv; do
  lab_dir=$(dirname "$csv")
  lab=$(basename "$lab_dir")
  plot_line=$(sed -n 's/^# plot: //p' "$csv" | head -1)
  if [[ -z $plot_line ]]; then
    echo "reference_plots: ${csv#"$root"/}: no '# plot:' line (not written by a lab program of this kit): skipped"
    continue
  fi
  figures=$(sed -n 's/^# figures: //p' "$csv" | head -1)
  [[ -n $figures ]] || figures=default
  stem=$(basename "$csv" .csv)
  first=1
  for name in $figures; do
    if ((first)); then fig=$stem; else fig=$stem-$name; fi
    first=0
    for target in "$lab_dir/$fig.png" "$out/$fig.png" "$out/$fig.svg" "$out/$fig.pdf"; do
      format=${target##*.}
      figure_var=""
      [[ $name == default ]] || figure_var="; figure='$name'"
      if gnuplot -e "data='$csv'; out='$target'; format='$format'; style='$style'; $plot_line$figure_var" \
        "$lab_dir/plot.gp" 2>"$out/.gnuplot-errors"; then
        drawn=$((drawn + 1))
      else
        failed=$((failed + 1))
        echo "reference_plots: $lab: $target failed: $(head -3 "$out/.gnuplot-errors")" >&2
      fi
    done
    echo "reference_plots: $lab: ${lab_dir#"$root"/}/$fig.png (and .png, .svg, .pdf in $out)"
  done
done
rm -f "$out/.gnuplot-errors"
((drawn > 0 || failed > 0)) || echo "reference_plots: no kept CSV with a '# plot:' line in labs/*/: nothing to draw"
((failed == 0)) || { echo "reference_plots: $failed of $((drawn + failed)) files failed" >&2; exit 1; }
echo "reference_plots: $drawn files drawn"
