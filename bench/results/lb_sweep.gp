set terminal pngcairo size 1000,520
set output 'bench/results/lb_sweep.png'
set grid
set xlabel 'UDP probe: datagrams arriving after a later one (%)'
set ylabel 'permutation: ideal / job time'
set yrange [0:1.15]
set xrange [-1:*]
set key bottom right
set title 'Balance against reordering: flowlet ARS idle times (us) and every mode, permutation'
plot 'bench/results/lb_sweep.dat' using 5:3 with linespoints pt 7 title 'ARS flowlet-quality, idle sweep', '' using 5:3:(sprintf('%d', $2)) with labels offset 0,-1 notitle, 'bench/results/lb_sweep_modes.dat' using 2:3 with points pt 5 title 'modes (table)', '' using 2:3:1 with labels offset 0,1 notitle
