"""Facts every stage reads: errors, outcomes and exit codes, spend and prices, run file names."""
