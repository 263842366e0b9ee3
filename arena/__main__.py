"""`python -m arena` is the same as the `arena` console script."""

from arena.app.cli import main

if __name__ == "__main__":
    main()
