#!/bin/sh
# with-secrets COMMAND [ARG...]: run COMMAND with the secrets of compose's forge processes, so
# `docker compose up` needs no environment and still has no fixed secret (docs/deploy.md
# "Compose"). Each secret NAME is read from $FORGE_SECRETS_DIR/NAME (the volume `secrets`), made
# there with 32 random bytes (64 hex digits: safe in a URL) by whichever process starts first and
# kept across restarts, so every process and container shares the same value:
#   EVENTS_SECRET, URL_SIGNING_SECRET  exported to COMMAND;
#   POSTGRES_PASSWORD                  read by the postgres image (POSTGRES_PASSWORD_FILE); put
#                                      into DATABASE_URL here;
#   MINIO_ROOT_PASSWORD                read by MinIO (MINIO_ROOT_PASSWORD_FILE) and the bucket job;
#                                      exported as AWS_SECRET_ACCESS_KEY here.
# A value given in the environment wins. The postgres and minio containers read only the files, so
# a given POSTGRES_PASSWORD or MINIO_ROOT_PASSWORD is written into the volume (by compose's
# one-shot service `secrets`, `with-secrets true`, before they start) and kept for later starts.
#
# DATABASE_URL and AWS_SECRET_ACCESS_KEY are made only when set to the empty string (compose's
# forge services), so a process that stores nothing never holds MinIO's password; DATABASE_URL is
# then postgresql://POSTGRES_USER:PASSWORD@POSTGRES_HOST/POSTGRES_DB. The two passwords themselves
# are not passed to COMMAND.
set -eu
dir="${FORGE_SECRETS_DIR:-/var/lib/forge/secrets}"

fail() {
    echo "with-secrets: $*" >&2
    exit 1
}

writable() {  # writable NAME: the volume can take NAME's file, or say why not
    [ -w "$dir" ] || fail "$1 is not set and $dir is not writable to keep it"
}

made() {  # made NAME: the volume's NAME, made on the first start
    file="$dir/$1"
    if [ ! -s "$file" ]; then
        writable "$1"
        tmp="$dir/.$1.$$"
        (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' > "$tmp")
        # ln refuses a name that exists: the first process wins, the others read its value.
        ln "$tmp" "$file" 2>/dev/null || true
        rm -f "$tmp"
    fi
    value=$(cat "$file")
    [ -n "$value" ] || fail "$file is empty: remove it to have it made again"
    printf '%s' "$value"
}

kept() {  # kept NAME VALUE: VALUE in the volume's NAME (replaced whole, never half written)
    file="$dir/$1"
    if [ ! -f "$file" ] || [ "$(cat "$file")" != "$2" ]; then
        writable "$1"
        tmp="$dir/.$1.$$"
        (umask 077 && printf '%s' "$2" > "$tmp")
        mv -f "$tmp" "$file"
    fi
}

secret() {  # secret NAME: the environment's NAME, else the volume's
    eval "given=\${$1:-}"
    if [ -n "$given" ]; then printf '%s' "$given"; else made "$1"; fi
}

shared() {  # shared NAME: as `secret`, and a given value is kept in the volume for the containers
    eval "given=\${$1:-}"
    if [ -n "$given" ]; then kept "$1" "$given"; fi
    made "$1"
}

url_quoted() {  # url_quoted TEXT: TEXT percent-encoded for a URL's user, password or path
    case $1 in
        *[!A-Za-z0-9._~-]*)
            printf '%s' "$1" | python -c 'import sys, urllib.parse
print(urllib.parse.quote(sys.stdin.buffer.read(), safe=""), end="")' ;;
        *) printf '%s' "$1" ;;
    esac
}

EVENTS_SECRET=$(secret EVENTS_SECRET)
URL_SIGNING_SECRET=$(secret URL_SIGNING_SECRET)
export EVENTS_SECRET URL_SIGNING_SECRET
postgres_password=$(shared POSTGRES_PASSWORD)
minio_password=$(shared MINIO_ROOT_PASSWORD)
unset POSTGRES_PASSWORD MINIO_ROOT_PASSWORD

if [ "${DATABASE_URL-unset}" = "" ]; then
    [ -n "${POSTGRES_USER:-}" ] && [ -n "${POSTGRES_HOST:-}" ] && [ -n "${POSTGRES_DB:-}" ] \
        || fail "DATABASE_URL is empty: POSTGRES_USER, POSTGRES_HOST and POSTGRES_DB make it"
    user=$(url_quoted "$POSTGRES_USER")
    password=$(url_quoted "$postgres_password")
    database=$(url_quoted "$POSTGRES_DB")
    export DATABASE_URL="postgresql://$user:$password@$POSTGRES_HOST/$database"
fi
if [ "${AWS_SECRET_ACCESS_KEY-unset}" = "" ]; then
    export AWS_SECRET_ACCESS_KEY="$minio_password"
fi
exec "$@"
