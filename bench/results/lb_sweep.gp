set terminal pngcairo size 1000,520
set output 'bench/results/lb_sweep.png'
set grid
set logscale x
set xlabel 'flowlet idle time (us, log); half the idle RTT is 63 us'
set ylabel 'permutation: ideal / job time'
set yrange [0:1.15]
set y2label 'reordering (%)'
set y2tics
set y2range [0:0.1<*]
set ytics nomirror
set key center right
set title 'ARS flowlet-quality (local): balance and reordering against idle time, permutation'
plot 'bench/results/lb_sweep.dat' using 2:3 with linespoints pt 7 lw 2 title 'ideal / job', '' using 2:5 axes x1y2 with linespoints pt 5 title 'UDP probe late (%)', '' using 2:4 axes x1y2 with linespoints pt 9 title 'TCP reordering events / segment (%)', 0 axes x1y2 with lines dt 2 title 'single path: UDP late (%)'
