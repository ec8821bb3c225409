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

# The key below the plot, in rows: the plot keeps the whole width.
set key outside bottom center horizontal maxcols 3 width 2 samplen 2.5
title_width = 70
stats data using 'n' nooutput
eval pow2_axis('x', STATS_min, STATS_max)
set xlabel 'matrix size N (N x N times N x N, float32)'
set logscale y 10
set format y '%g'

if (figure eq 'gflops') {
    set title "How fast is a matrix product? GFLOP/s on each device\n".wrap(device_names, title_width)
    set ylabel 'GFLOP/s (log scale)'
    # Each device's peak, dashed in grey and named at its left end.
    do for [d in own_peak] {
        stats data using (peak(d)) nooutput
        set label sprintf('peak of %s%s: %.0f GFLOP/s', d, d eq 'cpu' && any_simulated ? ' (and of a simulated GPU)' : '', STATS_max) \
            at graph 0.02, first STATS_max * 1.35 left front font sprintf(',%g', font_size * 0.8) textcolor rgb '#555555'
    }
    stats data using 'gflops' nooutput
    set yrange [STATS_min / 2 : STATS_max * 4]
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
    set title "When does a GPU pay? Its speed-up over the CPU\n".wrap(device_names, title_width)
    set ylabel "speed-up: the CPU's time / the GPU's (log scale)"
    # The break-even's name where the curves are not: on the left with only a
    # simulated GPU (it is below 1x there), on the right with a real one.
    real_gpus = words(own_peak) - 1
    set label 'break-even: above, the GPU is faster' at graph (real_gpus ? 0.98 : 0.02), first 1.15 \
        front font sprintf(',%g', font_size * 0.8) textcolor rgb '#555555'
    if (real_gpus) { set label 1 right } else { set label 1 left }
    set key maxcols 2 width -3
    if (any_simulated) {
        set label 'a simulated GPU computes on the CPU''s own cores: at large N a tie (1x), the rest noise' at graph 0.98, graph 0.06 right front \
            font sprintf(',%g', font_size * 0.8) textcolor rgb '#555555'
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
