# The ARS tc program (issue 22). Unit: its decisions through BPF_PROG_TEST_RUN with
# synthetic time (root or CAP_BPF; about a second). Integration: the real edge in
# namespaces arsf<pid>* (host -- leaf == two uplinks == two sinks), per-packet spraying and
# detach giving back kernel forwarding (root; a few seconds).
add_executable(ars_bpf_unit_tests unit/ars_bpf_test.cpp unit/ars_bpf_choice_test.cpp)
target_link_libraries(ars_bpf_unit_tests PRIVATE twinrail_ars GTest::gtest_main)
gtest_discover_tests(ars_bpf_unit_tests TEST_PREFIX ars_ PROPERTIES LABELS unit TIMEOUT 60)

add_executable(ars_forward_it integration/ars_forward_it.cpp)
target_link_libraries(ars_forward_it PRIVATE twinrail_ars twinrail_common GTest::gtest_main)
gtest_discover_tests(ars_forward_it TEST_PREFIX ars_ PROPERTIES LABELS integration TIMEOUT 60
                     DISCOVERY_TIMEOUT 30)
