# The flow-level fabric model (issue 23): closed forms, the lab's load-balancing runs, the
# model's parts. Plans are built in-process by the planner; no files, no root.
add_executable(sim_unit_tests unit/sim_closed_form_test.cpp unit/sim_lab_test.cpp
  unit/sim_model_test.cpp unit/sim_cli_test.cpp)
target_link_libraries(sim_unit_tests PRIVATE twinrail_sim twinrail_plan GTest::gtest_main)
add_dependencies(sim_unit_tests twinrail-sim)
target_compile_definitions(sim_unit_tests PRIVATE TWINRAIL_SIM_BIN="$<TARGET_FILE:twinrail-sim>")
gtest_discover_tests(sim_unit_tests PROPERTIES LABELS unit)
