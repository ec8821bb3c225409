# plot.gp: lab 10's figure, for a slide: the time of one all-reduce against
# the buffer's size, log-log, your ring and MPI_Allreduce, each as measured
# (points) and as its fitted line t = a + bytes / B (latency a, bandwidth B).
# The CSV (main.c's results table) has one row per method and size; its
# columns are method, bytes, us, fit_us and gbps. The program passes data,
# out, format, style, devices and device_names, and the fits ring_a, ring_b,
# mpi_a and mpi_b (us, and us per byte).
load style

set title "One all-reduce over the ranks\n".wrap(device_names, title_width).load_line
set xlabel 'buffer on each rank'
set ylabel 'time of one all-reduce (us)'
set logscale xy
set xrange [2:32 * 1024 * 1024]
set xtics ('4 B' 4, '64 B' 64, '1 KiB' 1024, '16 KiB' 16384, '256 KiB' 262144, '4 MiB' 4194304)
set format y '%g'
set key top left inside opaque
set grid
set samples 400
# The fits come as strings: numbers from here on.
ring_a = ring_a + 0.0; ring_b = ring_b + 0.0; mpi_a = mpi_a + 0.0; mpi_b = mpi_b + 0.0
ring(x) = ring_a + ring_b * x
mpi(x) = mpi_a + mpi_b * x
plot data using (strcol('method') eq 'your ring' ? column('bytes') : NaN):'us' with points pt 7 ps 1.8 lc 1 \
         title 'your ring', \
     ring(x) with lines lw 3 lc 1 dt 2 title sprintf('your ring: %.2g us + bytes / %.2f GB/s', ring_a, 1e-3 / ring_b), \
     data using (strcol('method') eq 'MPI_Allreduce' ? column('bytes') : NaN):'us' with points pt 5 ps 1.8 lc 2 \
         title 'MPI_Allreduce', \
     mpi(x) with lines lw 3 lc 2 dt 2 title sprintf('MPI_Allreduce: %.2g us + bytes / %.2f GB/s', mpi_a, 1e-3 / mpi_b)
