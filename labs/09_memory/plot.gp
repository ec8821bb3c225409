# plot.gp: lab 09's figure, from the CSV of main.c (one row per kernel: part,
# kernel, n, stride, ms, gbs, peak_share, gflops, intensity, roof, loads,
# atomics, error). Two figures, one lesson each; the program draws each --plot
# FIG twice, figure=
#   stride (FIG)           the strided copy's GB/s against its stride (log-log), under the
#          device's peak bandwidth (dashed): coalesced at stride 1, then each
#          warp's request spread over more and more 32-byte sectors;
#   roofline (FIG-roofline) the roofline: every kernel that computes, as a point of FLOP per
#          byte (its least traffic) and achieved GFLOP/s, under the device's
#          two roofs, peak bandwidth x intensity and the FP32 peak, which meet
#          at the ridge; the copy's own bandwidth (it does no arithmetic, so
#          it has no point) as the roof it reached in practice, dotted.
# Besides data, out, format and style it gets devices, device_names and the
# lab's peak_gbs, peak_gflops (the device's) and library (the name of the
# library's product in the table). To restyle, edit this file or the shared
# style and rerun the "redraw" line the program printed.
load style

bw = peak_gbs + 0
peak = peak_gflops + 0
stats data using (only('kernel', 'copy', column('gbs'))) nooutput
copy_gbs = STATS_max

if (!exists("figure")) figure = 'stride'

if (figure eq 'stride') {
    set title "Coalescing: a strided copy's GB/s against its stride\n".wrap(device_names, title_width).load_line
    stats data using (only('kernel', 'strided copy', column('stride'))) nooutput
    eval pow2_axis('x', STATS_min, STATS_max)
    set xlabel 'stride between neighbouring threads (floats)'
    set ylabel 'GB/s (log scale)'
    set logscale y 10
    set format y '%g'
    stats data using (only('kernel', 'strided copy', column('gbs'))) nooutput
    low = STATS_min
    set yrange [low / 3 : bw * 3]
    set key outside right top vertical Left reverse samplen 2
    plot data using 'stride':(only('kernel', 'strided copy', column('gbs'))) with linespoints lt 1 title 'strided copy', \
         bw with lines ls 100 title sprintf('peak %.0f GB/s', bw)
}

if (figure eq 'roofline') {
    set title "The roofline: FLOP per byte against GFLOP/s\n".wrap(device_names, title_width).load_line
    set logscale x 10
    set logscale y 10
    set mxtics 10
    set format x '%g'
    set format y '%g'
    set xlabel 'FLOP per byte (of the least traffic)'
    set ylabel 'GFLOP/s (log scale)'
    stats data using (column('intensity') > 0 ? column('intensity') : NaN) nooutput
    ridge = peak / bw
    x_low = STATS_min < ridge ? STATS_min : ridge
    x_high = STATS_max > ridge ? STATS_max : ridge
    set xrange [x_low / 4 : x_high * 4]
    stats data using (column('intensity') > 0 ? column('gflops') : NaN) nooutput
    set yrange [STATS_min / 4 : peak * 8]
    set samples 400
    roof(x) = x * bw < peak ? x * bw : peak
    practical(x) = x * copy_gbs < peak ? x * copy_gbs : NaN
    set key outside right top vertical Left reverse samplen 1.2 spacing 1.0 * ks
    set label 1 sprintf('ridge: %.3g FLOP/B', ridge) at ridge, peak * 2.2 center
    array names[8] = ['scale', 'atomic sum', 'tree sum', 'tree+warp sum', 'softmax (op)', 'naive', 'tiled', library]
    array labels[8] = ['scale', 'sum: one atomic each', 'sum: tree', 'sum: tree + warp', 'softmax (library)', 'naive product', 'tiled product', library.' product']
    array types[8] = [7, 5, 9, 11, 13, 4, 6, 8]
    plot roof(x) with lines lt 7 title 'roofs: peak BW, peak FP32', \
         practical(x) with lines lt 8 dt 3 title sprintf(copy_gbs >= 100 ? 'copy: %.0f GB/s' : 'copy: %.3g GB/s', copy_gbs), \
         for [i = 1:8] data using 'intensity':(only('kernel', names[i], column('gflops'))) with points \
             lt (i - 1) % 6 + 1 pt types[i] ps 1.5 * ps_scale * 1.5 title labels[i]
}
