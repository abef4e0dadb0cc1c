#!/usr/bin/env bash
# The browser example end to end: builds the module for wasm32-unknown-unknown, runs
# wasm-bindgen (--target web), serves the page from one port and `everything` over Streamable
# HTTP from another with `--cors-origin` for the page's origin, loads the page in headless
# Chromium and checks what it wrote (the tools listed, the echoes, the final status), keeps a
# screenshot, and checks that the same page served from an origin the server does not allow
# fails with a CORS error shown on the page. Everything started here is stopped at the end,
# also on failure.
#
#   bash examples/browser/run-test.sh      # needs chromium (Debian package `chromium`)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target="$root/$target" ;; esac
export CARGO_TARGET_DIR="$target"
out="$target/browser-test"
rm -rf "$out"
mkdir -p "$out/page"

pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT

fail() {
    echo "browser test FAILED: $*" >&2
    for log in "$out"/*.log; do
        echo "---- $log" >&2
        tail -n 40 "$log" >&2 || true
    done
    exit 1
}

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium_bin" ] || fail "no chromium (apt-get install -y chromium)"

# wasm-bindgen's command line must be the exact version of the crate in Cargo.lock; it is
# installed once under the target dir.
version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/"/, "", $3); print $3 }' "$here/Cargo.lock")
[ -n "$version" ] || fail "no wasm-bindgen in examples/browser/Cargo.lock"
tools="$target/tools/wasm-bindgen-$version"
bindgen="$tools/bin/wasm-bindgen"
if ! { [ -x "$bindgen" ] && "$bindgen" --version | grep -q " $version\$"; }; then
    # (--locked first; without it when the lock names a version the registry no longer has.)
    cargo install -q --locked wasm-bindgen-cli --version "$version" --root "$tools" \
        --target-dir "$target/tools/build" ||
        cargo install -q wasm-bindgen-cli --version "$version" --root "$tools" \
            --target-dir "$target/tools/build"
    # (Its build is not needed again: the installed binary is kept.)
    rm -rf "$target/tools/build"
fi

echo "== building the module"
(cd "$here" && cargo build -q --release)
wasm="$target/wasm32-unknown-unknown/release/mcp_example_browser.wasm"
"$bindgen" --target web --out-dir "$out/page/pkg" "$wasm"
cp "$here/www/index.html" "$here/www/main.js" "$out/page/"
module="$out/page/pkg/mcp_example_browser_bg.wasm"
echo "module after wasm-bindgen: $(stat -c %s "$module") bytes"
if command -v wasm-opt >/dev/null; then
    wasm-opt -Os --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
        --enable-mutable-globals --enable-reference-types --enable-multivalue \
        "$module" -o "$out/optimized.wasm"
    echo "module after wasm-opt -Os: $(stat -c %s "$out/optimized.wasm") bytes"
fi

echo "== starting everything and the page's server"
(cd "$root" && cargo build -q -p mcp-examples --bin everything)
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
server_port=$(free_port)
page_port=$(free_port)
allowed="http://localhost:$page_port"
"$target/debug/everything" --transport http --port "$server_port" --cors-origin "$allowed" \
    > "$out/everything.log" 2>&1 &
pids+=($!)
python3 -m http.server "$page_port" --bind 127.0.0.1 --directory "$out/page" \
    > "$out/page-server.log" 2>&1 &
pids+=($!)
for port in "$server_port" "$page_port"; do
    for _ in $(seq 100); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
        sleep 0.1
    done
done
server="http://127.0.0.1:$server_port/mcp"

# Loads `url` in headless Chromium and writes the DOM once the page is done (virtual time
# runs until nothing is pending, up to the budget) to `$1.html`; the browser's log to `$1.log`.
load() {
    local name=$1 url=$2
    shift 2
    timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$out/profile-$name" --enable-logging=stderr --v=0 \
        --virtual-time-budget=30000 "$@" "$url" > "$out/$name.html" 2> "$out/chromium-$name.log" ||
        fail "chromium ($name) failed"
}

echo "== the page at $allowed, calling $server"
load allowed "$allowed/index.html?server=$server&text=checked%20echo%20from%20the%20page" --dump-dom
page="$out/allowed.html"
grep -q '<span id="status" class="ok">ok</span>' "$page" || fail "the page's status is not ok: $(grep -o '<span id="status"[^<]*' "$page")"
# Both walks of the server in the page, both of everything: the tools and the checked echo.
[ "$(grep -o '<td class="echo">checked echo from the page</td>' "$page" | wc -l)" -eq 4 ] ||
    fail "four echoes expected on the page"
[ "$(grep -o '<td class="tools">[^<]*\becho\b[^<]*</td>' "$page" | wc -l)" -eq 4 ] ||
    fail "four tool lists with echo expected"
grep -q '<td class="tools">[^<]*\bslow\b[^<]*\bstream\b' "$page" || grep -q '<td class="tools">[^<]*\bstream\b[^<]*\bslow\b' "$page" ||
    fail "everything's tools (slow, stream) are not listed"
# The server in the page answered both walks' tools/list and tools/call (the handshake and
# server/discover are the session's own).
grep -q '<span id="served">4</span>' "$page" || fail "the server in the page did not answer 4 requests: $(grep -o '<span id="served">[^<]*' "$page")"
grep -q '<td class="protocol">2026-07-28</td>' "$page" || fail "no walk in 2026-07-28"
grep -q '<td class="protocol">2025-11-25</td>' "$page" || fail "no walk in the handshake era"
# The handshake era over HTTP read its session id: Mcp-Session-Id was exposed to the page.
grep -Eq '<td class="session">[0-9a-f]{32}</td>' "$page" || fail "no session id read by the page"
echo "the page listed the tools, echoed, and says ok"

shot="$out/browser-page.png"
load screenshot "$allowed/index.html?server=$server&text=checked%20echo%20from%20the%20page" \
    --screenshot="$shot" --window-size=1100,1150 --hide-scrollbars
[ -s "$shot" ] || fail "no screenshot"
echo "screenshot: $shot"

refused="http://127.0.0.1:$page_port"
echo "== the same page at $refused, an origin the server does not allow"
load refused "$refused/index.html?server=$server" --dump-dom
page="$out/refused.html"
grep -q '<span id="status" class="error">error: [^<]*CORS' "$page" ||
    fail "the refused page does not show a CORS error: $(grep -o '<span id="status"[^<]*' "$page")"
grep -q "blocked by CORS policy" "$out/chromium-refused.log" ||
    fail "Chromium did not report a CORS refusal"
grep -q "blocked by CORS policy" "$out/chromium-allowed.log" &&
    fail "Chromium reported a CORS refusal for the allowed origin"
echo "the page from the refused origin shows: $(grep -o '<span id="status"[^<]*' "$page" | sed 's/.*>//')"
echo "browser test passed"
