# FRR over its vty TCP ports (issue 20, part 3c): the protocol reader, the line-to-daemon
# routing and the password file, fed bytes and files; no FRR, no network, no root.
add_executable(frr_vty_unit_tests unit/frr_vty_test.cpp)
target_link_libraries(frr_vty_unit_tests PRIVATE twinrail_frr GTest::gtest_main)
gtest_discover_tests(frr_vty_unit_tests PROPERTIES LABELS unit)
