# twinrail's YANG models (proto/sonic-*.yang) against libyang and against the JSON Schemas
# (issue 20, part 2a). Included from tests/CMakeLists.txt.
add_executable(sonic_yang_schema_test unit/sonic_yang_schema_test.cpp
  unit/sonic_yang_compare_test.cpp unit/sonic_yang_compare.cpp)
target_link_libraries(sonic_yang_schema_test PRIVATE PkgConfig::LIBYANG nlohmann_json::nlohmann_json
  GTest::gtest_main)
# SONiC's own models next to the checkout when there (the test skips that half without
# them); our stand-ins for the few SONiC modules our modules import are always in the tree.
target_compile_definitions(sonic_yang_schema_test PRIVATE
  TWINRAIL_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  TWINRAIL_SONIC_YANG_SHARED="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-yang/yang-models")
gtest_discover_tests(sonic_yang_schema_test PROPERTIES LABELS unit)
