set terminal pngcairo size 1330,822 font ',9'
set output 'bench/results/failure_matrix_heat.png'
set datafile separator '\t'
set title "Failure matrix: p95 of each flow's longest silence, ms (and flows never recovered)\ngreen <= 20 ms, yellow <= 250 ms, red beyond or a flow lost"
unset key
unset colorbox
set xtics scale 0 ("before\nbond" 0, "before\nrouted" 1, "before\nbond+steer" 2, "before\nevpn-mh" 3, "bond" 4, "routed" 5, "evpn-mh" 6)
set bmargin 4
set ytics scale 0 ("baseline, toward-same-rail" 0, "baseline, toward-other-rail" 1, "baseline, away" 2, "nic-port down, toward-same-rail" 3, "nic-port down, toward-other-rail" 4, "nic-port down, away" 5, "nic-port restored, toward-same-rail" 6, "nic-port restored, toward-other-rail" 7, "nic-port restored, away" 8, "leaf down, toward-same-rail" 9, "leaf down, toward-other-rail" 10, "leaf down, away" 11, "leaf restored, toward-same-rail" 12, "leaf restored, toward-other-rail" 13, "leaf restored, away" 14, "spine down, toward-same-rail" 15, "spine down, toward-other-rail" 16, "spine down, away" 17, "spine restored, toward-same-rail" 18, "spine restored, toward-other-rail" 19, "spine restored, away" 20, "leaf-spine-link down, toward-same-rail" 21, "leaf-spine-link down, toward-other-rail" 22, "leaf-spine-link down, away" 23, "leaf-spine-link restored, toward-same-rail" 24, "leaf-spine-link restored, toward-other-rail" 25, "leaf-spine-link restored, away" 26)
set xrange [-0.5:6.5]
set yrange [26.5:-0.5]
set cbrange [0:4.3]
set palette defined (0 '#1a9850', 1.3 '#a6d96a', 1.31 '#fee08b', 2.4 '#fdae61', 2.41 '#f46d43', 4.3 '#a50026')
plot 'bench/results/failure_matrix_heat.dat' using 1:2:3 with image, '' using 1:2:4 with labels
