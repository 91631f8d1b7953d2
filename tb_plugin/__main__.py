import sys

from .cli.main import main

if __name__ == "__main__":  # decoding workers (spawn) import this module again
    sys.exit(main())
