import sys

from .cli import main

if __name__ == "__main__":  # decoding workers (spawn) import this module again
    sys.exit(main())
