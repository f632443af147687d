#!/usr/bin/env bash
# A session with the `memgov` command line, as a script or CI job would run it. MEMGOV_URL and
# MEMGOV_TOKEN (an agent's token) say where and who; MEMGOV_REVIEWER_TOKEN is a reviewer's.
set -u
scope="${1:-acme/slides}"
say() { printf "\$ %s\n" "$*"; "$@" 2>&1; echo "(exit $?)"; }
as_reviewer() { MEMGOV_TOKEN="$MEMGOV_REVIEWER_TOKEN" "$@"; }

say memgov recall "$scope" "export format" -k 3
say memgov context "$scope" "export the deck" --budget 300 --task "Export deck 42"
echo '[{"role": "user", "content": "Render deck 42 please", "ref": "u1"}]' | say memgov turns record "$scope" s1
say memgov remember "$scope" "Put the page number on every slide" --kind convention --status proposed
id=$(memgov --json review list 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["memory"]["id"])' 2>/dev/null \
     || MEMGOV_TOKEN="$MEMGOV_REVIEWER_TOKEN" memgov --json review list | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["memory"]["id"])')
say memgov review confirm "$id"
say as_reviewer memgov review list --scope "$scope"
say as_reviewer memgov review confirm "$id" --reason "agreed with the client"
say memgov recall globex/slides "x"
say memgov --json recall globex/slides "x"
