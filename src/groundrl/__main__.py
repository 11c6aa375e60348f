"""``python -m groundrl …`` behaves like the ``groundrl`` console script."""

from groundrl.cli.main import main

if __name__ == "__main__":
    main()
