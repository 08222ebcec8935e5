set terminal pngcairo size 1100,460
set output 'bench/results/polarisation.png'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:3]
set grid y
set key top right horizontal
set ylabel 'max / mean link load'
set title 'Hash polarisation: 128 equal UDP flows, 2 links per leaf-spine pair (median of 6)'
plot 'bench/results/polarisation.dat' using 2:xtic(1) title 'leaf1 uplinks', '' using 3 title 'spine links to leaf2', '' using 4 title 'within one spine', '' using 5 title 'uniform random (reference)'
