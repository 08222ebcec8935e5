# libs/sonic and `twinrail sonic-check` (issue 20, part 2b). Included from
# tests/CMakeLists.txt. SONiC's cases and sample config_db.json are read from
# /work/shared when it is there (those tests skip without it); tests/fixtures/sonic-check
# is always there.
add_executable(sonic_check_test unit/sonic_check_test.cpp unit/sonic_check_cli_test.cpp
  unit/sonic_check_sonic_test.cpp)
target_link_libraries(sonic_check_test PRIVATE twinrail_sonic twinrail_service GTest::gtest_main)
# The CLI's and a daemon's exit codes are checked on the built binaries.
target_compile_definitions(sonic_check_test PRIVATE
  TWINRAIL_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  TWINRAIL_CLI="$<TARGET_FILE:twinrail>"
  TWINRAIL_HOSTROUTED="$<TARGET_FILE:hostrouted>")
add_dependencies(sonic_check_test twinrail hostrouted)
gtest_discover_tests(sonic_check_test PROPERTIES LABELS unit)
