"""Statistical inference over the tables: the leaderboard and its inputs, the cluster
bootstrap, the random null, paired comparisons, calibration, cost, risk, replicates, the
stated-probability extension, execution sensitivity, the late-entry board, the projection check
of "When will we know?" and the one-run sharing of draws (`one_run`). They read query only;
never views."""
