"""``python -m oracle``: the train-oracle command, for a checkout or an environment without the console scripts on PATH."""
from oracle.cli import main

if __name__ == "__main__":
    main(prog_name="train-oracle")
