set terminal pngcairo size 1000,440
set output 'bench/results/sim.png'
set multiplot layout 1,2 title 'twinrail-sim: job time / ideal, CX864E-N, dual plane (median of 20 seeds)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid y
set key below horizontal
set yrange [0:*]
set title 'permutation'
plot for [i=2:6] 'bench/results/sim.dat' using i:xtic(1) title columnhead(i) noenhanced
set title 'all-to-all (expert groups of 32 GPUs)'
plot for [i=7:11] 'bench/results/sim.dat' using i:xtic(1) title columnhead(i) noenhanced
unset multiplot
