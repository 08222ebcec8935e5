# FRR through the Docker Engine API (issue 33: the SONiC path on every release): the exec
# stream, request bodies, answers and events, fed bytes; no Docker, no root.
add_executable(frr_docker_unit_tests unit/frr_docker_test.cpp)
target_link_libraries(frr_docker_unit_tests PRIVATE twinrail_frr GTest::gtest_main)
gtest_discover_tests(frr_docker_unit_tests PROPERTIES LABELS unit)
