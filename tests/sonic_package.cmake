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
# The package against each release's own sonic-package-manager (SONiC's Python, from
# ../shared/fixtures/sonic-releases): dependency check and install/upgrade's init-cfg.
add_executable(sonic_package_release_tests unit/sonic_package_release_test.cpp)
target_link_libraries(sonic_package_release_tests PRIVATE twinrail_plan twinrail_plan_files
                      nlohmann_json::nlohmann_json GTest::gtest_main)
target_compile_definitions(sonic_package_release_tests PRIVATE
  TWINRAIL_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  TWINRAIL_PLAN_HWSKU="${CMAKE_SOURCE_DIR}/libs/plan/hwsku"
  TWINRAIL_SONIC_RELEASES="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-releases")
gtest_discover_tests(sonic_package_release_tests PROPERTIES LABELS unit)
