// arsd: the software ARS data path (issue 22). Options, config source and signals are the
// shared service host's (SIGHUP re-reads, SIGTERM detaches and exits 0); the logic is
// Daemon's, and the kernel it drives is built here (realEdges) and passed in.
#include "edges.h"
#include "service_hooks.h"

int main(int argc, char** argv) {
    return twinrail::service::serviceMain(twinrail::arsd::serviceSpec(), argc, argv,
                                          twinrail::arsd::serviceHooks(twinrail::arsd::realEdges));
}
