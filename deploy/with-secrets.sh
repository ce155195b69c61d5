#!/bin/sh
# with-secrets COMMAND [ARG...]: run COMMAND with EVENTS_SECRET and URL_SIGNING_SECRET set, so
# `docker compose up` needs no environment and still has no fixed secret (docs/deploy.md
# "Compose"). A secret given in the environment wins; otherwise it is read from
# $FORGE_SECRETS_DIR/<NAME> (a volume), made there with 32 random bytes by whichever process
# starts first and kept across restarts, so every process shares the same value.
set -eu
dir="${FORGE_SECRETS_DIR:-/var/lib/forge/secrets}"
for name in EVENTS_SECRET URL_SIGNING_SECRET; do
    eval "given=\${$name:-}"
    [ -n "$given" ] && continue
    file="$dir/$name"
    if [ ! -s "$file" ]; then
        if [ ! -w "$dir" ]; then
            echo "with-secrets: $name is not set and $dir is not writable to make it" >&2
            exit 1
        fi
        tmp="$dir/.$name.$$"
        (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' > "$tmp")
        # ln refuses a name that exists: the first process wins, the others read its value.
        ln "$tmp" "$file" 2>/dev/null || true
        rm -f "$tmp"
    fi
    value=$(cat "$file")
    export "$name=$value"
done
exec "$@"
