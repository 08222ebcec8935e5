// zebra's three EVPN views as FRR 8.4.4 printed them on a lab leaf (trimmed): one Ethernet
// segment (hbond1), a host only the ES peer learned (10.128.0.2, peerActive), and a remote
// VTEP's host (10.128.0.20). For the EVPN-MH unit tests.
#pragma once

namespace twinrail::hostrouted::fixture {

inline const char* const kEvpnArp = R"({"10001":{"numArpNd":2,
  "10.128.0.2":{"ip":"10.128.0.2","type":"local","state":"active","mac":"02:00:0a:80:00:02",
                "localInactive":true,"peerActive":true,"localSequence":0},
  "10.128.0.20":{"ip":"10.128.0.20","type":"remote","state":"active",
                 "mac":"02:00:00:00:00:20","remoteVtep":"10.253.0.1"}}})";
inline const char* const kEvpnMac = R"({"10001":{"numMacs":2,"macs":{
  "02:00:0a:80:00:02":{"type":"local","intf":"hbond1","ifindex":7825,"peerActive":true,
                       "esi":"03:44:38:39:ff:00:01:00:00:01","syncNeighCount":1},
  "02:00:00:00:00:20":{"type":"remote","remoteVtep":"10.253.0.1"}}}})";
inline const char* const kEvpnEs = R"([{"esi":"03:44:38:39:ff:00:01:00:00:01","accessPort":"hbond1",
  "flags":["local","readyForBgp","bridgePort","operUp"],"vniCount":0}])";

}  // namespace twinrail::hostrouted::fixture
