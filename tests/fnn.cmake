# Fast network notifications (issue 34): libs/fnn's wire format, keys and receiver guard.
# Included from tests/CMakeLists.txt.
add_executable(fnn_test unit/fnn_test.cpp)
target_link_libraries(fnn_test PRIVATE twinrail_fnn GTest::gtest_main)
gtest_discover_tests(fnn_test PROPERTIES LABELS unit)
target_compile_definitions(fnn_test PRIVATE
  TWINRAIL_FNN_SEEDS="${CMAKE_SOURCE_DIR}/fuzz/corpus/fnn")
