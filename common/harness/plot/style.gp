# style.gp: the look every lab's figure shares. A lab's plot.gp starts with
#     load style
# and the program that runs it (results.h, figure.h) sets, with gnuplot -e:
#     data    the CSV: comment lines (#), then a line of column names, then rows
#     out     the file to write
#     format  'png', 'svg' or 'pdf'
#     style   this file
# plus devices ("cpu sim:0") and device_names ("cpu: AMD EPYC, sim:0: simulated
# GPU") and the lab's own variables. Change this file to restyle every figure
# of every lab; rerun the "plot: ... (redraw: ...)" line a lab printed to redraw
# one without running the experiment again.
#
# What the figures are for: a 16:9 slide, seen from the back of a lecture hall.
# So: 16:9 in all three formats, the same font family (DejaVu Sans) in each, text
# a fiftieth of the figure's width, thick lines, colours that colour-blind
# readers tell apart, the key beside the plot rather than over the data, titles
# wrapped rather than clipped.

if (!exists("data") || !exists("out")) {
    exit error "style.gp: set data and out first: gnuplot -e \"data='x.csv'; out='x.png'; format='png'; style='.../style.gp'\" plot.gp"
}
if (!exists("format")) format = 'png'
if (!exists("devices")) devices = ''
if (!exists("device_names")) device_names = ''

# ---- the terminal: 16:9, one font family, sizes for a projector ----------------
# PNG and SVG at 1920x1080 pixels; PDF at 13.333 x 7.5 inches, the size of a
# 16:9 slide in PowerPoint, LibreOffice and Keynote, where 1920 pixels are 960
# points: 2 pixels a point. The smallest text anywhere is font_px = 40 pixels
# (its em; capitals 29 pixels tall), which is 20 points on that slide: what the
# back row of a lecture hall still reads. A plot.gp never asks for less than
# font_size (titles may be larger); tools/tests/figure_text.sh measures it.
font_family = 'DejaVu Sans'
font_px = 40
# The three terminals size fonts, lines and points differently; these factors,
# measured on rendered figures (capitals 30 pixels tall at 1920 pixels wide in
# all three: pngcairo counts points at 96 per inch, SVG pixels, and pdfcairo
# draws DejaVu Sans at 0.63 of the points asked for), make one figure alike.
if (format eq 'png') {
    font_size = font_px * 0.75
    lw_scale = 2.4
    ps_scale = 2.1
    set terminal pngcairo size 1920,1080 enhanced font sprintf('%s,%g', font_family, font_size) linewidth 1 background '#ffffff'
} else {
    if (format eq 'svg') {
        # gnuplot's SVG terminal cannot measure its text: it takes a row of
        # text for 1.5 ems (svg.trm: ascent 0.9, descent 0.25, leading 0.35),
        # where pngcairo and pdfcairo take the font's own 1.165, so a title's
        # lines, a key's rows and the margins stood 29% farther apart than in
        # PNG and PDF and squeezed the plot. Its fontscale multiplies the size
        # written into the SVG and nothing else: a font asked for at
        # font_px / svg_scale and written at svg_scale times that is drawn at
        # font_px, while its rows are 1.5 / svg_scale = 1.165 ems apart, as in
        # PNG (and its characters 0.54 ems wide, where it took 0.7).
        svg_scale = 1.5 / 1.165
        font_size = font_px / svg_scale
        lw_scale = 2.4
        # Its points (and tics) scale with the font asked for: 0.7 draws the
        # circle 25 pixels wide and the square 23, as pngcairo does.
        ps_scale = 0.7
        # The SVG names its fonts; a viewer without DejaVu Sans falls back to these.
        set terminal svg size 1920,1080 dynamic enhanced font sprintf('%s,Helvetica,Arial,sans-serif,%g', font_family, font_size) \
            fontscale svg_scale linewidth 1 background '#ffffff'
    } else {
        if (format eq 'pdf') {
            font_size = font_px * 0.76
            lw_scale = 2.4
            ps_scale = 1.1
            set terminal pdfcairo size 13.333in,7.5in enhanced font sprintf('%s,%g', font_family, font_size) linewidth 1
        } else {
            exit error sprintf("style.gp: format is '%s'; use 'png', 'svg' or 'pdf'", format)
        }
    }
}
# A key's spacing was given as so many times ks, 0.78 in SVG, when its rows
# were 1.5 ems there; the terminal's fontscale above makes every row alike in
# all three formats, so ks is 1 and stays for the plot.gp files that use it.
ks = 1.0
# Fonts a plot.gp may use: the text's own size, and a title's.
text_font = sprintf(',%g', font_size)
title_font = sprintf(',%g', font_size * 1.15)
set output out
set encoding utf8

# ---- the data: CSV with comments and a header line ---------------------------------
# Columns are read by name: column('gflops'), strcol('device'). An empty cell is
# unknown, and so is a NaN computed in a using clause (only() below): neither
# is drawn, and neither breaks a line into pieces.
set datafile separator comma
set datafile commentschars '#'
set datafile columnheaders
set datafile missing NaN

# ---- lines, points, grid -------------------------------------------------------------------
# Okabe and Ito's colours; thick lines and filled points that a projector shows.
lw = 2.5 * lw_scale
ps = 1.5 * ps_scale
set linetype 1 lc rgb '#0072B2' lw lw pt 7 ps ps
set linetype 2 lc rgb '#D55E00' lw lw pt 5 ps ps * 0.9
set linetype 3 lc rgb '#009E73' lw lw pt 9 ps ps * 1.1
set linetype 4 lc rgb '#CC79A7' lw lw pt 11 ps ps * 1.1
set linetype 5 lc rgb '#E69F00' lw lw pt 13 ps ps * 1.1
set linetype 6 lc rgb '#56B4E9' lw lw pt 4 ps ps
set linetype 7 lc rgb '#000000' lw lw pt 6 ps ps
set linetype 8 lc rgb '#999999' lw lw pt 8 ps ps
set linetype cycle 8
# A reference line (a peak, a break-even): dashed grey, drawn with `ls 100`.
set style line 100 lc rgb '#555555' lw 0.8 * lw dt 2 pt 0
set border 3 lw 0.5 * lw_scale
set tics nomirror out scale 0.75
set grid back xtics ytics mxtics mytics lt 1 lw 0.5 * lw_scale lc rgb '#d0d0d0', lt 1 lw 0.3 * lw_scale lc rgb '#ececec'
set style fill solid 0.85 border -1
set boxwidth 0.8 relative
set style data linespoints

# ---- key, title, margins -----------------------------------------------------------------------
# The key goes outside, right of the plot: on a 16:9 figure there is room there,
# and it never hides data. noenhanced keeps "sim:0" and "time_s" as typed.
set key outside right top vertical Left reverse noenhanced spacing 1.3 * ks samplen 3 width 1
set title noenhanced font title_font
set xlabel noenhanced
set ylabel noenhanced

# wrap(s, n): s with line breaks at spaces, so that no line is longer than n
# characters: a long title wraps instead of running off the figure.
#     set title wrap('Matrix products on '.device_names, 70)
last_space(s, i) = i < 1 ? 0 : (s[i:i] eq ' ' ? i : last_space(s, i - 1))
wrap(s, n) = strlen(s) <= n || last_space(s, n + 1) < 2 ? s : \
    s[1:last_space(s, n + 1) - 1] . "\n" . wrap(s[last_space(s, n + 1) + 1:], n)
# How many characters a title may have per line: the plot's width, less the key's.
title_width = 50

# ---- a run under load ---------------------------------------------------------------------
# results.h passes busy_cores (how many cores other programs kept busy during
# the run; -1: unknown) and cores. From a third of a core on, the times are
# the machine's under load, slower and noisier: load_line says so, and every
# figure's title ends with it (set title '...'.load_line).
busy = exists("busy_cores") ? busy_cores + 0 : -1
load_line = busy >= 0.33 ? sprintf("\nunder load: other programs kept %.1f of %s cores busy", busy, \
    exists("cores") ? cores : '?') : ''
load_colour = '#B00000'

# ---- picking rows ---------------------------------------------------------------------------
# only(c, v, y): y where column c holds the text v, unknown elsewhere. One series
# per device or variant from one long table:
#     plot for [d in devices] data using 'n':(only('device', d, column('gflops'))) title d
only(c, v, y) = strcol(c) eq v ? y : NaN
# only2(c1, v1, c2, v2, y): the same with two columns.
only2(c1, v1, c2, v2, y) = strcol(c1) eq v1 && strcol(c2) eq v2 ? y : NaN

# ---- units people read ------------------------------------------------------------------------
# bytes(x): "512 B", "4 KiB", "1.5 MiB", "2 GiB".
unit_value(x, u) = x / 1024.0**u == floor(x / 1024.0**u) ? sprintf('%.0f', x / 1024.0**u) : sprintf('%.1f', x / 1024.0**u)
bytes(x) = x >= 1024.0**4 ? unit_value(x, 4).' TiB' : x >= 1024.0**3 ? unit_value(x, 3).' GiB' : \
    x >= 1024.0**2 ? unit_value(x, 2).' MiB' : x >= 1024 ? unit_value(x, 1).' KiB' : sprintf('%.0f B', x)
# short_value(y): a number as printed on a bar: 3 significant digits, no exponent.
short_value(y) = abs(y) >= 100 ? sprintf('%.0f', y) : abs(y) >= 10 ? sprintf('%.1f', y) : abs(y) >= 1 ? sprintf('%.2f', y) : sprintf('%.3g', y)
log2(x) = log(x) / log(2)

# Axes, as commands to eval, from the data's range (stats first):
#     stats data using 'bytes' nooutput
#     eval bytes_axis('x', STATS_min, STATS_max)    4 KiB, 16 KiB, 64 KiB, ... (log 2)
#     eval pow2_axis('x', STATS_min, STATS_max)     16, 32, 64, ... (log 2)
#     eval integer_axis('x', STATS_min, STATS_max)  1, 2, 3 (epochs), never 2.5
# The range reaches a little past the first and last powers of two, so that no
# point sits on the border; at most about 10 ticks (every 2nd or 4th power).
tic_step(lo, hi) = hi - lo > 20 ? 4 : hi - lo > 10 ? 2 : 1
pow2_list(lo, hi, step, f) = lo > hi ? '' : sprintf('"%s" %.0f', f == 1 ? bytes(2.0**lo) : sprintf('%.0f', 2.0**lo), 2.0**lo) . \
    (lo + step <= hi ? ', ' . pow2_list(lo + step, hi, step, f) : '')
pow2_command(a, lo, hi, f) = sprintf('set logscale %s 2; set %srange [%.9g:%.9g]; set %stics (%s); set m%stics 1', \
    a, a, 2.0**lo / 1.25, 2.0**hi * 1.25, a, pow2_list(lo, hi, tic_step(lo, hi), f), a)
bytes_axis(a, min, max) = pow2_command(a, floor(log2(min)), ceil(log2(max)), 1)
pow2_axis(a, min, max) = pow2_command(a, floor(log2(min)), ceil(log2(max)), 0)
integer_axis(a, min, max) = sprintf("set %stics %d; set format %s '%%.0f'; set m%stics 1; set %srange [%g:%g]", \
    a, max - min > 20 ? ceil((max - min) / 10.0) : 1, a, a, a, min - 0.5, max + 0.5)
