# hostrouted on a SONiC switch (issue 20, part 3a): hosts on SVIs behind their member
# ports, platform sonic, advertise table-direct and network-table. Included from
# tests/CMakeLists.txt.
add_executable(hostrouted_svi_test unit/hostrouted_svi_test.cpp)
target_link_libraries(hostrouted_svi_test PRIVATE hostrouted_core GTest::gtest_main)
target_include_directories(hostrouted_svi_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fakes
                           ${CMAKE_CURRENT_SOURCE_DIR}/unit)
gtest_discover_tests(hostrouted_svi_test PROPERTIES LABELS unit)

# SONiC's vlanmgrd shape (vlan devices on one VLAN-aware bridge), with the fake kernel only:
# this kernel cannot build it.
add_executable(hostrouted_svi_vlan_test unit/hostrouted_svi_vlan_test.cpp)
target_link_libraries(hostrouted_svi_vlan_test PRIVATE hostrouted_core GTest::gtest_main)
target_include_directories(hostrouted_svi_vlan_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fakes
                           ${CMAKE_CURRENT_SOURCE_DIR}/unit)
gtest_discover_tests(hostrouted_svi_vlan_test PROPERTIES LABELS unit)
