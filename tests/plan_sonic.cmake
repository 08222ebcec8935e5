# The planner's SONiC target (issue 20, part 1): HWSKUs, port mapping, overlays, the CLI.
# It links pathqd's policy library to check the spines' frr.conf against pathqd's own
# route-maps, and runs the built twinrail-plan.
add_executable(plan_sonic_tests unit/plan_sonic_test.cpp unit/plan_sonic_cli_test.cpp
  unit/plan_sonic_routed_test.cpp unit/plan_sonic_evpn_test.cpp unit/roce_test.cpp
  unit/plan_server_files_test.cpp)
target_link_libraries(plan_sonic_tests PRIVATE twinrail_plan twinrail_plan_files pathqd_core
                      twinrail_frr GTest::gtest_main)
add_dependencies(plan_sonic_tests twinrail-plan)
target_compile_definitions(plan_sonic_tests PRIVATE
  TWINRAIL_PLAN_BIN="$<TARGET_FILE:twinrail-plan>"
  TWINRAIL_PLAN_HWSKU="${CMAKE_SOURCE_DIR}/libs/plan/hwsku"
  TWINRAIL_PLAN_SONIC_FIXTURES="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/plan-sonic"
  TWINRAIL_SONIC_SHARED_HWSKU="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-yang/hwsku"
  TWINRAIL_SONIC_RELEASES="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-releases")
gtest_discover_tests(plan_sonic_tests PROPERTIES LABELS unit)
# Per-release conformance: the release table and every seed overlay judged by each release's
# own files (../shared/fixtures/sonic-releases; the readers also on tests/fixtures).
add_executable(sonic_release_tests unit/sonic_release_test.cpp unit/sonic_deploy_test.cpp)
target_link_libraries(sonic_release_tests PRIVATE twinrail_plan twinrail_plan_files twinrail_sonic
                      GTest::gtest_main)
target_compile_definitions(sonic_release_tests PRIVATE
  TWINRAIL_PLAN_HWSKU="${CMAKE_SOURCE_DIR}/libs/plan/hwsku"
  TWINRAIL_PROTO_DIR="${CMAKE_SOURCE_DIR}/proto"
  TWINRAIL_MANIFEST_IN="${CMAKE_SOURCE_DIR}/packaging/sonic/manifest.in.json"
  TWINRAIL_OWN_RELEASES="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/sonic-releases-own"
  TWINRAIL_APPLY_FIXTURES="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/sonic-apply"
  TWINRAIL_CLI="$<TARGET_FILE:twinrail>"
  TWINRAIL_DOCS_DIR="${CMAKE_SOURCE_DIR}/docs"
  TWINRAIL_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  TWINRAIL_SONIC_SHARED_HWSKU="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-yang/hwsku"
  TWINRAIL_SONIC_RELEASES="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-releases")
add_dependencies(sonic_release_tests twinrail)
gtest_discover_tests(sonic_release_tests PROPERTIES LABELS unit)
