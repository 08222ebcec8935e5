# arsd (issue 22). Unit tests: the daemon's orchestration on a fake Datapath and route feed. Its
# headers (config.h, daemon.h) share names with the other daemons': built apart.
if(TWINRAIL_SANITIZER_SUITE)
  add_executable(arsd_unit_tests unit/arsd_mirror_test.cpp unit/arsd_daemon_test.cpp
                 unit/arsd_config_test.cpp)
  target_link_libraries(arsd_unit_tests PRIVATE arsd_core GTest::gtest_main)
  target_include_directories(arsd_unit_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fakes
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit)
  gtest_discover_tests(arsd_unit_tests PROPERTIES LABELS unit)

  # arsd on a real kernel: namespaces, a kernel multipath route, spray, a withdrawal, SIGTERM
  # (root; about 5 s). Label integration-asan: CI runs it with arsd under ASan + UBSan.
  add_executable(ars_lab_it integration/ars_lab_it.cpp)
  target_link_libraries(ars_lab_it PRIVATE twinrail_lab nlohmann_json::nlohmann_json GTest::gtest_main)
  target_compile_definitions(ars_lab_it PRIVATE ARSD_BIN="$<TARGET_FILE:arsd>")
  add_dependencies(ars_lab_it arsd)
  gtest_discover_tests(ars_lab_it PROPERTIES LABELS integration-asan TIMEOUT 60 DISCOVERY_TIMEOUT 30)
endif()
