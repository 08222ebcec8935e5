set terminal pngcairo size 1100,440
set output 'bench/results/lb.png'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:1.35]
set grid y
set key top center horizontal
set title 'Load balancing, 4x4 leaf, 100 Mbit/s links (median of the jobs)'
plot 'bench/results/lb.dat' using 2:xtic(1) title 'permutation: ideal / job', '' using 3 title 'one spine path at 1/4: goodput / max-flow', '' using 4 title 'all-to-all: ideal / job'
