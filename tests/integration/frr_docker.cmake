# FRR through the Docker Engine API against Docker's engine and FRR in a container of its
# own in a namespace (tfd<pid>r1), as SONiC's bgp container: show, run, ensure, zebra in
# order, a container restart heard, a stopped or wrong container, a silent engine. Root and
# a running dockerd (scripts/test.sh starts one); about 20 s.
add_executable(frr_docker_it frr_docker_it.cpp)
target_link_libraries(frr_docker_it PRIVATE twinrail_frr twinrail_lab GTest::gtest_main)
gtest_discover_tests(frr_docker_it PROPERTIES LABELS integration TIMEOUT 180 DISCOVERY_TIMEOUT 30)
