# plot.gp: lab 03's two figures, for slides, one group of bars per workload,
# each bar with its value; the program draws each --plot FIG twice, figure=
#   clocks (FIG):      what each clock says about one run (ms, log scale): the host clock
#          alone, after synchronising, after reading one value, and the events.
#          On a GPU the first bar of the matrix products is the lie.
#   busy (FIG-busy):   how busy the device was, beside the fraction of its FP32 peak that
#          the run's arithmetic used (%, log scale): the utilisation illusion.
# The CSV (main.c's results table) has one row per workload, in the order the
# matrix products, the same with a read in every step, x = x + 1; its columns
# include workload, unsync_ms, sync_ms, read_ms, events_ms, busy_pct and
# peak_pct. The program passes data, out, format, style, devices, device_names
# and figure.
load style

clocks = 'unsync_ms sync_ms read_ms events_ms'
bar_width = 0.2
bar_x(x, j, n) = x + (j - (n + 1) / 2.0) * bar_width
ms_label(y) = y != y ? '' : short_value(y)
# A percentage without an exponent: 98%, 16%, 2.5%, 0.00004%.
decimals(y) = y >= 10 ? 0 : y >= 1 ? 1 : ceil(-log10(y))
pct_label(y) = y != y || y <= 0 ? '' : sprintf(sprintf('%%.%df%%%%', decimals(y)), y)
# A workload's name on two or three lines: "20 matmuls\n1024x1024\n(read each)".
replace(s, a, b) = strstrt(s, a) == 0 ? s : \
    s[1:strstrt(s, a) - 1] . b . replace(s[strstrt(s, a) + strlen(a):], a, b)
tick_name(s) = replace(replace(replace(s, 'matmuls ', "matmuls\n"), ' (read', "\n(read"), ' x (', " x\n(")

# Room above the tallest bar for the key, on a log axis.
stats data using 'unsync_ms' nooutput
low = STATS_min
stats data using 'events_ms' nooutput
high = STATS_max
do for [c in 'sync_ms read_ms'] {
    stats data using c nooutput
    high = STATS_max > high ? STATS_max : high
}
ms_low = 10**floor(log10(low) - 0.3)
ms_high = 10**ceil(log10(high) + 1.2)
# The right panel goes down to an even power of ten below the smallest share of
# the peak: on a simulated GPU's modelled card, as on a real H100, the
# increments use under a millionth of a percent of it. (Before any range is
# set: stats leaves out what lies outside the current one; an unknown peak, NaN,
# counts as 1%.)
stats data using (column('peak_pct') > 0 ? column('peak_pct') : 1) nooutput
pct_low = 10.0**(2 * floor((log10(STATS_min) - 1) / 2.0))

if (!exists("figure")) figure = 'clocks'
set logscale y
set format y '%g'
set xtics nomirror scale 0
set grid noxtics nomxtics
set style fill solid 0.85 border -1
set key outside right top vertical Left reverse samplen 1.2 spacing 1.2 * ks
set xrange [-0.5:2.5]
# Three lines of a workload's name below the axis.
set bmargin 5.5

if (figure eq 'clocks') {
    set title wrap('What each clock says about one run on '.device_names, title_width).load_line
    set ylabel 'milliseconds (log scale)'
    set yrange [ms_low:ms_high]
    set boxwidth bar_width * 0.95 absolute
    # The values upright above their bars: four bars a workload are too narrow
    # for a value written across.
    plot data using (bar_x($0, 1, 4)):'unsync_ms':xtic(tick_name(strcol('workload'))) with boxes lt 2 \
              title 'clock alone', \
         '' using (bar_x($0, 2, 4)):'sync_ms' with boxes lt 1 title 'after synchronize', \
         '' using (bar_x($0, 3, 4)):'read_ms' with boxes lt 3 title 'after one read', \
         '' using (bar_x($0, 4, 4)):'events_ms' with boxes lt 4 title 'events', \
         for [j = 1:4] '' using (bar_x($0, j, 4)):(column(word(clocks, j)) * 1.3):(ms_label(column(word(clocks, j)))) \
              with labels left rotate by 90 notitle
}

if (figure eq 'busy') {
    set title wrap('Busy is not useful: how busy '.device_names.' was, and how much of its peak it used', title_width).load_line
    set ylabel '% (log scale)'
    set yrange [pct_low:1e4]
    set ytics ('0.01' 0.01, '1' 1, '100' 100)
    do for [e = int(log10(pct_low) - 0.5):-4:2] { set ytics add (sprintf('10^{%d}', e) 10.0**e) }
    set boxwidth bar_width * 1.6 absolute
    plot data using ($0 - 0.18):'busy_pct':xtic(tick_name(strcol('workload'))) with boxes lt 5 title 'busy (of the time)', \
         '' using ($0 + 0.18):'peak_pct' with boxes lt 6 title 'FP32 peak used', \
         '' using ($0 - 0.18):'busy_pct':(pct_label(column('busy_pct'))) with labels center offset 0, 0.8 notitle, \
         '' using ($0 + 0.18):'peak_pct':(pct_label(column('peak_pct'))) with labels center offset 0, 0.8 notitle
}
