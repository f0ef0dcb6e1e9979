#!/usr/bin/env bash
# System packages the test suite needs: redis-server and redis-tools (private test
# servers, a 3-node Redis Cluster made with redis-cli), redis-sentinel (the failover
# test), Debian's chromium (browser tests of the report pages) and a CJK font
# (fonts-noto-cjk: the browser test of the Chinese page checks its glyphs are drawn).
# Installs only what is missing.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if ! command -v fc-list >/dev/null 2>&1 || [ -z "$(fc-list :lang=zh family 2>/dev/null)" ]; then
    missing+=(fonts-noto-cjk)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
