# dnnsim plot: gnn.epoch_time_s against workload.cache.fraction from /tmp/gnn-cache/results.csv
# Self-contained (the data is inline): `gnuplot THIS_FILE` redraws the figure.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 1000,600 font "sans,10"
} else {
  set terminal png noenhanced size 1000,600
}
set output "docs/img/gnn-cache-partitioner.png"
set title "gnn.epoch_time_s vs workload.cache.fraction by workload.partitioner"
set xlabel "workload.cache.fraction"
set ylabel "gnn.epoch_time_s"
set grid
set linetype 1 lc rgb "#0072B2" lw 2 pt 7
set linetype 2 lc rgb "#E69F00" lw 2 pt 7
set linetype 3 lc rgb "#009E73" lw 2 pt 7
set linetype 4 lc rgb "#CC79A7" lw 2 pt 7
set linetype 5 lc rgb "#D55E00" lw 2 pt 7
set linetype 6 lc rgb "#56B4E9" lw 2 pt 7
set linetype 7 lc rgb "#F0E442" lw 2 pt 7
set linetype 8 lc rgb "#000000" lw 2 pt 7
set linetype cycle 8
set key outside right top title "workload.partitioner"
set autoscale xfix
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
$series0 << EOD
0 0.0185246684699
0.05 0.0184135134162
0.1 0.0184424131655
0.25 0.0150576019286
0.5 0.010284911073
1 0.00707790425869
EOD
$series1 << EOD
0 0.0243540519096
0.05 0.0242016281294
0.1 0.0238918475273
0.25 0.0200872446376
0.5 0.012092260094
1 0.00613800792445
EOD
$series2 << EOD
0 0.0127705945873
0.05 0.0123484501301
0.1 0.0125727960321
0.25 0.0102097344068
0.5 0.00742974278103
1 0.00631867758184
EOD
plot $series0 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "bfs-block", \
     $series1 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "hash", \
     $series2 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "metis"
unset output
