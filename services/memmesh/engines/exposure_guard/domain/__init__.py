"""Pure logic of the ExposureGuard: rules, matching, filtering, recall summaries, ledger event shapes."""
