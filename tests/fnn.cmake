# Fast network notifications (issue 34): libs/fnn's wire format, keys and receiver guard.
# Included from tests/CMakeLists.txt.
add_executable(fnn_test unit/fnn_test.cpp)
target_link_libraries(fnn_test PRIVATE twinrail_fnn GTest::gtest_main)
gtest_discover_tests(fnn_test PROPERTIES LABELS unit)
target_compile_definitions(fnn_test PRIVATE
  TWINRAIL_FNN_SEEDS="${CMAKE_SOURCE_DIR}/fuzz/corpus/fnn")

# The planner's provisioning of the keys, read back by planesteer's config parser.
add_executable(plan_notices_test unit/plan_notices_test.cpp)
target_link_libraries(plan_notices_test PRIVATE twinrail_plan planesteer_core GTest::gtest_main)
gtest_discover_tests(plan_notices_test PROPERTIES LABELS unit)
