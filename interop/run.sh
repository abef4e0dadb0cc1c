#!/usr/bin/env bash
# Interoperability walks between this workspace and the official MCP SDKs:
#
#   ts-client.mjs   official TypeScript SDK client  -> our `everything` server (tokio, async-std)
#   ts-examples.mjs, py-examples.py  both SDK clients -> the copyable examples (notes-server,
#                   macros, axum-server, smol-server), by the steps of examples.json
#   ts-basic-client.mjs  the same client            -> `no-runtime-server` (examples/no-runtime:
#                   the core driven with blocking IO, no async runtime)
#                   and, over HTTP, -> `everything --transport sse` (Streamable HTTP at /mcp and
#                   legacy HTTP+SSE at /sse on one port, tokio)
#   py-client.py    official Python SDK client      -> our `everything` server (tokio, async-std)
#   ts-auth.mjs, py-auth.py  both SDK clients with a bearer token over HTTPS -> `everything --auth-jwks` (our
#                   server as an OAuth resource server; the JWKS and tokens from auth-server.mjs)
#   ts-client.mjs, ts2-client.mjs, py-modern-client.py -> two `everything --redis` instances
#                   (tokio and async-std) sharing a redis-server behind rr-proxy.mjs (round robin
#                   per connection): one server across processes, in both eras
#   interop-client  our typed Rust client           -> official @modelcontextprotocol/server-everything
#                   over stdio, Streamable HTTP, legacy HTTP+SSE, and the probe (to both)
#
# and in the stateless era (protocol 2026-07-28), per runtime, over stdio and Streamable HTTP
# (the default endpoint and --stateless):
#
#   ts2-client.mjs       TypeScript SDK v2 client (pin and auto) -> everything --eras both
#   py-modern-client.py  Python SDK client (2026-07-28 and auto) -> everything --eras both
#   interop-client --fixtures (Discovery::Discover and Auto)     -> ts2-server.mjs (TypeScript SDK
#                        v2 server, handshake refused) and py-server.py (Python SDK server), over
#                        stdio and Streamable HTTP
#
# Installs the pinned dependencies (npm ci; a venv with pip --require-hashes), builds the two
# Rust binaries, runs every walk and fails if any check failed. The last line is
# "interop: N passed, M failed" (", K skipped" follows when a walk skipped a step).
#
# Environment:
#   CARGO_TARGET_DIR        where cargo builds (default: the workspace's target/)
#   INTEROP_SKIP_INSTALL=1  use node_modules/ and .venv/ as they are
#   INTEROP_SKIP_BUILD=1    use the binaries already built (debug profile)
#   INTEROP_RUNTIMES        runtimes of our server to walk (default: "tokio async-std")
#   INTEROP_REQUIRE_LISTEN=0  a server without subscriptions/listen (-32601) skips those steps
#                           instead of failing them
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
BIN="$TARGET_DIR/debug"
RUNTIMES="${INTEROP_RUNTIMES:-tokio async-std}"
WALK_TIMEOUT=180

cd "$HERE"

need() {
    command -v "$1" >/dev/null 2>&1 || { echo "interop: $1 is required but not found" >&2; exit 1; }
}
need node
need npm
need python3
need cargo

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
    echo "interop: Node >= 20 is required (found $(node --version))" >&2
    exit 1
fi

# --------------------------------------------------------------------------------- install
# Each install is skipped when its lockfile did not change since the last successful one.
stamp_of() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }

if [ "${INTEROP_SKIP_INSTALL:-0}" != 1 ]; then
    npm_stamp="$(stamp_of package.json package-lock.json)"
    if [ "$(cat node_modules/.interop-stamp 2>/dev/null)" != "$npm_stamp" ]; then
        echo "== npm ci"
        npm ci --no-audit --no-fund --loglevel=error
        echo "$npm_stamp" > node_modules/.interop-stamp
    fi
    py_stamp="$(stamp_of requirements.lock; python3 --version)"
    if [ "$(cat .venv/.interop-stamp 2>/dev/null)" != "$py_stamp" ]; then
        echo "== python venv + pip install --require-hashes -r requirements.lock"
        rm -rf .venv
        python3 -m venv .venv
        # Only the index: a machine's PIP_FIND_LINKS could offer other builds of a pinned version.
        env -u PIP_FIND_LINKS .venv/bin/python -m pip install --quiet --disable-pip-version-check \
            --require-hashes --no-deps --only-binary=:all: -r requirements.lock
        echo "$py_stamp" > .venv/.interop-stamp
    fi
fi

# ----------------------------------------------------------------------------------- build
if [ "${INTEROP_SKIP_BUILD:-0}" != 1 ]; then
    echo "== cargo build -p mcp-examples --bin everything --bin interop-client; -p mcp-example-no-runtime"
    (cd "$ROOT" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --quiet -p mcp-examples --bin everything --bin interop-client \
        --bin notes-server --bin axum-server --bin smol-server --bin macros)
    (cd "$ROOT" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --quiet -p mcp-example-no-runtime)
fi
for b in everything interop-client no-runtime-server notes-server axum-server smol-server macros; do
    [ -x "$BIN/$b" ] || { echo "interop: $BIN/$b was not built" >&2; exit 1; }
done

# ------------------------------------------------------------------------------------- run
total_passed=0
total_failed=0
total_skipped=0
results=()

# walk NAME COMMAND...: runs one walk, echoes its output, adds up its closing line.
walk() {
    local name="$1"
    shift
    echo
    echo "== $name"
    local out status=0
    out="$(mktemp)"
    timeout --kill-after=5 "$WALK_TIMEOUT" "$@" 2>&1 | tee "$out" || status=$?
    local summary passed failed skipped=0
    summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$out" | tail -n 1 || true)"
    rm -f "$out"
    if [ -n "$summary" ]; then
        passed="${summary%% passed*}"
        failed="${summary#*, }"
        failed="${failed%% failed*}"
        case "$summary" in *skipped) skipped="${summary##*failed, }"; skipped="${skipped%% skipped}" ;; esac
    else
        passed=0
        failed=1
        echo "FAIL $name: no summary line (exit status $status)"
    fi
    if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
        failed=1
        echo "FAIL $name: exit status $status"
    fi
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
    total_skipped=$((total_skipped + skipped))
    local skip_note=""
    [ "$skipped" -gt 0 ] && skip_note=", $skipped skipped"
    if [ "$failed" -eq 0 ]; then
        results+=("pass  $name ($passed checks$skip_note)")
    else
        results+=("FAIL  $name ($passed passed, $failed failed$skip_note)")
    fi
}

for rt in $RUNTIMES; do
    server=("$BIN/everything" --runtime "$rt" --transport stdio)
    walk "ts-client (TypeScript SDK) -> everything --runtime $rt" node ts-client.mjs -- "${server[@]}"
    walk "py-client (Python SDK) -> everything --runtime $rt" .venv/bin/python py-client.py -- "${server[@]}"
done
walk "ts-basic-client (TypeScript SDK) -> no-runtime-server (the core alone, no runtime)" \
    node ts-basic-client.mjs -- "$BIN/no-runtime-server"

# The copyable examples (examples/src/bin), each walked by both official SDK clients with the
# steps of examples.json: notes-server over stdio; axum-server (its own bearer-token middleware
# in front of the MCP endpoint: refused without a token) and smol-server over Streamable HTTP.
walk "ts-examples (TypeScript SDK) -> notes-server" node ts-examples.mjs notes-server -- "$BIN/notes-server"
walk "py-examples (Python SDK) -> notes-server" .venv/bin/python py-examples.py notes-server -- "$BIN/notes-server"
walk "ts-examples (TypeScript SDK) -> macros (a #[tool] server)" node ts-examples.mjs macros -- "$BIN/macros"
walk "py-examples (Python SDK) -> macros (a #[tool] server)" .venv/bin/python py-examples.py macros -- "$BIN/macros"
example_pids=()
stop_examples() { for p in "${example_pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_examples EXIT
# start_example BIN VAR: starts an HTTP example on a free port (in this shell, so that
# stop_examples knows its pid) and sets VAR to the URL it prints.
start_example() {
    local log url
    log="$(mktemp)"
    "$BIN/$1" 0 >"$log" 2>&1 &
    example_pids+=("$!")
    for _ in $(seq 1 100); do
        url="$(grep -oE 'http://[0-9.]+:[0-9]+/mcp' "$log" | head -n 1 || true)"
        if [ -n "$url" ]; then
            printf -v "$2" '%s' "$url"
            return 0
        fi
        sleep 0.1
    done
    echo "interop: $1 did not start: $(cat "$log")" >&2
    return 1
}
axum_url=""
smol_url=""
if start_example axum-server axum_url && start_example smol-server smol_url; then
    for sdk in ts py; do
        if [ "$sdk" = ts ]; then c=(node ts-examples.mjs); n="ts-examples (TypeScript SDK)"; else c=(.venv/bin/python py-examples.py); n="py-examples (Python SDK)"; fi
        walk "$n -> axum-server with a bearer token" "${c[@]}" axum-server --url "$axum_url" --header "Authorization: Bearer alice-secret"
        walk "$n -> axum-server without a token" "${c[@]}" axum-server --url "$axum_url" --refused
        walk "$n -> smol-server" "${c[@]}" smol-server --url "$smol_url"
    done
else
    total_failed=$((total_failed + 1))
    results+=("FAIL  the HTTP examples did not start")
fi
stop_examples

SE="$HERE/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
walk "interop-client (mcp-rs) -> @modelcontextprotocol/server-everything" \
    "$BIN/interop-client" -- node "$SE" stdio

# The HTTP walks: server-everything's `streamableHttp` (/mcp) and `sse` (/sse, /message)
# transports, each on a free loopback port (PORT), stopped on exit.
http_pids=()
stop_http() { for p in "${http_pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_http EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start_se MODE PORT: starts server-everything in MODE on PORT; waits until it accepts.
start_se() {
    PORT="$2" node "$SE" "$1" >/dev/null 2>&1 &
    http_pids+=("$!")
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "interop: server-everything $1 did not listen on port $2" >&2
    return 1
}
http_port="$(free_port)"
sse_port="$(free_port)"
if start_se streamableHttp "$http_port" && start_se sse "$sse_port"; then
    walk "interop-client (mcp-rs, Streamable HTTP) -> server-everything streamableHttp" \
        "$BIN/interop-client" --url "http://127.0.0.1:$http_port/mcp"
    walk "interop-client (mcp-rs, legacy HTTP+SSE) -> server-everything sse" \
        "$BIN/interop-client" --sse-url "http://127.0.0.1:$sse_port/sse"
    walk "interop-client (mcp-rs, probe -> Streamable HTTP) -> server-everything streamableHttp" \
        "$BIN/interop-client" --auto-url "http://127.0.0.1:$http_port/mcp"
    walk "interop-client (mcp-rs, probe -> legacy SSE) -> server-everything sse" \
        "$BIN/interop-client" --auto-url "http://127.0.0.1:$sse_port/sse"
else
    total_failed=$((total_failed + 1))
    results+=("FAIL  interop-client HTTP walks (server-everything did not start)")
fi
stop_http

# ------------------------------------------ TypeScript SDK client -> our server over HTTP
# Per runtime, one `everything --transport sse` on a port the OS picks, announced on its stderr:
# the official client walks it over Streamable HTTP (/mcp) and over legacy HTTP+SSE (/sse).
for rt in $RUNTIMES; do
    http_log="$(mktemp)"
    "$BIN/everything" --runtime "$rt" --transport sse --host 127.0.0.1 --port 0 2>"$http_log" &
    http_pid=$!
    stop_http_server() {
        kill "$http_pid" 2>/dev/null || true
        wait "$http_pid" 2>/dev/null || true
        rm -f "$http_log"
    }
    trap stop_http_server EXIT
    http_base=""
    for _ in $(seq 1 300); do
        http_base="$(grep -oE 'http://[0-9.]+:[0-9]+' "$http_log" | head -n 1 || true)"
        [ -n "$http_base" ] && break
        kill -0 "$http_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -n "$http_base" ]; then
        echo
        echo "== everything --runtime $rt --transport sse listening at $http_base"
        walk "ts-client (TypeScript SDK, Streamable HTTP) -> everything ($rt) over Streamable HTTP, /mcp" \
            node ts-client.mjs --url "$http_base/mcp"
        walk "ts-client (TypeScript SDK, legacy HTTP+SSE) -> everything ($rt) over legacy SSE, /sse" \
            node ts-client.mjs --sse-url "$http_base/sse"
    else
        echo
        echo "FAIL everything --transport sse did not start:"
        cat "$http_log"
        total_failed=$((total_failed + 2))
        results+=("FAIL  ts-client over HTTP ($rt): the server did not start")
    fi
    stop_http_server
    trap - EXIT
done

# --------------------------------------------------- the stateless era (protocol 2026-07-28)
# Background servers announce their URL (http://HOST:PORT/mcp) on stderr; each is stopped when
# its walks are done, and on exit.
bg_pids=()
stop_bg() {
    for p in "${bg_pids[@]}"; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    bg_pids=()
}
trap stop_bg EXIT
# start_announced LOG CMD...: starts CMD in the background with its stderr in LOG and waits until
# it announces its URL there (sets URL; returns 1, URL empty, when it exits or takes 30 s).
start_announced() {
    local log="$1"
    shift
    "$@" 2>"$log" &
    local pid=$!
    bg_pids+=("$pid")
    URL=""
    for _ in $(seq 1 300); do
        URL="$(grep -oE 'http://[0-9.]+:[0-9]+/mcp' "$log" | head -n 1 || true)"
        [ -n "$URL" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "FAIL $* did not announce its URL:"
    cat "$log"
    return 1
}

# The TypeScript SDK v2 and Python SDK clients -> everything --eras both.
for rt in $RUNTIMES; do
    ev=("$BIN/everything" --runtime "$rt" --eras both)
    for mode in pin auto; do
        walk "ts2-client (TypeScript SDK v2, $mode 2026-07-28) -> everything --eras both ($rt, stdio)" \
            node ts2-client.mjs --mode "$mode" -- "${ev[@]}" --transport stdio
    done
    for mode in 2026-07-28 auto; do
        walk "py-modern-client (Python SDK, mode=$mode) -> everything --eras both ($rt, stdio)" \
            .venv/bin/python py-modern-client.py --mode "$mode" -- "${ev[@]}" --transport stdio
    done
    for endpoint in default stateless; do
        flags=()
        [ "$endpoint" = stateless ] && flags=(--stateless)
        log="$(mktemp)"
        if start_announced "$log" "${ev[@]}" --transport http "${flags[@]}" --host 127.0.0.1 --port 0; then
            echo
            echo "== everything --runtime $rt --eras both --transport http ${flags[*]} listening at $URL"
            for mode in pin auto; do
                walk "ts2-client (TypeScript SDK v2, $mode 2026-07-28) -> everything --eras both ($rt, Streamable HTTP, $endpoint endpoint)" \
                    node ts2-client.mjs --mode "$mode" --url "$URL"
            done
            for mode in 2026-07-28 auto; do
                walk "py-modern-client (Python SDK, mode=$mode) -> everything --eras both ($rt, Streamable HTTP, $endpoint endpoint)" \
                    .venv/bin/python py-modern-client.py --mode "$mode" --url "$URL"
            done
        else
            total_failed=$((total_failed + 4))
            results+=("FAIL  ts2-client and py-modern-client over Streamable HTTP ($rt, $endpoint endpoint): the server did not start")
        fi
        stop_bg
        rm -f "$log"
    done
done

# Our client -> the TypeScript SDK v2 and Python SDK fixture servers.
for d in discover auto; do
    walk "interop-client (mcp-rs, Discovery::${d^}) -> ts2-server (TypeScript SDK v2 server, stdio)" \
        "$BIN/interop-client" --fixtures interop-ts2-server --discovery "$d" --handshake-refused \
        -- node ts2-server.mjs stdio
    walk "interop-client (mcp-rs, Discovery::${d^}) -> py-server (Python SDK server, stdio)" \
        "$BIN/interop-client" --fixtures interop-py-server --discovery "$d" \
        -- .venv/bin/python py-server.py stdio
done
ts2_log="$(mktemp)"
if start_announced "$ts2_log" node ts2-server.mjs http; then
    for d in discover auto; do
        walk "interop-client (mcp-rs, Discovery::${d^}) -> ts2-server (TypeScript SDK v2 server, Streamable HTTP)" \
            "$BIN/interop-client" --fixtures interop-ts2-server --discovery "$d" --handshake-refused --url "$URL"
    done
else
    total_failed=$((total_failed + 2))
    results+=("FAIL  interop-client -> ts2-server over Streamable HTTP: the server did not start")
fi
py_log="$(mktemp)"
if start_announced "$py_log" .venv/bin/python py-server.py http; then
    for d in discover auto; do
        walk "interop-client (mcp-rs, Discovery::${d^}) -> py-server (Python SDK server, Streamable HTTP)" \
            "$BIN/interop-client" --fixtures interop-py-server --discovery "$d" --url "$URL"
    done
else
    total_failed=$((total_failed + 2))
    results+=("FAIL  interop-client -> py-server over Streamable HTTP: the server did not start")
fi
stop_bg
rm -f "$ts2_log" "$py_log"
trap - EXIT

# ------------------------------------- both SDK clients -> our server as an OAuth resource server
# Per runtime: a tiny authorization server (auth-server.mjs: an RS256 key made at start, its JWKS
# on loopback, tokens minted with it) and `everything --auth-jwks` in front of it on a free port;
# each SDK client must be refused with a 401 and the RFC 9728 challenge without a token, served
# with one (a bearer header), and refused with a 403 step-up challenge for a tool whose scope
# (`--auth-tool-scope echo=echo:call`) its token lacks.
# Over HTTPS: a CA and a certificate for 127.0.0.1 made here with openssl, which the TypeScript
# client trusts through NODE_EXTRA_CA_CERTS and the Python one through --ca.
auth_pids=()
tls_dir="$(mktemp -d)"
stop_auth() { for p in "${auth_pids[@]}"; do kill "$p" 2>/dev/null || true; done; auth_pids=(); }
trap 'stop_auth; rm -rf "$tls_dir"' EXIT
(
    cd "$tls_dir"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=interop test CA" -keyout ca.key -out ca.pem \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
        -keyout key.pem -out server.csr
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext.cnf
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -extfile ext.cnf -out cert.pem
) > /dev/null 2>&1
for rt in $RUNTIMES; do
    port="$(free_port)"
    url="https://127.0.0.1:$port/mcp"
    as_log="$(mktemp)"
    node auth-server.mjs "$url" "https://auth.interop.test" >"$as_log" 2>&1 &
    auth_pids+=("$!")
    tokens=""
    for _ in $(seq 1 100); do
        tokens="$(grep -m1 '^{' "$as_log" || true)"
        [ -n "$tokens" ] && break
        sleep 0.1
    done
    jwks="$(printf '%s' "$tokens" | python3 -c 'import json,sys; print(json.load(sys.stdin)["jwks"])' 2>/dev/null || true)"
    ev_log="$(mktemp)"
    if [ -n "$jwks" ]; then
        "$BIN/everything" --runtime "$rt" --transport http --host 127.0.0.1 --port "$port" \
            --auth-jwks "$jwks" --auth-issuer "https://auth.interop.test" --auth-scope mcp \
            --auth-tool-scope echo=echo:call --tls-cert "$tls_dir/cert.pem" \
            --tls-key "$tls_dir/key.pem" 2>"$ev_log" &
        auth_pids+=("$!")
        for _ in $(seq 1 100); do
            grep -q 'serving http' "$ev_log" && break
            sleep 0.1
        done
    fi
    if [ -n "$jwks" ] && grep -q 'serving http' "$ev_log"; then
        walk "ts-auth (TypeScript SDK, bearer token, HTTPS) -> everything ($rt) as an OAuth resource server" \
            env NODE_EXTRA_CA_CERTS="$tls_dir/ca.pem" node ts-auth.mjs --url "$url" --tokens "$tokens"
        walk "py-auth (Python SDK, bearer token, HTTPS) -> everything ($rt) as an OAuth resource server" \
            .venv/bin/python py-auth.py --url "$url" --tokens "$tokens" --ca "$tls_dir/ca.pem"
    else
        echo "FAIL the resource-server walk ($rt) did not start: $(cat "$as_log" "$ev_log")"
        total_failed=$((total_failed + 2))
        results+=("FAIL  ts-auth/py-auth ($rt): the servers did not start")
    fi
    stop_auth
    rm -f "$as_log" "$ev_log"
done
rm -rf "$tls_dir"
trap - EXIT

# One server served by two processes (everything --redis, instance 1 on tokio and instance 2
# on async-std) sharing a real redis-server, behind a round-robin TCP proxy (rr-proxy.mjs:
# each connection to the next instance): both SDKs' clients walk it in both eras, every
# request landing on either instance.
if command -v redis-server >/dev/null 2>&1; then
    cluster_pids=()
    stop_cluster() { for p in "${cluster_pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
    trap stop_cluster EXIT
    redis_port="$(free_port)"
    redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >/dev/null 2>&1 &
    cluster_pids+=("$!")
    for _ in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null && break
        sleep 0.1
    done
    ports=()
    n=0
    for rt in tokio async-std; do
        n=$((n + 1))
        port="$(free_port)"
        "$BIN/everything" --runtime "$rt" --transport http --host 127.0.0.1 --port "$port" \
            --redis "redis://127.0.0.1:$redis_port/" --redis-prefix "interop:" --instance "$n" 2>/dev/null &
        cluster_pids+=("$!")
        ports+=("$port")
    done
    proxy_port="$(free_port)"
    node rr-proxy.mjs "$proxy_port" "${ports[@]}" 2>/dev/null &
    cluster_pids+=("$!")
    up=0
    for _ in $(seq 1 100); do
        up=1
        for port in "$proxy_port" "${ports[@]}"; do
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || up=0
        done
        [ "$up" = 1 ] && break
        sleep 0.1
    done
    URL="http://127.0.0.1:$proxy_port/mcp"
    if [ "$up" = 1 ]; then
        echo
        echo "== everything --redis: instances 1 (tokio) and 2 (async-std) behind rr-proxy at $URL"
        walk "ts-client (TypeScript SDK) -> two everything instances on Redis behind a round-robin proxy" \
            node ts-client.mjs --url "$URL"
        for mode in pin auto; do
            walk "ts2-client (TypeScript SDK v2, $mode 2026-07-28) -> two everything instances on Redis behind a round-robin proxy" \
                node ts2-client.mjs --mode "$mode" --url "$URL"
        done
        walk "py-modern-client (Python SDK, mode=auto) -> two everything instances on Redis behind a round-robin proxy" \
            .venv/bin/python py-modern-client.py --mode auto --url "$URL"
    else
        total_failed=$((total_failed + 4))
        results+=("FAIL  the cluster walks: redis-server, the instances or the proxy did not start")
    fi
    stop_cluster
    trap - EXIT
else
    echo "FAIL the cluster walks need redis-server (Debian package redis-server)"
    total_failed=$((total_failed + 1))
    results+=("FAIL  the cluster walks: no redis-server")
fi

echo
echo "== summary"
printf '%s\n' "${results[@]}"
if [ "$total_skipped" -gt 0 ]; then
    echo "interop: $total_passed passed, $total_failed failed, $total_skipped skipped"
else
    echo "interop: $total_passed passed, $total_failed failed"
fi
[ "$total_failed" -eq 0 ]
