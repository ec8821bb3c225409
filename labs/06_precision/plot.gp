# plot.gp: lab 06's four figures, one step's lesson each, from one table. The
# program draws each --plot FIG four times with this script, figure= one of:
#   copy   (FIG)        the bytes and the copy time of one matrix in each
#                       precision, as fractions of FP32's (step 2);
#   error  (FIG-error)  the relative error of a product against float64 as k
#                       grows, with each precision's unit roundoff dashed
#                       (steps 3 and 4);
#   speed  (FIG-speed)  TFLOP/s of N x N products here (solid), beside what
#                       PyTorch measured on an H100 (dashed) (step 5);
#   train  (FIG-train)  the training loss of lab 05's MLP with FP32 and with
#                       BF16 products, the held-out accuracy in the key (step 6).
#
# The CSV (main.c's table) has the columns part (copy, error, speed, train),
# device, precision (FP32, TF32, BF16, F16), bytes, copy_ms, k, error,
# unit_roundoff, n, tflops, peak_percent, epoch, loss and accuracy; a row
# fills the columns of its part. The copy rows come first, one per precision
# in that order. The program passes data, out, format, style, devices,
# device_names, figure and tensor_cores (1 when the device has them). To
# restyle it, edit this file or the shared style, then rerun the "redraw"
# line the program printed.
load style
if (!exists("tensor_cores")) tensor_cores = '0'
if (!exists("figure")) figure = 'copy'
here = word(devices, 1)
precisions = 'FP32 TF32 BF16 F16'
p(i) = word(precisions, i)
set key outside right top vertical samplen 2 spacing 1.2 * ks

if (figure eq 'copy') {
    stats data using (only2('part', 'copy', 'precision', 'FP32', column('bytes'))) nooutput
    fp32_bytes = STATS_max
    stats data using (only2('part', 'copy', 'precision', 'FP32', column('copy_ms'))) nooutput
    fp32_ms = STATS_max
    set title wrap(sprintf('Step 2: half the bits, half the bytes, half the copy: a %s FP32 matrix copied to %s', \
        bytes(fp32_bytes), device_names), title_width).load_line
    set ylabel 'fraction of FP32'
    set yrange [0:1.3]
    set ytics 0.25 format '%.2f'
    set xrange [-0.6:3.6]
    set xtics ('FP32' 0, 'TF32' 1, 'BF16' 2, 'F16' 3) scale 0
    set grid noxtics ytics
    half = 0.2
    # The values upwards from the bars' feet, in black on light bars, readable
    # even where a short bar ends below its label's end.
    plot data using ($0 - half):(only('part', 'copy', column('bytes') / fp32_bytes)):(2 * half) \
             with boxes fs solid 0.45 lt 1 title 'bytes', \
         data using ($0 + half):(only('part', 'copy', column('copy_ms') / fp32_ms)):(2 * half) \
             with boxes fs solid 0.45 lt 2 title 'copy time', \
         data using ($0 - half):(only('part', 'copy', 0.03)):(bytes(column('bytes'))) \
             with labels left rotate by 90 notitle, \
         data using ($0 + half):(only('part', 'copy', 0.03)):(sprintf('%.2f ms', column('copy_ms'))) \
             with labels left rotate by 90 notitle
}

if (figure eq 'error') {
    set title wrap('Steps 3, 4: fewer mantissa bits, more error (unit roundoff dashed), on '.device_names, title_width).load_line
    stats data using (only('part', 'error', column('k'))) nooutput
    # k grows by 4: a tic at each one measured.
    set logscale x 2
    set xrange [STATS_min / 1.4:STATS_max * 1.4]
    set xtics ()
    do for [j = int(floor(log(STATS_min) / log(4) + 0.5)):int(floor(log(STATS_max) / log(4) + 0.5))] {
        set xtics add (sprintf('%.0f', 4.0**j) 4.0**j)
    }
    set mxtics 1
    set xlabel 'k, the inner dimension'
    set logscale y 10
    set yrange [1e-8:1]
    set ytics 100 format '10^{%L}'
    set mytics 10
    set ylabel 'relative error against float64'
    plot for [i=1:4] data using 'k':(only2('part', 'error', 'precision', p(i), column('error'))) \
             with linespoints lt i title p(i), \
         for [i=1:4] data using 'k':(only2('part', 'error', 'precision', p(i), column('unit_roundoff'))) \
             with lines lt i dt 2 lw 0.6 * lw notitle
}

if (figure eq 'speed') {
    set title wrap('Step 5: TFLOP/s on '.device_names.' (solid) and on an H100 with PyTorch (dashed)', title_width).load_line
    if (tensor_cores ne '1') {
        set label 1 sprintf('%s has no tensor cores:', here)."\nevery precision is float32 arithmetic" \
            at graph 0.97, graph 0.12 right front textcolor rgb '#555555'
    }
    stats data using (only('part', 'speed', column('n'))) nooutput
    eval pow2_axis('x', STATS_min, STATS_max)
    set xlabel 'N (N x N times N x N)'
    set logscale y 10
    set yrange [*:5000]
    set ytics 10 format '%g'
    set mytics 10
    set ylabel 'TFLOP/s (log scale)'
    plot for [i=1:4] data using 'n':(only2('part', 'speed', 'device', here, \
             strcol('precision') eq p(i) ? column('tflops') : NaN)) with linespoints lt i title p(i), \
         for [i=1:4] data using 'n':(only2('part', 'speed', 'device', 'H100 (PyTorch)', \
             strcol('precision') eq p(i) ? column('tflops') : NaN)) with linespoints lt i dt 2 pt 0 notitle
}

if (figure eq 'train') {
    stats data using (only('part', 'train', column('epoch'))) nooutput
    last_epoch = STATS_max
    eval integer_axis('x', STATS_min, STATS_max)
    stats data using (only2('part', 'train', 'precision', 'FP32', column('epoch') == last_epoch ? column('accuracy') : NaN)) nooutput
    fp32_accuracy = STATS_max
    stats data using (only2('part', 'train', 'precision', 'BF16', column('epoch') == last_epoch ? column('accuracy') : NaN)) nooutput
    bf16_accuracy = STATS_max
    set title wrap(sprintf("Step 6: lab 05's MLP still learns with BF16 products, on %s", device_names), title_width).load_line
    set key outside bottom center horizontal
    set xlabel 'epoch'
    set ylabel 'training loss'
    set yrange [0:*]
    set ytics auto format '%.1f'
    plot data using 'epoch':(only2('part', 'train', 'precision', 'FP32', column('loss'))) with linespoints lt 1 \
             title sprintf('FP32: %.1f%% held-out', fp32_accuracy), \
         data using 'epoch':(only2('part', 'train', 'precision', 'BF16', column('loss'))) with linespoints lt 3 dt 2 ps 0.7 * ps \
             title sprintf('BF16: %.1f%% held-out', bf16_accuracy)
}
