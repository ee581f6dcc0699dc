"""dcol test suite: the folders mirror the packages (see README.md)."""
