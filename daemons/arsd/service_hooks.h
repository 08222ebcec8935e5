// arsd as the shared service host runs it: its name, tables and hooks. Apart from main.cpp
// so that a unit test runs the very hooks that ship (bad config refused with 78) on fakes.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>

#include "edges.h"
#include "twinrail/service/service.h"

namespace twinrail::arsd {

service::ServiceSpec serviceSpec();
using EdgesFactory = std::function<Edges(boost::asio::io_context& io)>;
service::Hooks serviceHooks(EdgesFactory edges);

}  // namespace twinrail::arsd
