# plot.gp: lab 10's figure, for a slide: the time of one all-reduce against
# the buffer's size, log-log, your ring and MPI_Allreduce, each as measured
# (points) and as its fitted line t = a + bytes / B (latency a, bandwidth B).
# The CSV (main.c's results table) has one row per method and size; its
# columns are method, bytes, us, fit_us and gbps. The program passes data,
# out, format, style, devices and device_names.
load style

set title sprintf("All-reduce of one buffer over the ranks (%s)", device_names)
set xlabel 'buffer per rank'
set ylabel 'time of one all-reduce (us)'
set logscale xy
set format x '%.0s%cB'
set format y '%g'
set key top left
set grid
plot data using (strcol('method') eq 'your ring' ? column('bytes') : NaN):'us' with points pt 7 ps 1.5 lc 1 title 'your ring (measured)', \
     data using (strcol('method') eq 'your ring' ? column('bytes') : NaN):'fit_us' with lines lw 2 lc 1 dt 2 title 'your ring: a + bytes / B', \
     data using (strcol('method') eq 'MPI_Allreduce' ? column('bytes') : NaN):'us' with points pt 5 ps 1.5 lc 2 title 'MPI\_Allreduce (measured)', \
     data using (strcol('method') eq 'MPI_Allreduce' ? column('bytes') : NaN):'fit_us' with lines lw 2 lc 2 dt 2 title 'MPI\_Allreduce: a + bytes / B'
