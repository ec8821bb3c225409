#!/usr/bin/env bash
# figure_layout.sh [--catches]: the plot keeps most of a figure. Every kept
# reference CSV's figures (labs/NN_name/*.csv with a "# plot:" line, as
# tools/reference_plots.sh draws them), each drawn by its lab's plot.gp in
# PNG, SVG and PDF as if under load (busy_cores 1.7: the title's load line,
# lab 08's note) and in SVG and PDF as run, must leave the plot area at least 40% of
# the figure's 1080 pixels. Lab 08's key below its plot, one entry a line,
# left 313 pixels under load (174 in SVG, whose rows were then 1.5 ems), and
# a slide showed mostly a key.
#
# gnuplot reports the plot area it drew (GPVAL_TERM_YMIN, YMAX: pixels in PNG
# and SVG, points in PDF, 2 pixels a point at 1920 wide).
# And every lab's plot.gp gives each title the load line (titles_say_load).
# --catches proves the checks fail on known-wrong copies: lab 08's plot.gp with
# its key below the plot again, lab 10's title without its load line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
style=$root/common/harness/plot/style.gp
least=432 # 40% of 1080
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The plot area's height, in pixels at 1920 x 1080.
plot_height() { # csv plot.gp format variables
  local csv=$1 script=$2 format=$3 vars=$4
  gnuplot -e "data='$csv'; out='$work/figure.$format'; format='$format'; style='$style'; $vars" \
    -e "load '$script'; print sprintf('%.0f', ('$format' eq 'pdf' ? 2 : 1) * (GPVAL_TERM_YMAX - GPVAL_TERM_YMIN))" \
    2>&1 | grep -v -e 'warning: Skipping data file' | tail -1
}

# 0 when every title of every lab's plot.gp ($1: a folder of plot.gp files,
# labs/ or a copy) can say the run was under load (style.gp's load_line): a
# figure drawn under load must say so (lab 10's did not); figures without a
# reference CSV are never drawn here, so this reads the scripts.
titles_say_load() {
  local script titles loads failed=0
  for script in "$1"/*/plot.gp; do
    titles=$(grep -c '^ *set title' "$script" || true)
    loads=$(grep -c 'load_line' "$script" || true)
    if ((loads < titles)); then
      echo "figure_layout: ${script#"$1"/}: $titles titles, $loads with the load line (append .load_line to each title)"
      failed=1
    fi
  done
  return "$failed"
}

# 0 when every figure keeps its plot; says which do not. LAB08_SCRIPT, when
# set, stands in for lab 08's plot.gp; ONLY_LAB (08_parallel) draws one lab's.
check_figures() {
  local csv lab_dir script plot_line figures name vars load h count=0 failed=0
  shopt -s nullglob
  for csv in "$root"/labs/[0-9][0-9]_*/*.csv; do
    plot_line=$(sed -n 's/^# plot: //p' "$csv" | head -1)
    [[ -n $plot_line ]] || continue
    lab_dir=$(dirname "$csv")
    [[ -z ${ONLY_LAB:-} || $(basename "$lab_dir") == "$ONLY_LAB" ]] || continue
    script=$lab_dir/plot.gp
    [[ $(basename "$lab_dir") == 08_parallel && -n ${LAB08_SCRIPT:-} ]] && script=$LAB08_SCRIPT
    figures=$(sed -n 's/^# figures: //p' "$csv" | head -1)
    for name in ${figures:-default}; do
      for load in 'as run' 'under load'; do
        vars=$plot_line
        [[ $name == default ]] || vars="$vars; figure='$name'"
        [[ $load == 'as run' ]] || vars="$vars; busy_cores='1.7'"
        # As run, not in PNG: a title a line shorter than under load leaves
        # its plot taller, and PNG costs 3 to 5 times SVG's drawing (0.25 s).
        formats='png svg pdf'
        [[ $load == 'under load' ]] || formats='svg pdf'
        for format in $formats; do
          h=$(plot_height "$csv" "$script" "$format" "$vars")
          count=$((count + 1))
          if ! [[ $h =~ ^[0-9]+$ ]] || ((h < least)); then
            echo "figure_layout: $(basename "$csv" .csv) $name ($format, $load): the plot is $h pixels of 1080, under $least: the key, title or labels take the figure (${script#"$root"/})"
            failed=1
          fi
        done
      done
    done
  done
  ((count > 0)) || { echo "figure_layout: no kept CSV with a '# plot:' line: nothing measured"; return 1; }
  ((failed == 0)) || return 1
  echo "figure_layout: $count figures (SVG and PDF as run; PNG, SVG and PDF under load), each plot at least $least pixels of 1080"
}

command -v gnuplot >/dev/null || { echo "figure_layout: no gnuplot: skipped"; exit 77; }
if [[ ${1:-} != --catches ]]; then
  titles_say_load "$root/labs"
  check_figures
  exit
fi

# --catches: lab 10's title without its load line, as it was.
mkdir -p "$work/labs/10_distributed"
sed 's/\.load_line$//' "$root/labs/10_distributed/plot.gp" >"$work/labs/10_distributed/plot.gp"
if titles_say_load "$work/labs" >"$work/out"; then
  echo "figure_layout: lab 10's title without the load line was not caught"
  exit 1
fi
echo "figure_layout: lab 10's title without the load line caught"

# --catches: lab 08's key below the plot, one entry a line, as it was.
sed -e 's/^set rmargin at screen .*$//' \
  -e 's/^set key at screen .*$/set key outside bottom center horizontal maxcols 2 width 1 samplen 2.5/' \
  "$root/labs/08_parallel/plot.gp" >"$work/plot08.gp"
if cmp -s "$work/plot08.gp" "$root/labs/08_parallel/plot.gp"; then
  echo "figure_layout: the known-wrong copy of lab 08's plot.gp is the same as the real one: the sed no longer matches"
  exit 1
fi
if ONLY_LAB=08_parallel LAB08_SCRIPT=$work/plot08.gp check_figures >"$work/out"; then
  echo "figure_layout: lab 08's key below the plot was not caught"
  exit 1
fi
grep -q 'parallel-h200' "$work/out" || { echo "figure_layout: the known-wrong copy failed, but not for lab 08's figure:"; cat "$work/out"; exit 1; }
echo "figure_layout: lab 08's key below the plot caught ($(grep -c 'parallel-h200' "$work/out") of its 5 drawings too short)"
