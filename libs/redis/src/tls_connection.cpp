#include "tls_connection.h"

#include <hiredis/hiredis.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <functional>

namespace twinrail::redis::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

TlsConnection::TlsConnection() : ssl_(asio::ssl::context::tls_client) {}

TlsConnection::~TlsConnection() {
    if (reader_ != nullptr) redisReaderFree(reader_);
}

bool TlsConnection::runUntil(const bool& done, const char* what) {
    io_.restart();
    io_.run_for(timeout_);
    if (done) return true;
    error_code ignored;
    if (stream_) stream_->lowest_layer().close(ignored);
    io_.restart();
    io_.run();  // the cancelled handlers finish here, before their captures go
    error_ = std::string(what) + " timed out after " + std::to_string(timeout_.count()) + " ms";
    return false;
}

std::optional<std::string> TlsConnection::connect(const Endpoint& endpoint,
                                                  std::chrono::milliseconds timeout) {
    timeout_ = timeout;
    const TlsOptions& t = endpoint.tls;
    const std::string where = "Redis at " + endpoint.describe();
    error_code ec;
    SSL_CTX_set_min_proto_version(ssl_.native_handle(), TLS1_2_VERSION);
    if (t.caFile.empty()) {
        ssl_.set_default_verify_paths(ec);
    } else {
        ssl_.load_verify_file(t.caFile, ec);
    }
    if (ec)
        return "TLS CA file " + (t.caFile.empty() ? "(system)" : t.caFile) + ": " + ec.message();
    if (!t.certFile.empty()) {
        ssl_.use_certificate_chain_file(t.certFile, ec);
        if (!ec) ssl_.use_private_key_file(t.keyFile, asio::ssl::context::pem, ec);
        if (ec) return "TLS client certificate " + t.certFile + ": " + ec.message();
    }
    ssl_.set_verify_mode(asio::ssl::verify_peer);
    stream_ = std::make_unique<asio::ssl::stream<tcp::socket>>(io_, ssl_);

    // OpenSSL checks the name during the handshake: an IP address against the
    // certificate's IP SANs, a DNS name (also sent as SNI) against its DNS names.
    const std::string name = t.serverName.empty() ? endpoint.host : t.serverName;
    X509_VERIFY_PARAM* param = SSL_get0_param(stream_->native_handle());
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    asio::ip::make_address(name, ec);
    if (!ec) {
        X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
    } else {
        X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
        SSL_set_tlsext_host_name(stream_->native_handle(), name.c_str());
    }

    bool done = false;
    error_code opEc;
    tcp::resolver resolver(io_);
    resolver.async_resolve(endpoint.host, std::to_string(endpoint.port),
                           [&](const error_code& e, const tcp::resolver::results_type& results) {
                               if (e) {
                                   opEc = e;
                                   done = true;
                                   return;
                               }
                               asio::async_connect(stream_->lowest_layer(), results,
                                                   [&](const error_code& e2, const tcp::endpoint&) {
                                                       opEc = e2;
                                                       done = true;
                                                   });
                           });
    io_.restart();
    io_.run_for(timeout_);
    if (!done) {
        resolver.cancel();
        error_code ignored;
        stream_->lowest_layer().close(ignored);
        io_.restart();
        io_.run();
        return "cannot reach " + where + ": timed out after " + std::to_string(timeout.count()) +
               " ms";
    }
    if (opEc) return "cannot reach " + where + ": " + opEc.message();

    done = false;
    stream_->async_handshake(asio::ssl::stream_base::client, [&](const error_code& e) {
        opEc = e;
        done = true;
    });
    if (!runUntil(done, "TLS handshake")) return where + ": " + error_;
    if (opEc) {
        std::string why = opEc.message();
        long verify = SSL_get_verify_result(stream_->native_handle());
        if (verify != X509_V_OK) {
            why += std::string(" (") + X509_verify_cert_error_string(verify) + "; expected name " +
                   name + ")";
        }
        return "TLS handshake with " + where + " failed: " + why;
    }
    reader_ = redisReaderCreate();
    if (reader_ == nullptr) return where + ": out of memory";
    return std::nullopt;
}

redisReply* TlsConnection::roundTrip(const std::vector<std::string>& args) {
    if (!stream_ || reader_ == nullptr || !stream_->lowest_layer().is_open()) {
        if (error_.empty()) error_ = "not connected";
        return nullptr;
    }
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.c_str());
        lens.push_back(a.size());
    }
    char* formatted = nullptr;
    int len =
        redisFormatCommandArgv(&formatted, static_cast<int>(args.size()), argv.data(), lens.data());
    if (len < 0) {
        error_ = "out of memory";
        return nullptr;
    }
    std::string out(formatted, static_cast<size_t>(len));
    redisFreeCommand(formatted);

    bool done = false;
    error_code opEc;
    asio::async_write(*stream_, asio::buffer(out), [&](const error_code& e, size_t) {
        opEc = e;
        done = true;
    });
    if (!runUntil(done, "sending the command")) return nullptr;
    if (opEc) {
        error_ = "connection lost: " + opEc.message();
        return nullptr;
    }
    std::array<char, 16384> buf{};
    for (;;) {
        void* reply = nullptr;
        if (redisReaderGetReply(reader_, &reply) != REDIS_OK) {
            error_ = std::string("protocol error: ") + reader_->errstr;
            stream_->lowest_layer().close(opEc);
            return nullptr;
        }
        if (reply != nullptr) return static_cast<redisReply*>(reply);
        done = false;
        size_t got = 0;
        stream_->async_read_some(asio::buffer(buf), [&](const error_code& e, size_t n) {
            opEc = e;
            got = n;
            done = true;
        });
        if (!runUntil(done, "reading the reply")) return nullptr;
        if (opEc) {
            error_ = "connection lost: " + opEc.message();
            return nullptr;
        }
        redisReaderFeed(reader_, buf.data(), got);
    }
}

}  // namespace twinrail::redis::detail
