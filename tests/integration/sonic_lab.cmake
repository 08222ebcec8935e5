# The namespace lab in SONiC's layout (issue 20, part 5; `twinrail-lab up --nos sonic`):
# the lab smoke test on EthernetN ports, VLAN bridges, CONFIG_DB and database_config.json
# (root, namespaces), and the layout's pure decisions (lab/lib/test, unit).
add_executable(sonic_lab_it sonic_lab_it.cpp)
target_link_libraries(sonic_lab_it PRIVATE twinrail_lab nlohmann_json::nlohmann_json GTest::gtest_main)
target_compile_definitions(sonic_lab_it PRIVATE HOSTROUTED_BIN="$<TARGET_FILE:hostrouted>"
                           PATHQD_BIN="$<TARGET_FILE:pathqd>" TWINRAIL_LAB_BIN="$<TARGET_FILE:twinrail-lab>"
                           TWINRAIL_BIN="$<TARGET_FILE:twinrail>")
add_dependencies(sonic_lab_it hostrouted pathqd twinrail-lab twinrail)
gtest_discover_tests(sonic_lab_it PROPERTIES LABELS integration TIMEOUT 240 DISCOVERY_TIMEOUT 30)

add_executable(sonic_layout_tests ${CMAKE_SOURCE_DIR}/lab/lib/test/sonic_layout_test.cpp)
target_link_libraries(sonic_layout_tests PRIVATE twinrail_lab twinrail_plan_files
                      nlohmann_json::nlohmann_json GTest::gtest_main)
target_compile_definitions(sonic_layout_tests PRIVATE
  TWINRAIL_LAB_HWSKU_DIR="${CMAKE_SOURCE_DIR}/lab/hwsku")
gtest_discover_tests(sonic_layout_tests PROPERTIES LABELS unit)

# The SONiC package's image on the lab's SONiC layout (label sonic-image: scripts/test.sh
# runs it after scripts/sonic-package.sh built the image; the default lab, about a minute).
file(STRINGS ${CMAKE_SOURCE_DIR}/debian/changelog twinrail_changelog LIMIT_COUNT 1)
string(REGEX MATCH "\\(([0-9.]+)\\)" _ "${twinrail_changelog}")
add_executable(sonic_image_it sonic_image_it.cpp)
target_link_libraries(sonic_image_it PRIVATE twinrail_lab nlohmann_json::nlohmann_json GTest::gtest_main)
target_compile_definitions(sonic_image_it PRIVATE HOSTROUTED_BIN="$<TARGET_FILE:hostrouted>"
                           PATHQD_BIN="$<TARGET_FILE:pathqd>" TWINRAIL_LAB_BIN="$<TARGET_FILE:twinrail-lab>"
                           TWINRAIL_BIN="$<TARGET_FILE:twinrail>"
                           TWINRAIL_VERSION="${CMAKE_MATCH_1}"
                           TWINRAIL_SONIC_RELEASES="${CMAKE_SOURCE_DIR}/../shared/fixtures/sonic-releases")
add_dependencies(sonic_image_it hostrouted pathqd twinrail-lab twinrail)
gtest_discover_tests(sonic_image_it PROPERTIES LABELS sonic-image TIMEOUT 300 DISCOVERY_TIMEOUT 30)
