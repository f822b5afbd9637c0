"""``python -m stepwise``: the train-stepwise command, where the console scripts are not on PATH."""
from stepwise.cli import main

if __name__ == "__main__":
    main(prog_name="train-stepwise")
