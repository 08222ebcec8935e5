# hostrouted on a SONiC-shaped switch (issue 20, part 3a): a real bridge Vlan1001 with two
# member veths, hosts behind each, platform sonic. Needs root. Included from
# tests/integration/CMakeLists.txt.
add_executable(hostrouted_svi_it hostrouted_svi_it.cpp)
target_link_libraries(hostrouted_svi_it PRIVATE twinrail_lab twinrail_netlink
                      nlohmann_json::nlohmann_json GTest::gtest_main)
target_compile_definitions(hostrouted_svi_it PRIVATE HOSTROUTED_BIN="$<TARGET_FILE:hostrouted>")
add_dependencies(hostrouted_svi_it hostrouted)
gtest_discover_tests(hostrouted_svi_it PROPERTIES LABELS integration TIMEOUT 120
                     DISCOVERY_TIMEOUT 30)
