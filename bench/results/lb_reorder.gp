set terminal pngcairo size 1000,420
set output 'bench/results/lb_reorder.png'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set grid y
set ylabel 'percent (log)'
set key top left
set title 'Reordering, permutation: TCP reordering detected by the senders and late UDP datagrams'
plot 'bench/results/lb_reorder.dat' using 2:xtic(1) title 'TCP reordering events / segment sent', '' using 3 title 'UDP probe: late datagrams'
