"""The engine: jobs that turn market data and agent answers into rows, one transaction each."""
