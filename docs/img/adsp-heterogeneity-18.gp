# dnnsim plot: parameter_server.time_to_target_s against parameter_server.heterogeneity_degree from /tmp/sw-adsp/results.csv
# Self-contained (the data is inline): `gnuplot THIS_FILE` redraws the figure.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 1000,600 font "sans,10"
} else {
  set terminal png noenhanced size 1000,600
}
set output "docs/img/adsp-heterogeneity-18.png"
set title "ADSP-like comparison, 18 workers: time to the target loss vs heterogeneity degree H"
set xlabel "parameter_server.heterogeneity_degree"
set ylabel "parameter_server.time_to_target_s"
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
set key outside right top title "workload.sync"
set autoscale xfix
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
$series0 << EOD
1.45 430.205890737
2 652.808798413
2.6 894.581078383
3.2 1133.00200199
EOD
$series1 << EOD
1.45 60.0681197442
2 60.085562707
2.6 60.1299769396
3.2 60.1588824207
EOD
$series2 << EOD
1.45 513.692195047
2 734.038677437
2.6 974.416658224
3.2 1214.79463901
EOD
$series3 << EOD
1.45 29.0692100999
2 38.6107602203
2.6 50.6108404438
3.2 62.8619952997
EOD
plot $series0 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "adacomm", \
     $series1 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "adsp", \
     $series2 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "bsp", \
     $series3 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "ssp"
unset output
