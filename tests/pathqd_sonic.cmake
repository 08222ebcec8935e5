# pathqd on SONiC (issue 20, part 3b): the weight audit over APPL_DB/ASIC_DB, the
# per-release weight rules, SONiC's static W-ECMP knob. Fixtures: ours in the tree, and
# SONiC's own test data next to the checkout (skipped when absent).
add_executable(pathqd_sonic_test unit/pathqd_sonic_test.cpp unit/pathqd_sonic_daemon_test.cpp)
target_link_libraries(pathqd_sonic_test PRIVATE pathqd_core GTest::gtest_main)
target_include_directories(pathqd_sonic_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fakes)
target_compile_definitions(pathqd_sonic_test PRIVATE
  TWINRAIL_PATHQD_SONIC_FIXTURES="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/pathqd-sonic"
  TWINRAIL_SONIC_SHARED="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-counters/fixtures")
gtest_discover_tests(pathqd_sonic_test PROPERTIES LABELS unit)
