#!/bin/sh
# As the official redis image: `redis-server …` runs as `redis` in /data, with protected mode off
# when no configuration file is given; any other command runs as is.
set -eu
if [ "${1:-}" = redis-server ]; then
  shift
  case "${1:-}" in *.conf) ;; *) set -- --protected-mode no "$@" ;; esac
  [ "$(id -u)" = 0 ] && chown -R redis:redis /data
  exec setpriv --reuid=redis --regid=redis --init-groups redis-server "$@"
fi
exec "$@"
