#!/bin/bash
# A Docker engine for the tests and the lab's SONiC layout (FRR in a container per switch,
# reached through the Docker Engine API as on SONiC), started here when none answers.
#   scripts/dockerd.sh start   start dockerd unless `docker info` answers; prints "started"
#                              when this call started it (so the caller stops it)
#   scripts/dockerd.sh stop    stop the dockerd that `start` started (its pid file)
# Exit codes: 0 ok, 69 (EX_UNAVAILABLE) dockerd did not answer within 30 s.
set -euo pipefail
readonly PIDFILE=/run/twinrail-dockerd.pid
readonly LOG=/tmp/twinrail-dockerd.log
case "${1:-}" in
    start)
        if docker info >/dev/null 2>&1; then exit 0; fi
        # The machine's own dockerd, if systemd knows it; else one in the background.
        if command -v systemctl >/dev/null 2>&1 && systemctl start docker >/dev/null 2>&1 &&
           docker info >/dev/null 2>&1; then
            exit 0
        fi
        nohup dockerd --pidfile "$PIDFILE" >"$LOG" 2>&1 &
        for _ in $(seq 300); do
            if docker info >/dev/null 2>&1; then echo started; exit 0; fi
            sleep 0.1
        done
        echo "dockerd did not answer within 30 s; see $LOG" >&2
        exit 69
        ;;
    stop)
        [ -f "$PIDFILE" ] || exit 0
        pid=$(cat "$PIDFILE")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        ;;
    *) echo "usage: $0 start|stop" >&2; exit 64 ;;
esac
