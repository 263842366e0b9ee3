"""Market sources: the Polymarket Gamma client and the offline simulated world."""
