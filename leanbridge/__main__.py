"""``python -m leanbridge``: the certify command, for a checkout or an environment without the console scripts on PATH."""
from leanbridge.cli import main

if __name__ == "__main__":
    main(prog_name="certify")
