#!/usr/bin/env bash
# figure_text.sh [--catches]: no text below 20 points in any lab's figure on a
# 1920 x 1080 slide (40 pixels an em, capitals 29: style.gp's font_px).
#
# Three checks, each able to fail:
#   - every plot.gp sizes its text with style.gp's text_font or title_font
#     only: no `font_size * 0.8`, no `font ',12'`, no font of its own;
#   - style.gp's text_font, drawn as a row of capitals through style.gp itself
#     in PNG and (with pdftoppm) PDF, is at least 28 pixels tall at 1920
#     pixels wide, and the SVG's font-size at least 40;
#   - a three-line title drawn through style.gp has its lines as far apart in
#     SVG (where its text is placed: the file says) and PDF as in PNG (where
#     its ink is), within 2 pixels at 1920 wide: the SVG terminal's rows were
#     1.5 ems, 69 pixels a title line against PNG's 54.
# --catches proves each fails on known-wrong copies (a plot.gp with
# font_size * 0.8, a style.gp with font_px = 28, lab 06's old text size, a
# style.gp without the SVG terminal's fontscale).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$root/tools/tests
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The fonts a plot.gp asks for: each "font X" whose X is not text_font or title_font.
small_fonts() {
  grep -n -E '\bfont +[^ ]' "$@" | grep -v -E '\bfont +(text_font|title_font)\b' || true
}

# The capitals' height, in pixels at 1920 wide, of text_font in one format.
capitals() { # style format
  local style=$1 format=$2 file=$work/cap.$2
  gnuplot -e "data='$work/none.csv'; out='$file'; format='$format'; style='$style'" - <<'GP'
load style
unset border; unset tics; unset key; unset grid
set label 'HHHH' at screen 0.5, screen 0.5 center font text_font
plot [0:1][0:1] NaN notitle
GP
  case $format in
    png) python3 "$here/cap_height.py" "$file" ;;
    pdf) pdftoppm -r 144 -gray "$file" "$work/cap" && python3 "$here/cap_height.py" "$work/cap-1.pgm" ;;
    svg) grep -o 'font-size="[0-9.]*"' "$file" | sed 's/[^0-9.]//g' | sort -n | head -1 ;;
  esac
}

# 0 when every text of the style is large enough; says what is not.
check_style() { # style
  local style=$1 failed=0 px
  printf 'x\n1\n' >"$work/none.csv"
  for format in png pdf svg; do
    if [[ $format == pdf ]] && ! command -v pdftoppm >/dev/null; then
      echo "figure_text: no pdftoppm (poppler-utils): the PDF is not measured"
      continue
    fi
    px=$(capitals "$style" "$format")
    local least=28
    [[ $format == svg ]] && least=40
    if awk -v p="$px" -v l="$least" 'BEGIN { exit !(p < l) }'; then
      echo "figure_text: $(basename "$style")'s text in $format is $px pixels (capitals; SVG: font-size) at 1920 wide, under $least: below 20 pt on a slide"
      failed=1
    else
      echo "figure_text: $format text $px pixels at 1920 wide (at least $least)"
    fi
  done
  return "$failed"
}

# The pitch of a title's lines, in pixels at 1920 wide, in one format: the
# SVG's from the positions it gives its text, the PNG's and PDF's from the
# tops of the rows of ink.
title_pitch() { # style format
  local style=$1 format=$2 file=$work/rows.$2 tops
  gnuplot -e "data='$work/none.csv'; out='$file'; format='$format'; style='$style'" - <<'GP'
load style
unset border; unset tics; unset key; unset grid
set title "HHHH\nHHHH\nHHHH" font title_font
plot [0:1][0:1] NaN notitle
GP
  case $format in
    png) tops=$(python3 "$here/cap_height.py" --rows "$file") ;;
    pdf) pdftoppm -r 144 -gray "$file" "$work/rows" && tops=$(python3 "$here/cap_height.py" --rows "$work/rows-1.pgm") ;;
    svg) tops=$(awk 'match($0, /translate\([0-9.]+,[0-9.]+\)/) { split(substr($0, RSTART + 10, RLENGTH - 11), p, ","); y = p[2] }
                     />HHHH</ { printf "%s ", y }' "$file") ;;
  esac
  awk -v t="$tops" 'BEGIN { n = split(t, y, " "); if (n != 3) { print "none"; exit } printf "%.1f\n", (y[3] - y[1]) / 2 }'
}

# 0 when a title's lines are as far apart in SVG and PDF as in PNG; says what is not.
check_rows() { # style
  local style=$1 failed=0 png pitch
  png=$(title_pitch "$style" png)
  for format in svg pdf; do
    if [[ $format == pdf ]] && ! command -v pdftoppm >/dev/null; then
      echo "figure_text: no pdftoppm (poppler-utils): the PDF's title lines are not measured"
      continue
    fi
    pitch=$(title_pitch "$style" "$format")
    if [[ $png == none || $pitch == none ]] || awk -v a="$pitch" -v b="$png" 'BEGIN { exit !(a - b > 2 || b - a > 2) }'; then
      echo "figure_text: $(basename "$style")'s title lines are $pitch pixels apart in $format against $png in png (1920 wide): the title takes another height there and squeezes the plot differently"
      failed=1
    else
      echo "figure_text: title lines $pitch pixels apart in $format, $png in png"
    fi
  done
  return "$failed"
}

check_scripts() { # plot.gp...
  local found
  found=$(small_fonts "$@")
  if [[ -n $found ]]; then
    echo "figure_text: a font other than style.gp's text_font or title_font (below 20 pt, or unchecked):"
    echo "$found"
    return 1
  fi
  echo "figure_text: $# plot scripts use text_font and title_font only"
}

command -v gnuplot >/dev/null || { echo "figure_text: no gnuplot: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "figure_text: no python3 (cap_height.py): skipped"; exit 77; }
if [[ ${1:-} != --catches ]]; then
  check_scripts "$root"/labs/[0-9][0-9]_*/plot.gp
  check_style "$root/common/harness/plot/style.gp"
  check_rows "$root/common/harness/plot/style.gp"
  exit 0
fi

# --catches: each known-wrong copy must fail its check.
caught=0
sed '0,/^load style/s//load style\nset title "x" font sprintf(",%g", font_size * 0.8)/' \
  "$root/labs/04_matmul/plot.gp" >"$work/plot.gp"
check_scripts "$work/plot.gp" >/dev/null || caught=$((caught + 1))
git -C "$root" show 70811cd:labs/06_precision/plot.gp >"$work/plot06.gp" 2>/dev/null ||
  printf "set key font sprintf(',%%g', font_size * 0.8)\n" >"$work/plot06.gp"
check_scripts "$work/plot06.gp" >/dev/null || caught=$((caught + 1))
sed 's/^font_px = 40$/font_px = 28/' "$root/common/harness/plot/style.gp" >"$work/style.gp"
check_style "$work/style.gp" >/dev/null || caught=$((caught + 1))
# The SVG terminal as it was: fonts asked for at their size, rows 1.5 ems.
sed 's|^\( *svg_scale = \)1.5 / 1.165$|\11|' "$root/common/harness/plot/style.gp" >"$work/style-rows.gp"
check_rows "$work/style-rows.gp" >/dev/null || caught=$((caught + 1))
if ((caught != 4)); then
  echo "figure_text: only $caught of 4 known-wrong copies were caught"
  exit 1
fi
echo "figure_text: all 4 known-wrong copies caught (a font_size * 0.8, lab 06's old panels, font_px = 28, SVG rows of 1.5 ems)"
