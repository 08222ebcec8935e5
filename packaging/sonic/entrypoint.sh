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
#   - FRR: the daemons run vtysh in the bgp container through the Docker Engine API, as
#     SONiC's own host vtysh does (docs/sonic.md: bgpd's vty TCP port is closed from 202505
#     on). /var/run/docker.sock is mounted by the manifest; its group id is the host's, and
#     twinrail joins a group of that id, as for Redis.
# Exit codes: 78 (EX_CONFIG) when the host is not set up as above.
set -euo pipefail

readonly DB_CONFIG=/var/run/redis/sonic-db/database_config.json
readonly DOCKER_SOCKET=/var/run/docker.sock
readonly FRR_CONTAINER=${TWINRAIL_FRR_CONTAINER:-bgp}
readonly USER_NAME=twinrail

log() { echo "twinrail-entrypoint: $*" >&2; }

# It goes into the daemons' command lines (supervisord splits them on spaces): a name only.
case "$FRR_CONTAINER" in
    '' | [!a-zA-Z0-9]* | *[!a-zA-Z0-9_.-]*)
        log "TWINRAIL_FRR_CONTAINER \"$FRR_CONTAINER\": not a container name"; exit 78 ;;
esac

if [ ! -r "$DB_CONFIG" ]; then
    log "$DB_CONFIG: missing; is /var/run/redis mounted (single-ASIC SONiC)?"
    exit 78
fi

# The Redis socket named in database_config.json's INSTANCES (redis.sock on SONiC).
socket=$(sed -n 's/.*"unix_socket_path"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$DB_CONFIG" |
         head -n 1)
# Joins user twinrail to the group that owns socket $1 (a group of that id, made when the
# image has none).
join_socket_group() {
    local gid group
    gid=$(stat -c %g "$1")
    case "$gid" in
        '' | *[!0-9]*) log "$1: no numeric group id"; exit 78 ;;
    esac
    group=$(getent group "$gid" | cut -d: -f1 || true)
    if [ -z "$group" ]; then
        group="$2"
        groupadd --gid "$gid" "$group"
    fi
    usermod --append --groups "$group" "$USER_NAME"
}

if [ -n "$socket" ] && [ -S "$socket" ]; then
    join_socket_group "$socket" sonic-redis
else
    log "no Redis unix socket in $DB_CONFIG; the daemons will use TCP"
fi

# FRR: vtysh in the bgp container. Without the Docker socket the daemons cannot reach FRR
# at all, which the manifest never allows: refused, not run half-blind.
if [ ! -S "$DOCKER_SOCKET" ]; then
    log "$DOCKER_SOCKET: not mounted; the daemons reach FRR in the $FRR_CONTAINER container through it"
    exit 78
fi
join_socket_group "$DOCKER_SOCKET" sonic-docker
export TWINRAIL_FRR_OPTS="--frr docker --frr-container $FRR_CONTAINER --docker-socket $DOCKER_SOCKET"

exec /usr/bin/supervisord --nodaemon --configuration /etc/supervisor/supervisord.conf
