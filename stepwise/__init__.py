"""The step-by-step model: a causal transformer that writes the state after every event of a
rewrite chain, its whole history (and its own writing) in context -- the chain-of-thought arm that
Nerode self-distillation (``stepwise.distill``) trains -- or, in the state form, only its last
written state and the event (``stepwise.windows``).

data: a chain as one token sequence (start tree, then per event its tokens, SEP, the tree after
it, EOS), batches, and the loss on written positions; windows: the state form's windows (state
before, event, state after); model: the transformer and its key-value cache; config: its settings;
train: the loop, checkpoints and report (``training``'s machinery); evaluate: free-running
evaluation on the held-out chains; cli: the ``train-stepwise`` command.
"""
