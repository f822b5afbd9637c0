"""A scripted stand-in for ``lake env lean <file>`` running LeanDojo's REPL, for testing the replay
against the real ``lean_dojo.Dojo`` (its process handling, protocol and result types) where no
Lean toolchain exists. It speaks the REPL's protocol: one ``REPL> {json}`` line per answer, one
``{"sid", "cmd"}`` request per line. The proof is read from the JSON file named by
$SCRIPTED_REPL: {"states": [state before step 0, ...], "golds": [tactic of step 0, ...]}. The
gold tactic of step t moves state t to t + 1 (the last finishes the proof); "split" leaves two
goals; "sorry" is what LeanDojo's REPL says of a proof with sorry; "slow" never answers; anything
else is an unknown identifier.
"""
import json
import os
import sys
import time


def main() -> None:
    with open(os.environ["SCRIPTED_REPL"], encoding="utf-8") as f:
        script = json.load(f)
    states, golds = script["states"], script["golds"]
    step_of = {0: 0}  # state id -> step

    def reply(**fields) -> None:
        sys.stdout.write("REPL> " + json.dumps({"sid": None, "tacticState": None, "error": None, **fields},
                                               ensure_ascii=False) + "\n")
        sys.stdout.flush()

    reply(sid=0, tacticState=states[0])
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        t, cmd = step_of[request["sid"]], request["cmd"]
        sid = len(step_of)
        if cmd == "slow":
            time.sleep(3600)
        elif cmd == golds[t]:
            if t + 1 == len(golds):
                reply(sid=sid, tacticState="no goals")
            else:
                step_of[sid] = t + 1
                reply(sid=sid, tacticState=states[t + 1])
        elif cmd == "split":
            step_of[sid] = t
            reply(sid=sid, tacticState=f"case left\n{states[t]}\n\ncase right\n{states[t]}")
        elif cmd == "sorry":
            reply(error="proof contains `sorry`")
        else:
            reply(error=f"<stdin>:1:0: unknown identifier '{cmd}'")


if __name__ == "__main__":
    main()
