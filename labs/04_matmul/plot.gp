# plot.gp: lab 04's two figures, from the CSV of main.c (one row per device,
# variant and N: device, variant, n, ms, gflops, percent_of_peak, speedup).
# The program draws each --plot FIG twice with this script:
#   figure='gflops'   GFLOP/s against N, one line per device and variant, and
#                     the peak of each device that has its own (dashed);
#   figure='speedup'  (FIG-speedup) each GPU's speed-up over the CPU doing the
#                     same kind of work, with the break-even at 1x (dashed).
# Besides data, out, format and style it gets devices ('cpu sim:0') and
# device_names ('cpu: Intel Xeon, sim:0: simulated GPU'). To restyle, edit
# this file or the shared style and rerun the "redraw" line the program printed.
load style
if (!exists("figure")) figure = 'gflops'

array cpu_variants[3] = ['naive i-j-k', 'naive i-k-j', 'OpenBLAS']
array gpu_variants[2] = ['naive kernel', 'op_matmul']
array counterpart[2] = ['i-k-j', 'OpenBLAS']
ngpus = words(devices) - 1
gpu(i) = word(devices, i + 1)
simulated(d) = strstrt(d, 'sim:') == 1
any_simulated = strstrt(devices, 'sim:') > 0
# The devices with a peak of their own: a simulated GPU's is the CPU's.
own_peak = ''
# In a using clause: device d's peak, from a row of d (GFLOP/s and % of peak).
peak(d) = only('device', d, column('gflops') * 100 / column('percent_of_peak'))
do for [d in devices] { if (!simulated(d)) { own_peak = own_peak.' '.d } }
real_gpus_here = words(own_peak) - 1

# The key below the plot, in rows: the plot keeps the whole width.
set key outside bottom center horizontal maxcols 3 width 2 samplen 2.5
title_width = 70
stats data using 'n' nooutput
eval pow2_axis('x', STATS_min, STATS_max)
set xlabel 'matrix size N (N x N times N x N, float32)'
set logscale y 10
set format y '%g'

if (figure eq 'gflops') {
    set title "How fast is a matrix product? GFLOP/s on each device\n".wrap(device_names, title_width).load_line
    set ylabel 'GFLOP/s (log scale)'
    # Each device's peak, dashed in grey and named at its left end, inside the
    # plot: the range reaches above the highest peak and the highest point (a
    # run under load measures less, far under the peak, and a range from the
    # points alone put the peak's name over the title).
    stats data using 'gflops' nooutput
    y_low = STATS_min / 2
    y_high = STATS_max * 6
    do for [d in own_peak] {
        stats data using (peak(d)) nooutput
        if (STATS_max * 6 > y_high) { y_high = STATS_max * 6 }
        set label sprintf('peak of %s%s: %.0f GFLOP/s', d, d eq 'cpu' && any_simulated ? ' (and of a simulated GPU)' : '', STATS_max) \
            at graph 0.02, first STATS_max * 1.9 left front font text_font textcolor rgb '#555555'
    }
    set yrange [y_low : y_high]
    # (gnuplot reads a clause once even when its loop is empty: a run on the CPU
    # alone plots without the GPUs' clause, which would find no points.)
    if (ngpus > 0) {
        plot for [i = 1:3] data using 'n':(only2('device', 'cpu', 'variant', cpu_variants[i], column('gflops'))) \
                 with linespoints lt i title 'cpu '.cpu_variants[i], \
             for [g = 1:ngpus] for [i = 1:2] data \
                 using 'n':(only2('device', gpu(g), 'variant', gpu_variants[i], column('gflops'))) \
                 with linespoints lt 3 + i dt g title gpu(g).' '.gpu_variants[i], \
             for [d in own_peak] data using 'n':(peak(d)) with lines ls 100 notitle
    } else {
        plot for [i = 1:3] data using 'n':(only2('device', 'cpu', 'variant', cpu_variants[i], column('gflops'))) \
                 with linespoints lt i title 'cpu '.cpu_variants[i], \
             data using 'n':(peak('cpu')) with lines ls 100 notitle
    }
} else {
    # A simulated GPU computes on the CPU's own cores: its speed-up is about 1x
    # at best, and noise above 1x would read as a GPU win. The title says so.
    set title (any_simulated && real_gpus_here == 0 ? \
        "When does a GPU pay? A simulated GPU cannot show it:\nit computes on the CPU's own cores (1x at best; above 1x is noise)" : \
        "When does a GPU pay? Its speed-up over the CPU\n".wrap(device_names, title_width)).load_line
    set ylabel "speed-up: the CPU's time / the GPU's (log scale)"
    # The break-even's name where the curves are not: above the line on the
    # left with only a simulated GPU (its curves are below 1x), below it on the
    # right with a real one (its curves are above 1x at large N). A line of
    # text away from the dashed line, not a factor: at "first 1.4" a real
    # GPU's five decades put the text on the line (an H200's run).
    real_gpus = words(own_peak) - 1
    set label 1 'break-even: above, the GPU is faster' at graph (real_gpus ? 0.98 : 0.02), first 1 \
        front font text_font textcolor rgb '#555555'
    if (real_gpus) { set label 1 right offset 0, -1 } else { set label 1 left offset 0, 1 }
    set key maxcols 2 width -3
    if (any_simulated && real_gpus == 0) {
        set label "a real GPU's run: the lab's README" at graph 0.98, graph 0.08 right front textcolor rgb '#555555'
    }
    set ytics ('0.01x' 0.01, '0.03x' 0.03, '0.1x' 0.1, '0.3x' 0.3, '1x' 1, '3x' 3, '10x' 10, '30x' 30, \
               '100x' 100, '300x' 300, '1000x' 1000)
    stats data using 'speedup' nooutput
    set yrange [(STATS_min < 1 ? STATS_min : 1) / 2 : (STATS_max > 1 ? STATS_max : 1) * 3]
    plot for [g = 1:ngpus] for [i = 1:2] data \
             using 'n':(only2('device', gpu(g), 'variant', gpu_variants[i], column('speedup'))) \
             with linespoints lt 3 + i dt g title gpu(g).' '.gpu_variants[i].' / cpu '.counterpart[i], \
         1 with lines ls 100 notitle
}
