"""What the step-by-step model is trained with, each setting declared once (``training.config.setting``):
the optimiser's settings (``training.config.OptimConfig``, with this model's own defaults of steps,
batch, learning rate and warm-up) and the model's. ``train-stepwise``'s options are made from
these fields (``training.options``).
"""
from __future__ import annotations

from dataclasses import dataclass

from stepwise.model import POSITIONS, StepwiseModelConfig
from training.config import OptimConfig, setting

OBJECTIVES = ("plain", "self-distill", "control", "labelled")
CONTEXTS = ("history", "state")  # what the model reads before it writes a state (``stepwise.windows``)


@dataclass(frozen=True)
class StepwiseConfig(OptimConfig):
    # the optimiser's settings redeclared here keep their place and take this model's defaults:
    # a few minutes of training on one CPU thread
    steps: int = setting(2_000, "Optimiser steps.", low=1)
    batch_chains: int = setting(16, "Training chains per step, each one whole sequence.", low=2)
    lr: float = setting(1e-3, "Peak learning rate (cosine decay to final_lr_fraction of it).", low=0, low_open=True)
    warmup_steps: int = setting(100, "Steps of linear learning-rate warm-up.", low=0, rare=True)
    data: str = setting("data/tier1-a4", "Certified dataset directory (made by certify): rewrite chains, programs or "
                                         "a domain of one's own.", path=True)
    width: int = setting(128, "Residual width of the transformer (a multiple of --heads).", low=8)
    depth: int = setting(4, "Transformer blocks.", low=1)
    heads: int = setting(4, "Attention heads per block.", low=1)
    positions: str = setting("sinusoidal", "Position signal added to the token embeddings: sinusoidal (defined at "
                                           "every length), shifted (the same, each training sequence starting at "
                                           "a random position), alibi (no position vector: attention lowered in "
                                           "proportion to the distance) or none (the causal mask alone).",
                             choices=POSITIONS,
                             rare=True)
    tied: bool = setting(True, "The output head is the token embedding's transpose (tied) or a matrix of its own.",
                         flag="--tied/--untied", rare=True)
    objective: str = setting("plain", "plain: the loss on the short training chains alone; self-distill: also, in "
                                      "rounds of doubling length, a long history's predictions drawn to the "
                                      "model's own after a certified short equivalent; control: the same from a "
                                      "short history ending elsewhere; labelled: the true states of the long "
                                      "histories instead (a ceiling).", choices=OBJECTIVES)
    context: str = setting("history", "history: the model reads the whole history so far (the start, every event and "
                                      "every state it wrote); state: only its last written state (the start's at "
                                      "the first event) and the event, in training and free running alike, so that "
                                      "it learns one step s' = f(s, e) and no position exceeds one window's.",
                           choices=CONTEXTS)
    rounds: int = setting(5, "Rounds of doubling length (round k: long histories of up to 2^k times the training "
                             "chains' length), the last rounds x round_steps steps.", low=1)
    round_steps: int = setting(200, "Steps per round.", low=1)
    round_lr: float = setting(1e-3, "Cap on the learning rate in the last rounds x round_steps steps, whatever the "
                                    "objective (so that arms compare at one schedule).", low=0, low_open=True,
                              rare=True)
    long_chains: int = setting(4, "Long walks per step in the rounds (each run free once).", low=1, rare=True)
    cuts: int = setting(8, "Long histories per walk: its prefixes at random lengths of the round.", low=1, rare=True)
    long_weight: float = setting(1.0, "Weight of the long histories' term beside the ordinary loss.", low=0,
                                 low_open=True, rare=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.objective != "plain" and self.rounds * self.round_steps > self.steps:
            raise ValueError(f"{self.rounds} rounds of {self.round_steps} steps do not fit {self.steps} steps")
        if self.context not in CONTEXTS:
            raise ValueError(f"unknown context {self.context!r}; choose one of {', '.join(CONTEXTS)}")
        if self.context == "state" and self.objective in ("self-distill", "control"):
            # after u the state form reads its written state alone: a teacher after v can only pull the step
            # from that state towards another state's successor, never reach the writing that went wrong
            raise ValueError(f"--objective {self.objective} distils whole histories; with --context state only "
                             "plain or labelled train")
        self.model(2)  # ValueError, in one line, for a width, depth or head count that builds no model

    def model(self, vocab_size: int) -> StepwiseModelConfig:
        """The model's settings for a vocabulary of ``vocab_size`` tokens."""
        return StepwiseModelConfig(vocab_size=vocab_size, width=self.width, depth=self.depth, heads=self.heads,
                                   positions=self.positions, tied=self.tied)
