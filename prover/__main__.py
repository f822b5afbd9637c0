"""``python -m prover``: the prove command, for a checkout or an environment without the console scripts on PATH."""
from prover.cli import main

if __name__ == "__main__":
    main(prog_name="prove")
