# dnnsim plot: mean.throughput_samples_per_s against cluster.node_types.t4-box.nic.link from /tmp/sw-gpu-mix-vs-bandwidth/results.csv
# Self-contained (the data is inline): `gnuplot THIS_FILE` redraws the figure.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 1000,600 font "sans,10"
} else {
  set terminal png noenhanced size 1000,600
}
set output "docs/img/gpu-mix-vs-bandwidth.png"
set title "VGG-19 DDP, 4 V100 + 4 x GPU: throughput vs NIC"
set xlabel "cluster.node_types.t4-box.nic.link"
set ylabel "mean.throughput_samples_per_s"
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
set key outside right top title "cluster.node_types.t4-box.gpu"
set xtics ("Ethernet-10G" 0, "Ethernet-25G" 1, "Ethernet-100G" 2, "Ethernet-200G" 3)
set xrange [-0.5:3.5]
set offsets 0, 0, graph 0.05, graph 0.05
$series0 << EOD
0 170.933437042
1 272.376703744
2 399.444709037
3 414.685747855
EOD
$series1 << EOD
0 170.448312641
1 271.14697842
2 396.805536498
3 411.842051732
EOD
$series2 << EOD
0 171.095759423
1 272.789094666
2 400.332252
3 415.642393457
EOD
$series3 << EOD
0 162.320598279
1 262.031246074
2 362.268893535
3 372.461266593
EOD
plot $series0 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "A10", \
     $series1 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "L4", \
     $series2 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "RTX4090", \
     $series3 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title "T4"
unset output
