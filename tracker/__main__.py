"""``python -m tracker``: the train-tracker command, for a checkout or an environment without the console scripts on PATH."""
from tracker.cli import main

if __name__ == "__main__":
    main(prog_name="train-tracker")
