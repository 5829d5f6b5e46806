#!/usr/bin/env bash
# Installs, from Debian's packages, each program `npm test` runs that is not there yet, then
# fetches helm (scripts/get-helm.sh). A program already installed is left alone, whichever
# package brought it: Debian's kubectl package and kubernetes-client both ship /usr/bin/kubectl
# and cannot be installed together, so asking apt for both fails. Runs apt-get directly as root
# (container images have no sudo) and through sudo otherwise. .ci/run runs it first. Usage:
#   scripts/install-test-programs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# The Redis Cluster tests join their nodes with `redis-cli --cluster create`.
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v memcached >/dev/null 2>&1 || missing+=(memcached)
# The TLS tests make their certificates with openssl.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# The deploy tests render deploy/kubernetes with `kubectl kustomize` (any kubectl will do).
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
# The foreign-client tests call the service with gRPC's C core (python3-grpcio) and h2load;
# the gRPC TLS test calls the mutual-TLS listener with python3-grpcio too.
/usr/bin/python3 -c 'import grpc' >/dev/null 2>&1 || missing+=(python3-grpcio)
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
# The HTTP/2 conformance tests speak raw frames with python3-h2 and python3-hpack, and the
# protocol tests compile .proto files with python3-grpc-tools.
/usr/bin/python3 -c 'import h2' >/dev/null 2>&1 || missing+=(python3-h2)
/usr/bin/python3 -c 'import hpack' >/dev/null 2>&1 || missing+=(python3-hpack)
/usr/bin/python3 -c 'import grpc_tools' >/dev/null 2>&1 || missing+=(python3-grpc-tools)
# The monitoring tests scrape the service with Debian's prometheus and check the alert rules
# with its promtool.
{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || missing+=(prometheus)
# The page tests drive Debian's chromium through playwright-core, which downloads no browser.
[ -x /usr/bin/chromium ] || missing+=(chromium)

if [ "${#missing[@]}" -gt 0 ]; then
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "$0: ${missing[*]} missing; run this as root, or install sudo" >&2
      exit 1
    fi
    as_root=(sudo)
  fi
  echo "installing ${missing[*]} from Debian's packages" >&2
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian packages no helm: the script fetches it, checked against the SHA-256 it pins.
scripts/get-helm.sh >/dev/null
