"""A frozen pretrained causal code model as the slot recurrence's reader (``--encoder``).

On a programs dataset each item (a start state or a statement) is written as one line of Python
(``python_line``), read once by the frozen model, and its middle layer's states, one per token of
the line, are what the slot attends to, through a learned linear projection to the slot's width
(``EncodedItems``, in place of ``tracker.models.ItemEmbedding``). The program's state is kept by
the slot recurrence alone: the code model reads one statement at a time and never sees the history.

Nothing here imports transformers until a model is loaded (``load_reader``); a run without an
encoder never does. The code model's weights are never trained nor saved: a checkpoint holds the
projection, and loading the run reads the model again from the same name or directory.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from chains.programs.syntax import VARIABLES, Machine, Operand, State, Statement
from tracker.packing import PAD

EXTRA = "pip install 'exact-state[encoder]'"
MODULUS = Machine(16).values  # + - * exist on the Arithmetic machine only, modulo its 16 values
_BITWISE = {"and": "&", "or": "|", "xor": "^"}
_MODULAR = {"add": "+", "sub": "-", "mul": "*"}


class EncoderUnavailable(ValueError):
    """The code model cannot be read on this machine (absent, not cached, or no transformers); one line."""


def _operand(o: Operand) -> str:
    return f"v{o.value}" if o.var else str(o.value)


def python_line(item: Statement | State) -> str:
    """A programs item as one line of Python: a statement as the assignment it is
    (``chains.programs.syntax.evaluate``'s meaning), a start state as one tuple assignment."""
    if not isinstance(item, Statement):
        names = ", ".join(f"v{i}" for i in range(len(item)))
        return f"{names} = {', '.join(map(str, item))}"
    a = [_operand(o) for o in item.args]
    if item.op == "set":
        body = a[0]
    elif item.op == "not":
        body = f"1 - {a[0]}"
    elif item.op in _BITWISE:
        body = f"{a[0]} {_BITWISE[item.op]} {a[1]}"
    elif item.op in _MODULAR:
        body = f"({a[0]} {_MODULAR[item.op]} {a[1]}) % {MODULUS}"
    elif item.op == "ite":
        body = f"{a[2]} if {a[0]} < {a[1]} else {a[3]}"
    else:
        raise ValueError(f"unknown operation {item.op!r}")
    return f"v{item.target} = {body}"


def _read_operand(token: str) -> Operand:
    return Operand(token[0] == "v", int(token[1:]))


def item_of_tokens(tokens: Sequence[str]) -> Statement | State:
    """A programs item from its tokens (``ProgramsDomain.start_tokens`` / ``event_tokens``, padding
    ``<pad>`` and ``pad`` dropped): a start state's eight ``c{value}``, or ``v{target} op operands``."""
    real = [t for t in tokens if t not in (PAD, "pad")]
    try:
        if len(real) == VARIABLES and all(t[0] == "c" for t in real):
            return tuple(int(t[1:]) for t in real)
        if len(real) >= 3 and real[0][0] == "v":
            return Statement(int(real[0][1:]), real[1], tuple(_read_operand(t) for t in real[2:]))
    except (ValueError, IndexError):
        pass
    raise ValueError(f"the tokens {' '.join(tokens)!r:.80} are not a programs item (a start state or a statement)")


class CodeReader:
    """A frozen causal model and its tokenizer, read at the middle layer: ``read(line)`` -> the
    states (tokens, d_model) of ``hidden_states[num_layers // 2]`` (float32, on the CPU)."""

    def __init__(self, name_or_path: str, tokenizer, model: nn.Module) -> None:
        self.name_or_path, self.tokenizer, self.model = name_or_path, tokenizer, model
        config = model.config
        self.model_type, self.layers, self.hidden_size = config.model_type, config.num_hidden_layers, config.hidden_size
        self.layer = self.layers // 2  # hidden_states[0] is the token embeddings, [k] layer k's output

    def describe(self) -> dict:
        """What a report records of the reader."""
        return {"name_or_path": self.name_or_path, "model_type": self.model_type,
                "num_hidden_layers": self.layers, "hidden_size": self.hidden_size, "layer": self.layer}

    def read(self, line: str) -> torch.Tensor:
        """One line alone (no padding, so its states never depend on other lines) -> (L, d_model)."""
        ids = self.tokenizer(line, return_tensors="pt")["input_ids"]  # (1, L)
        with torch.no_grad():
            out = self.model(input_ids=ids, output_hidden_states=True, use_cache=False)
        return out.hidden_states[self.layer][0].float()


def _unavailable(name: str, why: str) -> EncoderUnavailable:
    return EncoderUnavailable(f"encoder {name}: {why}; its weights must be on this machine "
                              "(a local Hugging Face model directory, or a name in the local cache)")


def load_reader(name_or_path: str) -> CodeReader:
    """The frozen model ``name_or_path`` (a directory, or a name already in the Hugging Face
    cache: nothing is downloaded), float32 on the CPU, in eval mode, no parameter trainable.
    EncoderUnavailable, one line, when it cannot be read here. Loading draws no random number."""
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError:
        raise EncoderUnavailable(f"encoder {name_or_path}: reading a code model needs transformers: {EXTRA}") from None
    path = Path(name_or_path).expanduser()
    if path.exists() and not path.is_dir():
        raise _unavailable(name_or_path, "not a directory")
    if not path.exists() and (path.is_absolute() or name_or_path.startswith((".", "~"))):
        raise _unavailable(name_or_path, "no such directory")
    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with torch.random.fork_rng(devices=[]):  # whatever loading draws, the run's own draws stay the same
            tokenizer = AutoTokenizer.from_pretrained(str(path) if path.exists() else name_or_path,
                                                      local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(path) if path.exists() else name_or_path,
                                                         local_files_only=True)
    except (OSError, ValueError, KeyError) as e:
        why = "not in the local Hugging Face cache" if not path.exists() else f"cannot be loaded ({e})"
        raise _unavailable(name_or_path, " ".join(why.split())[:120]) from None
    finally:
        if shown:
            hf_logging.enable_progress_bar()
    model = model.to(device="cpu", dtype=torch.float32).eval()
    model.requires_grad_(False)
    return CodeReader(name_or_path, tokenizer, model)


class EncodedItems(nn.Module):
    """Items read by a frozen code model: ``tracker.models.ItemEmbedding``'s interface
    (``tokens``, ``token_rows``, ``pooled``), an item's C-wide token vectors being a learned linear
    projection of the model's middle-layer states on the item's Python line.

    Each distinct item is read once, when first asked for, and kept: ``states`` (N, L, d_model)
    holds the read items' states (each token's state standardised over d_model, since a middle
    layer's coordinates run over orders of magnitude), padded to the longest line, ``mask`` (N, L)
    their real tokens, and ``slot`` (I,) the row of each dataset item (-1: not read yet; row 0 is
    padding, no token). All three are non-persistent: a checkpoint holds ``item_tokens`` and the
    projection only. The reader is a plain attribute, not a submodule: neither trained nor saved.
    """

    def __init__(self, item_tokens: torch.Tensor, vocab_tokens: Sequence[str], reader: CodeReader, width: int,
                 init_std: float) -> None:
        super().__init__()
        self.register_buffer("item_tokens", item_tokens.clone(), persistent=True)  # (I, E)
        self.vocab_size, self.words, self.reader = len(vocab_tokens), tuple(vocab_tokens), reader
        d = reader.hidden_size
        self.project = nn.Linear(d, width)
        # standardised states through weights of std init_std / sqrt(d): token vectors of std
        # init_std, as the item embedding's table rows
        nn.init.normal_(self.project.weight, std=init_std / math.sqrt(d))
        nn.init.zeros_(self.project.bias)
        self.register_buffer("states", torch.zeros(1, 1, d), persistent=False)  # (N, L, d): row 0 is padding
        self.register_buffer("mask", torch.zeros(1, 1, dtype=torch.bool), persistent=False)  # (N, L)
        slot = torch.full((item_tokens.shape[0],), -1, dtype=torch.long)
        slot[0] = 0
        self.register_buffer("slot", slot, persistent=False)  # (I,)
        self.filled = 1  # rows of states in use
        self.rows: dict[tuple[int, ...], int] = {(): 0}  # an item's token ids (trailing 0s dropped) -> its row

    def describe(self) -> dict:
        return self.reader.describe()

    def tokens(self, items: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """items (...,) -> token vectors (..., L, C) and their mask (..., L)."""
        rows = self.slot[items]
        if bool((rows < 0).any()):
            missing = torch.unique(items[rows < 0]).tolist()
            read = self._rows_of(self.item_tokens[missing].tolist())
            with torch.inference_mode(False), torch.no_grad():
                self.slot[missing] = torch.tensor(read, device=rows.device)
            rows = self.slot[items]
        return self.project(self.states[rows]), self.mask[rows]

    def token_rows(self, toks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Items given by their token ids (..., E), 0-padded -> (..., L, C) and mask (..., L): any
        item of the domain, not only the dataset's."""
        flat = toks.reshape(-1, toks.shape[-1])  # (M, E)
        rows = torch.tensor(self._rows_of(flat.tolist()), dtype=torch.long, device=self.states.device)
        vectors, mask = self.project(self.states[rows]), self.mask[rows]  # (M, L, C), (M, L)
        return vectors.reshape(*toks.shape[:-1], *vectors.shape[1:]), mask.reshape(*toks.shape[:-1], -1)

    def pooled(self, items: torch.Tensor) -> torch.Tensor:
        """items (...,) -> the mean of the item's token vectors (..., C); zero for padding."""
        uniq, inverse = torch.unique(items, return_inverse=True)
        emb, mask = self.tokens(uniq)  # (U, L, C), (U, L)
        m = mask.unsqueeze(-1).to(emb.dtype)
        return ((emb * m).sum(-2) / m.sum(-2).clamp(min=1))[inverse]

    def _rows_of(self, token_rows: list[list[int]]) -> list[int]:
        """The states row of each item given by its token ids, reading the ones not read yet."""
        keys = [tuple(r[:max((k + 1 for k, t in enumerate(r) if t), default=0)]) for r in token_rows]
        new = list(dict.fromkeys(k for k in keys if k not in self.rows))
        if new:
            lines = [python_line(item_of_tokens([self.words[t] for t in key])) for key in new]
            # normal tensors even under a caller's inference mode: the buffers are written again outside it
            with torch.inference_mode(False), torch.no_grad():
                self._store([F.layer_norm(self.reader.read(line), (self.reader.hidden_size,)) for line in lines])
            self.rows.update({key: self.filled - len(new) + k for k, key in enumerate(new)})
        return [self.rows[k] for k in keys]

    def _store(self, new: list[torch.Tensor]) -> None:
        """Append the states (L_i, d) of new items as rows, the buffers growing by doubling."""
        n, width = self.filled + len(new), max(self.states.shape[1], *(len(h) for h in new))
        if n > self.states.shape[0] or width > self.states.shape[1]:
            capacity = max(n, 2 * self.states.shape[0]) if n > self.states.shape[0] else self.states.shape[0]
            states = self.states.new_zeros(capacity, width, self.states.shape[2])
            mask = self.mask.new_zeros(capacity, width)
            states[: self.filled, : self.states.shape[1]] = self.states[: self.filled]
            mask[: self.filled, : self.mask.shape[1]] = self.mask[: self.filled]
            self.states, self.mask = states, mask
        for k, h in enumerate(new):
            self.states[self.filled + k, : len(h)] = h.to(self.states.device)
            self.mask[self.filled + k, : len(h)] = True
        self.filled = n
