"""Prints how it was run: as __main__, with the arguments given after the script."""

import sys

import engine

if __name__ == "__main__":
    print("ARGV", sys.argv[1:])
    print("DEVICE", engine.ones(1).device)
