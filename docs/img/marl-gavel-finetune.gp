# dnnsim plot: mean_jct_s against episodes from scenarios/papers/cluster/policies/marl-gavel-finetune-validation.csv
# Self-contained (the data is inline): `gnuplot THIS_FILE` redraws the figure.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 1000,600 font "sans,10"
} else {
  set terminal png noenhanced size 1000,600
}
set output "docs/img/marl-gavel-finetune.png"
set title "marl-gavel.yaml: A2C at 3e-4 from the clones, greedy validation mean JCT (teacher 12,558 s)"
set xlabel "episodes"
set ylabel "mean_jct_s"
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
set key outside right top title "training_seed"
set autoscale xfix
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
$series0 << EOD
0 12559
50 12529
100 12495
150 12494
200 12624
250 12416
300 12463
400 12423
500 12731
600 12548
EOD
$series1 << EOD
0 12367
50 12349
100 12666
150 12341
200 12232
250 12429
300 12211
400 12223
500 12553
600 12249
EOD
$series2 << EOD
0 12657
50 12634
100 12651
150 12404
200 12349
250 12661
300 12632
400 12703
500 12447
600 12550
EOD
$series3 << EOD
0 12542
50 12419
100 12433
150 12292
200 12522
250 12470
300 12209
400 12209
500 12423
600 12424
EOD
$series4 << EOD
0 12583
50 12435
100 12450
150 12450
200 12480
250 12557
300 12357
400 12434
500 12498
600 12547
EOD
plot $series0 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "1", \
     $series1 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "2", \
     $series2 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "3", \
     $series3 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "4", \
     $series4 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "5"
unset output
