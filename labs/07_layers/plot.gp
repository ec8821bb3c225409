# plot.gp: lab 07's figure, from the CSV of main.c (one row per layer, part
# and n: device, layer, part, n, ms, gflops, input_bytes, extra_bytes, error).
# Three figures, one lesson each; the program draws each --plot FIG, figure=
#   time (FIG)          attention's time per part against the sequence length n, log-log:
#          Q K^T, the softmax and P V, and attention in one pass (step 7;
#          timed up to n = 1024 on the CPU or a simulated GPU), with a dashed
#          line that grows as n^2
#          (every part of unfused attention does, at large n); the whole
#          layer's time stays in the table (it also allocates its scores);
#   memory (FIG-memory) the memory each layer needs beyond its operands, measured with the
#          peak-memory counter, next to its input: the convolution through
#          im2col (its buffer is about R S times the input) and attention at
#          the longest n (its n x n scores), values on the bars;
#   peak (FIG-peak) attention's peak memory against n, the operands included (q, k, v
#          and out: 4/3 of the input column), log-log: the two products (the
#          'total' rows), which grows as n^2, and one pass, as n.
# Besides data, out, format and style it gets devices ('sim:0') and
# device_names ('sim:0: simulated GPU ...'). To restyle, edit this file or the
# shared style and rerun the "redraw" line the program printed.
load style

# ---- the figures the right panel needs, read from the table ----------------------
stats data using (only('layer', 'attention', column('n'))) nooutput
n_max = STATS_max
stats data using (only2('layer', 'conv', 'part', 'direct', column('input_bytes'))) nooutput
conv_input = STATS_max
stats data using (only2('layer', 'conv', 'part', 'im2col+matmul', column('extra_bytes'))) nooutput
conv_extra = STATS_max
at_longest(c) = strcol('part') eq 'total' && column('n') == n_max ? column(c) : NaN
stats data using (at_longest('input_bytes')) nooutput
qkv = STATS_max
stats data using (at_longest('extra_bytes')) nooutput
scores = STATS_max
# The n^2 line passes through the slowest part's time at the longest n.
part_at_longest(c) = strcol('layer') eq 'attention' && strcol('part') ne 'total' && column('n') == n_max ? column(c) : NaN
stats data using (part_at_longest('ms')) nooutput
top_at_longest = STATS_max

if (!exists("figure")) figure = 'time'
# The memory figure's four bars, one a line (the style reads a header line
# first, and commas; a data block cannot be made inside an if).
$bars << EOD
bar
0
1
2
3
EOD

if (figure eq 'time') {
    set title "Self-attention, one head: time per part against n\n".wrap(device_names, title_width).load_line
    stats data using (only('layer', 'attention', column('n'))) nooutput
    eval pow2_axis('x', STATS_min, STATS_max)
    set xlabel 'sequence length n'
    set ylabel 'milliseconds (log scale)'
    set logscale y 10
    set format y '%g'
    stats data using (strcol('layer') eq 'attention' && strcol('part') ne 'total' ? column('ms') : NaN) nooutput
    set yrange [STATS_min / 2 : STATS_max * 3]
    set key outside right top vertical Left reverse spacing 1.2 * ks samplen 2
    array parts[4] = ['Q K^T', 'softmax', 'P V', 'one pass']
    array names[4] = ['Q K^T (product)', 'softmax (your kernel)', 'P V (product)', 'one pass (your kernel)']
    attention(part) = only2('layer', 'attention', 'part', part, column('ms'))
    plot for [i = 1:4] data using 'n':(attention(parts[i])) with linespoints lt i title names[i], \
         top_at_longest * (x / n_max)**2 with lines ls 100 title 'grows as n²'
}

if (figure eq 'memory') {
    set title "Memory: a layer's input, and what it needs beyond it at its peak\n".wrap(device_names, title_width).load_line
    set bmargin 5.5
    set xrange [-0.6 : 3.6]
    set xtics ("conv\ninput x" 0, "conv\nim2col +\nproduct" 1, sprintf("attention\nQ, K, V\nn = %.0f", n_max) 2, \
               sprintf("attention\nn x n scores\nn = %.0f", n_max) 3) scale 0
    unset xlabel
    set ylabel 'bytes (log scale)'
    top = (conv_extra > scores ? conv_extra : scores)
    low = (conv_input < qkv ? conv_input : qkv)
    eval bytes_axis('y', low / 4, top * 8)
    unset mytics
    set grid noxtics
    set key outside right top vertical Left reverse samplen 1.5
    set style fill solid 0.85 border -1
    set boxwidth 0.6 absolute
    bar_bytes(i) = i == 0 ? conv_input : i == 1 ? conv_extra : i == 2 ? qkv : scores
    extra(i) = i == 1 || i == 3
    plot $bars using 1:(extra($1) ? NaN : bar_bytes($1)) with boxes lt 1 title 'the input', \
         $bars using 1:(extra($1) ? bar_bytes($1) : NaN) with boxes lt 2 title 'extra at the peak', \
         $bars using 1:(bar_bytes($1) * 1.4):(bytes(bar_bytes($1))) with labels notitle
}

if (figure eq 'peak') {
    set title "Attention: peak memory against n\n".wrap(device_names, title_width).load_line
    peak(part) = only2('layer', 'attention', 'part', part, column('input_bytes') * 4.0 / 3.0 + column('extra_bytes'))
    stats data using (peak('total')) nooutput
    top_peak = STATS_max
    stats data using (peak('one pass')) nooutput
    low_peak = STATS_min
    stats data using (only('layer', 'attention', column('n'))) nooutput
    eval pow2_axis('x', STATS_min, STATS_max)
    eval bytes_axis('y', low_peak / 2, top_peak * 2)
    set xlabel 'sequence length n'
    set ylabel 'bytes at the peak, q k v out included'
    set grid xtics ytics
    # Inside, top left, where both lines never go (they rise from the bottom
    # left): outside, the key took the room that n's labels need.
    set key inside left top vertical Left reverse spacing 1.2 * ks samplen 2 box opaque
    plot data using 'n':(peak('total')) with linespoints lt 1 title 'two products (n x n scores)', \
         data using 'n':(peak('one pass')) with linespoints lt 4 title 'one pass (step 7)'
}
