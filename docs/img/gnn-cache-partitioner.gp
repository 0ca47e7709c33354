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
0 0.0186412646538
0.05 0.0188243352176
0.1 0.0184263070174
0.25 0.0157292034439
0.5 0.0104978119895
1 0.00474953018854
EOD
$series1 << EOD
0 0.0220816173328
0.05 0.0218598176854
0.1 0.0212248543121
0.25 0.017943177596
0.5 0.011239820571
1 0.00502652506092
EOD
$series2 << EOD
0 0.0107895856189
0.05 0.0107798201241
0.1 0.0107378775277
0.25 0.00873041213435
0.5 0.00538266461213
1 0.00456110761199
EOD
plot $series0 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "bfs-block", \
     $series1 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "hash", \
     $series2 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "metis"
unset output
