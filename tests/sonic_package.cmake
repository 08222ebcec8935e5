# The SONiC Application Extension package (packaging/sonic): manifest, labels, init-cfg
# through `twinrail sonic-check`, the image's files, the click plugins (run with Debian's
# /usr/bin/python3 and python3-click). Reads the source tree; writes only temp dirs.
add_executable(sonic_package_test unit/sonic_package_test.cpp unit/sonic_package_files_test.cpp
  unit/sonic_package_cli_test.cpp)
target_link_libraries(sonic_package_test PRIVATE nlohmann_json::nlohmann_json GTest::gtest_main)
target_compile_definitions(sonic_package_test PRIVATE
  TWINRAIL_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  TWINRAIL_CLI="$<TARGET_FILE:twinrail>")
add_dependencies(sonic_package_test twinrail)
gtest_discover_tests(sonic_package_test PROPERTIES LABELS unit)
