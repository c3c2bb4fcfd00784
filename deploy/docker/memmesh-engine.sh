#!/bin/sh
# memmesh-engine ENGINE [ARGS]: runs one engine in the foreground as PID 1's only child
# (exec, so SIGTERM reaches it). ENGINE is an engine's name, with dashes or underscores.
# Any other command runs as given (memmesh run, memmesh status, sh).
set -eu
if [ "$#" -eq 0 ]; then
    echo "usage: memmesh-engine ENGINE [ARGS] (gateway, ledger, current_state, atom_extractor," \
        "retrieval_ranker, context_composer, thread_store, exposure_guard, outbox_sync)" >&2
    exit 64
fi
engine=$(printf '%s' "$1" | tr '-' '_')
case "$engine" in
    gateway | ledger | current_state | atom_extractor | retrieval_ranker | \
        context_composer | thread_store | exposure_guard | outbox_sync)
        shift
        exec python -m "memmesh.engines.$engine" "$@"
        ;;
    *)
        exec "$@"
        ;;
esac
