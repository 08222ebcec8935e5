# FRR over its vty TCP ports against real zebra and bgpd (FRR 8.4) in a namespace
# (tfv<pid>a): show, running-config, run, ensure, a wrong password, a timeout, a bgpd
# restart seen by watchRestarts. Root; about 15 s.
add_executable(frr_vty_it frr_vty_it.cpp)
target_link_libraries(frr_vty_it PRIVATE twinrail_frr twinrail_lab GTest::gtest_main)
gtest_discover_tests(frr_vty_it PROPERTIES LABELS integration TIMEOUT 120 DISCOVERY_TIMEOUT 30)
