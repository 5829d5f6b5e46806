#!/usr/bin/env bash
# Checks the release tarball as a user installs it: packs it (`npm pack`, from the dist/ already
# built: run `npm run build` first, as `npm test` does), installs it with `npm install -g` into a
# temporary prefix, and from outside the checkout runs the installed commands: `ratelimit
# --version`, `ratelimit-config-check` on the examples, and `ratelimit-client` against a
# `ratelimit` started from the installed command on loopback ports the system picks, stopped by
# its pid. Leaves nothing behind. .ci/run runs it after npm test. Usage:
#   scripts/check-install.sh
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
version=$(node -p "require('$checkout/package.json').version")
[ -f "$checkout/dist/src/main.js" ] || {
  echo "$0: no dist/: run npm run build first" >&2
  exit 1
}

tmp=$(mktemp -d)
service=''
finish() {
  if [ -n "$service" ] && kill -0 "$service" 2>/dev/null; then kill -KILL "$service"; fi
  rm -rf "$tmp"
}
trap finish EXIT
fail() {
  echo "check-install: $*" >&2
  [ -f "$tmp/service.log" ] && sed 's/^/  service: /' "$tmp/service.log" >&2
  exit 1
}

# prepare (the build) already ran; the tarball takes dist/ as it is.
(cd "$checkout" && npm pack --silent --ignore-scripts --pack-destination "$tmp" >/dev/null)
tarball="$tmp/ratelimit-ts-$version.tgz"
[ -f "$tarball" ] || fail "npm pack made no $tarball"
tar tzf "$tarball" | grep -x 'package/dist/src/main.js' >/dev/null || fail "the tarball has no dist/"
# Only the dependencies: a command that needs a devDependency fails below. --prefer-offline
# takes what npm ci left in npm's cache.
npm install -g --prefix "$tmp/prefix" --omit=dev --prefer-offline --no-audit --no-fund \
  --loglevel=error "$tarball" >/dev/null

cd "$tmp" # outside the checkout: nothing resolves from it
export PATH="$tmp/prefix/bin:$PATH"
for command in ratelimit ratelimit-client ratelimit-config-check ratelimit-control-plane-sim \
  ratelimit-healthcheck; do
  [ "$(command -v "$command")" = "$tmp/prefix/bin/$command" ] || fail "$command is not installed"
done

said=$(ratelimit --version)
[ "$said" = "ratelimit-ts $version" ] || fail "ratelimit --version said '$said'"

examples="$tmp/prefix/lib/node_modules/ratelimit-ts/examples/ratelimit"
ratelimit-config-check -config_dir "$examples/config" -strict >/dev/null ||
  fail "ratelimit-config-check refused the installed examples"
ratelimit-config-check -config_dir "$checkout/examples/ratelimit/config" -strict >/dev/null ||
  fail "ratelimit-config-check refused the checkout's examples"

BACKEND_TYPE=memory RUNTIME_ROOT="$examples/.." RUNTIME_SUBDIRECTORY=ratelimit \
  RUNTIME_WATCH_ROOT=false USE_STATSD=false LOG_LEVEL=info HOST=127.0.0.1 PORT=0 \
  GRPC_HOST=127.0.0.1 GRPC_PORT=0 DEBUG_HOST=127.0.0.1 DEBUG_PORT=0 \
  ratelimit >"$tmp/service.log" 2>&1 &
service=$!
grpc=''
for _ in $(seq 1 150); do # 15 s at most
  grpc=$(sed -n 's/.*msg="listening".* grpc=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/service.log")
  [ -n "$grpc" ] && break
  kill -0 "$service" 2>/dev/null || fail "ratelimit exited before it listened"
  sleep 0.1
done
[ -n "$grpc" ] || fail "ratelimit did not say where it listens within 15 s"

answer=$(ratelimit-client -dial_string "127.0.0.1:$grpc" -domain example \
  -descriptors remote_address=10.0.0.1)
grep -q '^overall: OK$' <<<"$answer" || fail "ratelimit-client answered: $answer"

kill -TERM "$service"
code=0
wait "$service" || code=$?
service=''
[ "$code" -eq 0 ] || fail "ratelimit exited with $code on SIGTERM"
echo "check-install: ratelimit-ts-$version.tgz installs, and its commands run outside the checkout"
