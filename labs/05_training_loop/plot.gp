# plot.gp: lab 05's two figures from one run's CSV (results.h); the program
# draws each --plot FIG twice, figure=
#   learning (FIG)        the training loss (solid) and held-out accuracy (dashed) per epoch,
#          one colour per device (the on-device log's run; the three styles
#          train the same numbers);
#   steps (FIG-steps)     the time per step of each style on each device (median of the
#          epochs after the first, which warms up and captures the graphs), and
#          inside each bar the host's share of it (the time it spent queueing
#          the step); the key gives each style's launches and reads.
# The CSV's columns: device, style, epoch, loss, accuracy_percent, us_per_step,
# host_us_per_step, launches_per_step, d2h_reads, waits, buffer_waits. The
# program passes data, out, format, style, devices, device_names and its own
# setup ("MLP 784,256,256,10, batch 128, synthetic digits"), for the title.
load style
if (!exists("setup")) setup = 'MLP 784,256,256,10'
nd = words(devices)
style_name(j) = j == 1 ? 'item every step' : j == 2 ? 'on-device log' : 'captured step'

# ---- the bars of the right panel: medians computed from the rows ----------------------
# One line per device and style in the datablock $bars: where the bar goes, its
# height, its launches per step and its style (1 to 3).
stats data using 'epoch' nooutput
last_epoch = STATS_max
first = last_epoch > 1 ? 1 : 0   # the epochs after the first, unless there is only one
width = 0.27
t_min = 1e30
t_max = 0
set print $bars
print 'x,us,host,launches,style'
do for [i = 1:nd] {
    do for [j = 1:3] {
        stats data using (only2('device', word(devices, i), 'style', style_name(j), \
                                column('epoch') > first ? column('us_per_step') : NaN)) nooutput
        us = STATS_median
        stats data using (only2('device', word(devices, i), 'style', style_name(j), \
                                column('epoch') > first ? column('host_us_per_step') : NaN)) nooutput
        host = STATS_median
        stats data using (only2('device', word(devices, i), 'style', style_name(j), \
                                column('epoch') > first ? column('launches_per_step') : NaN)) nooutput
        print sprintf('%g,%g,%g,%g,%d', i + (j - 2) * width, us, host, STATS_median, j)
        t_min = host < t_min ? host : t_min
        t_max = us > t_max ? us : t_max
    }
}
set print
# "15.6 ms", "126 us"; on the axis "20 ms", "500 us"
duration(us) = us >= 1000 ? sprintf('%.1f ms', us / 1000) : us >= 10 ? sprintf('%.0f us', us) : sprintf('%.1f us', us)
tick(us) = us >= 1000 ? sprintf('%g ms', us / 1000) : us >= 1 ? sprintf('%g us', us) : sprintf('%g ns', us * 1000)
# The key names each style with the host launches per step of the last device (a GPU when there is one).
stats $bars using (column('style') == 1 ? column('launches') : NaN) nooutput
launches_item = STATS_max
stats $bars using (column('style') == 3 ? column('launches') : NaN) nooutput
launches_captured = STATS_max
style_key(j) = j == 1 ? sprintf('item every step: %.0f launches + 1 read a step', launches_item) : \
               j == 2 ? sprintf('on-device log: %.0f launches a step, 1 read an epoch', launches_item) : \
                        sprintf('captured step: %.0f launch a step, 1 read an epoch', launches_captured)

if (!exists("figure")) figure = 'learning'

if (figure eq 'learning') {
    set title wrap(sprintf('Learning: %s, on %s', setup, device_names), title_width).load_line
    set xlabel 'epoch'
    eval integer_axis('x', 1, last_epoch)
    set ylabel 'training loss (solid)'
    set yrange [0:*]
    set ytics nomirror
    set y2label 'held-out accuracy, % (dashed)'
    set y2range [0:100]
    set y2tics 20
    set key below horizontal center
    # The devices train the same numbers: the first device's curve is drawn widest, so that every one shows.
    plot for [i = 1:nd] data using 'epoch':(only2('device', word(devices, i), 'style', 'on-device log', column('loss'))) \
             with linespoints lt i lw lw * (1 + 0.8 * (nd - i)) ps ps * (1 + 0.5 * (nd - i)) title word(devices, i), \
         for [i = 1:nd] data using 'epoch':(only2('device', word(devices, i), 'style', 'on-device log', column('accuracy_percent'))) \
             axes x1y2 with linespoints lt i dt 2 lw lw * (1 + 0.8 * (nd - i)) ps ps * (1 + 0.5 * (nd - i)) notitle
}

if (figure eq 'steps') {
    set title "Time per step; dark: the host's share of it\n".device_names.load_line
    # Where the wall clock cannot show the lesson, the figure says what does:
    # a simulated GPU computes on the host's cores, and other programs on them
    # can make the captured step the slowest bar (28 ms against 5 ms, seen).
    set xlabel busy >= 0.33 ? \
        "under load the bars' order is not the lesson's: the dark bars and the key are" : \
        strstrt(devices, 'sim:') > 0 ? \
        "a simulated GPU computes on the host's cores: the dark bars and the key show the lesson" : ''
    set xrange [0.5:nd + 0.5]
    set xtics () scale 0
    do for [i = 1:nd] { set xtics add (word(devices, i) i) }
    unset mxtics
    set ylabel 'time per step (log scale)'
    set logscale y
    set yrange [t_min / 2.5:t_max * 80]
    set format y ''
    set ytics ()
    # Ticks at 1, 2, 5 times a power of ten when the range is short, at powers of ten when it is long.
    steps = t_max / t_min > 300 ? '1' : '1 2 5'
    do for [k = -1:8] {
        do for [m in steps] {
            v = m * 10**k
            if (v >= t_min / 2.5 && v <= t_max * 3) { set ytics add (tick(v) v) }
        }
    }
    set grid noxtics
    set key below vertical left Left reverse
    # The values upright above the bars, the host's share beside its dark bar.
    plot for [j = 1:3] $bars using 'x':(column('style') == j ? column('us') : NaN):(width * 0.95) \
             with boxes lt j title style_key(j), \
         $bars using 'x':'host':(width * 0.45) with boxes fill solid 0.9 lc rgb '#333333' notitle, \
         $bars using 'x':(column('us') * 1.3):(duration(column('us'))) with labels left rotate by 90 notitle, \
         $bars using 'x':(column('host') * 1.3):(column('host') < column('us') / 3 ? duration(column('host')) : '') \
             with labels left rotate by 90 tc rgb '#333333' notitle
}
