# ARS config the SONiC way and path quality (issue 22): parseArsConfig, PortQuality and
# remoteBands, and the planner's --lb ars|ars-global|spray read back and through the YANG
# check. Included from tests/CMakeLists.txt.

add_executable(ars_config_test unit/ars_config_test.cpp)
target_link_libraries(ars_config_test PRIVATE twinrail_ars GTest::gtest_main)
gtest_discover_tests(ars_config_test PROPERTIES LABELS unit)

add_executable(ars_quality_test unit/ars_quality_test.cpp)
target_link_libraries(ars_quality_test PRIVATE twinrail_ars GTest::gtest_main)
gtest_discover_tests(ars_quality_test PROPERTIES LABELS unit)

# The planner's config_db for every --lb mode (Linux and SONiC targets), parsed back by
# libs/ars, and the SONiC overlays through SONiC's models plus proto/linux/twinrail-ars.yang and
# proto/linux/twinrail-global-ars.yang (skipped without SONiC's models next to the checkout).
add_executable(plan_ars_test unit/plan_ars_test.cpp)
target_link_libraries(plan_ars_test PRIVATE twinrail_ars twinrail_plan twinrail_plan_files
                      twinrail_sonic GTest::gtest_main)
target_compile_definitions(plan_ars_test PRIVATE
  TWINRAIL_PLAN_HWSKU="${CMAKE_SOURCE_DIR}/libs/plan/hwsku"
  TWINRAIL_PROTO_DIR="${CMAKE_SOURCE_DIR}/proto"
  TWINRAIL_SONIC_YANG_SHARED="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-yang/yang-models")
gtest_discover_tests(plan_ars_test PROPERTIES LABELS unit)
