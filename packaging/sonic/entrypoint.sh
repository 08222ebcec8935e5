#!/bin/bash
# The twinrail container's entrypoint on a SONiC switch (docker_init.sh in SONiC's own
# containers): prepares what the unprivileged daemons need from the host, then hands the
# container to supervisord, which runs hostrouted and pathqd (supervisord.conf).
#
# The container is privileged (the manifest has no capability list); the daemons are not:
# supervisord starts each through setpriv as user twinrail with only its capabilities.
# What they need from the host, and what this script does about it:
#   - Redis: /var/run/redis (mounted by sonic-package-manager's container script) holds
#     database_config.json and the unix socket, group redis 0760 on the host. The socket's
#     group id is the host's, not this image's: twinrail joins a group of that id.
#   - FRR: the daemons talk to bgpd and zebra in the bgp container over their vty TCP
#     ports on 127.0.0.1, with the password in /etc/sonic/twinrail/frr-vty-password on the
#     host (root, mode 0600). It is copied to the tmpfs /run/twinrail for user twinrail.
# Exit codes: 78 (EX_CONFIG) when the host is not set up as above.
set -euo pipefail

readonly DB_CONFIG=/var/run/redis/sonic-db/database_config.json
readonly HOST_PASSWORD=/etc/sonic/twinrail/frr-vty-password
readonly PASSWORD=/run/twinrail/frr-vty-password
readonly USER_NAME=twinrail

log() { echo "twinrail-entrypoint: $*" >&2; }

if [ ! -r "$DB_CONFIG" ]; then
    log "$DB_CONFIG: missing; is /var/run/redis mounted (single-ASIC SONiC)?"
    exit 78
fi

# The Redis socket named in database_config.json's INSTANCES (redis.sock on SONiC).
socket=$(sed -n 's/.*"unix_socket_path"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$DB_CONFIG" |
         head -n 1)
if [ -n "$socket" ] && [ -S "$socket" ]; then
    gid=$(stat -c %g "$socket")
    case "$gid" in
        '' | *[!0-9]*) log "$socket: no numeric group id"; exit 78 ;;
    esac
    group=$(getent group "$gid" | cut -d: -f1 || true)
    if [ -z "$group" ]; then
        group=sonic-redis
        groupadd --gid "$gid" "$group"
    fi
    usermod --append --groups "$group" "$USER_NAME"
else
    log "no Redis unix socket in $DB_CONFIG; the daemons will use TCP"
fi

# FRR's vty password. Without it the daemons run without FRR: hostrouted still routes
# hosts (bgpcfgd advertises them from STATE_DB), pathqd measures but publishes nothing.
frr_options="--no-frr-check"
if [ -f "$HOST_PASSWORD" ]; then
    mode=$(stat -c %a "$HOST_PASSWORD")
    if [ "$((8#$mode & 8#077))" -ne 0 ]; then
        log "$HOST_PASSWORD: mode $mode; must not be readable by group or others (chmod 600)"
        exit 78
    fi
    install -d -m 0750 -o root -g "$USER_NAME" /run/twinrail
    install -m 0400 -o "$USER_NAME" -g "$USER_NAME" "$HOST_PASSWORD" "$PASSWORD"
    # The daemons' vty-TCP FRR channel (libs/frr, makeVtyTcpFrr).
    frr_options="--frr vty-tcp --frr-password-file $PASSWORD"
else
    log "$HOST_PASSWORD: missing; running without FRR (pathqd publishes no weights)"
fi
export TWINRAIL_FRR_OPTS="$frr_options"

exec /usr/bin/supervisord --nodaemon --configuration /etc/supervisor/supervisord.conf
