"""Statistical inference over the tables: the leaderboard and its inputs, the cluster
bootstrap, the random null, paired comparisons, calibration, cost, risk, replicates and the
stated-probability extension. They read query only; never views."""
