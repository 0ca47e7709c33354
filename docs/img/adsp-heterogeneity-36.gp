# dnnsim plot: parameter_server.time_to_target_s against parameter_server.heterogeneity_degree from /tmp/sw-adsp/results.csv
# Self-contained (the data is inline): `gnuplot THIS_FILE` redraws the figure.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 1000,600 font "sans,10"
} else {
  set terminal png noenhanced size 1000,600
}
set output "docs/img/adsp-heterogeneity-36.png"
set title "ADSP-like comparison, 36 workers: time to the target loss vs heterogeneity degree H"
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
1.45 465.653089316
2 688.405167188
2.6 931.044734645
3.2 1169.99980465
EOD
$series1 << EOD
1.45 60.0750850472
2 60.0925280099
2.6 60.0424992926
3.2 60.1769088748
EOD
$series2 << EOD
1.45 607.253127094
2 827.122669045
2.6 1066.98035117
3.2 1306.8380333
EOD
$series3 << EOD
1.45 20.3533184597
2 22.9941553298
2.6 26.6068710951
3.2 31.3209058404
EOD
plot $series0 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "adacomm", \
     $series1 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "adsp", \
     $series2 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "bsp", \
     $series3 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "ssp"
unset output
