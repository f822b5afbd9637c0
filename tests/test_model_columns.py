"""The slot recurrence reads every real token of an item, wherever it sits in the item's row:
a padded tree followed by more tokens keeps its last ones."""
import torch

from tracker.build import build_model
from tracker.models import ModelConfig


def test_an_item_whose_real_tokens_are_not_contiguous_is_read_whole():
    torch.manual_seed(0)
    vocab = 9
    # item 1: a 3-token tree padded to 4 columns, then 2 more tokens (columns 4 and 5);
    # item 2: an event of 2 contiguous tokens; 3 real tokens at most per item at any step
    item_tokens = torch.tensor([[0, 0, 0, 0, 0, 0],
                                [3, 4, 5, 0, 6, 7],
                                [1, 2, 0, 0, 0, 0]])
    model = build_model(ModelConfig(width=16), item_tokens, vocab, n_out=vocab, tree_len=4, domain="rewrite").eval()
    items = torch.tensor([[1, 2], [2, 1]])  # (H, T)
    with torch.no_grad():
        z, _ = model(items)  # (H, T, C)
        # the same histories read one item at a time from the items' whole token rows
        w = model.initial_state(2)
        expected = []
        for t in range(items.shape[1]):
            w = model.read(w, item_tokens[items[:, t]])
            expected.append(model.view(w))
    assert torch.allclose(z, torch.stack(expected, 1), atol=1e-6)
    # and the last two tokens of item 1 matter: dropping them changes the view
    cut = item_tokens.clone()
    cut[1, 4:] = 0
    with torch.no_grad():
        w = model.read(model.initial_state(1), cut[1:2])
    assert not torch.allclose(model.view(w), z[0, 0], atol=1e-4)
