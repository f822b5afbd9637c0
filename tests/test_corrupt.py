"""Wrong partners on purpose (certify --corrupt-partners): recorded, verified, refused by the
trainers unless told, and the same bytes from the same seed; against the real Lean binary."""
import json
import shutil

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from chains.manifest import DatasetError, load_manifest, manifest_text
from chains.rewrite.corrupt import KINDS, Corruption, corrupt_split
from chains.rewrite.dataset import read_split
from chains.rewrite.rules import successors
from chains.rewrite.sampling import sample_split
from chains.rewrite.space import Domain, StateSpace
from chains.seeds import split_rng
from leanbridge.cli import main as certify
from leanbridge.verify import verify_dataset
from oracle.cli import main as train_oracle
from oracle.data import load_probe_dataset
from tracker.cli import main as train_tracker
from tracker.data import load_dataset

SMALL = ["--chains", "60", "--test-lengths", "8,32", "--test-chains", "12", "--jobs", "2"]
DOMAIN = Domain(4, 1)


def run(command, args):
    result = CliRunner().invoke(command, [str(a) for a in args])
    return result.exit_code, result.output


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Datasets of one spec and seed: clean, 10% near misses, 20% far classes; one store."""
    root = tmp_path_factory.mktemp("soft")
    out = {}
    for name, extra in (("clean", []), ("near", ["--corrupt-partners", "near:0.1"]),
                        ("far", ["--corrupt-partners", "far:0.2"])):
        code, output = run(certify, [*SMALL, *extra, "--out", root / name, "--store", root / "store.sqlite"])
        assert code == 0, output
        out[name] = root / name
    out["store"] = root / "store.sqlite"
    return out


def wrong_places(directory):
    """(file, line, partner) of every partner marked wrong, read straight from the files."""
    found = []
    for path in sorted(directory.glob("*.jsonl")):
        for n, record in enumerate(lines(path), 1):
            found += [(path.name, n, p) for p, mate in enumerate(record["partners"]) if "wrong" in mate]
    return found


# ---- the sampling, without Lean ----

@given(st.sampled_from(KINDS), st.floats(0.01, 1.0), st.integers(0, 10_000))
def test_a_corruption_replaces_its_share_with_partners_of_other_trees_and_keeps_the_rest(kind, share, seed):
    space = StateSpace(DOMAIN)
    samples = sample_split(space, split_rng(seed, "train"), 12, 6, 2)
    corrupted = corrupt_split(space, samples, Corruption(kind, share), seed)
    assert len(corrupted.wrong) == round(share * 24) and corrupted.partners == 24
    for n, (before, after) in enumerate(zip(samples, corrupted.samples)):
        assert after.chain == before.chain
        for p, (old, new) in enumerate(zip(before.partners, after.partners)):
            if (n, p) not in corrupted.wrong:
                assert new == old
                continue
            assert new.end != before.chain.end and len(new.events) == len(old.events)
            if kind == "near":  # one rewrite from the true end
                assert new.end in space.moves(before.chain.end)[1]
    again = corrupt_split(space, samples, Corruption(kind, share), seed)
    assert again == corrupted


@given(st.sampled_from(KINDS), st.floats(0.001, 1.0))
def test_the_option_reads_back_what_it_writes(kind, share):
    corruption = Corruption(kind, share)
    assert Corruption.parse(f"{kind}:{share!r}") == corruption


@pytest.mark.parametrize("text", ["near", "near:", "far:x", "close:0.1", "far:0", "near:1.5", "far:-0.2"])
def test_a_bad_option_is_refused_in_one_line(text, tmp_path):
    code, output = run(certify, [*SMALL, "--corrupt-partners", text, "--out", tmp_path / "d"])
    assert code == 2 and "--corrupt-partners" in output and "Traceback" not in output
    assert not (tmp_path / "d").exists()
    with pytest.raises(ValueError):
        Corruption.parse(text)


def test_it_goes_with_no_hold_out_and_needs_partners(tmp_path):
    for extra in (["--hold-out", "states"], ["--partners", "0"]):
        code, output = run(certify, [*SMALL, "--corrupt-partners", "far:0.1", *extra, "--out", tmp_path / "d"])
        assert code == 2 and "--corrupt-partners" in output and "Traceback" not in output


# ---- certify and verify, with Lean ----

def test_the_option_is_recorded_and_the_wrong_partners_are_stored_as_what_they_are(made):
    clean = json.loads((made["clean"] / "manifest.json").read_text())
    assert "corrupt_partners" not in clean
    for name, kind, share in (("near", "near", 0.1), ("far", "far", 0.2)):
        manifest = json.loads((made[name] / "manifest.json").read_text())
        assert manifest_text(load_manifest(made[name])) == (made[name] / "manifest.json").read_text()
        field = manifest["corrupt_partners"]
        assert (field["kind"], field["share"], field["split"], field["partners"]) == (kind, share, "train", 120)
        places = wrong_places(made[name])
        assert field["replaced"] == len(places) == round(share * 120)
        assert {place[0] for place in places} == {"train.jsonl"}  # test splits are never corrupted
        assert manifest["equivalences"] == clean["equivalences"] - len(places)
        for _, record in read_split(made[name] / "train.jsonl", DOMAIN):
            for mate in record.partners:
                if not mate.wrong:
                    assert mate.end == record.end and len(mate.equivalence) == 16
                    continue
                assert mate.wrong == kind and mate.equivalence == "" and mate.end != record.end
                if kind == "near":
                    assert mate.end in {t for _, t in successors(record.end, DOMAIN.rules)}


def test_only_the_replaced_partners_differ_from_the_clean_dataset(made):
    for name in ("near", "far"):
        for split in ("test-8.jsonl", "test-32.jsonl"):
            assert (made[name] / split).read_bytes() == (made["clean"] / split).read_bytes()
        wrong = {(n, p) for _, n, p in wrong_places(made[name])}
        for n, (clean, soft) in enumerate(zip(lines(made["clean"] / "train.jsonl"),
                                              lines(made[name] / "train.jsonl")), 1):
            assert {k: v for k, v in clean.items() if k != "partners"} == \
                {k: v for k, v in soft.items() if k != "partners"}
            for p, (a, b) in enumerate(zip(clean["partners"], soft["partners"])):
                assert (a != b) == ((n, p) in wrong)


def test_the_same_seed_gives_the_same_bytes(made, tmp_path):
    code, output = run(certify, [*SMALL, "--corrupt-partners", "near:0.1", "--out", tmp_path / "again",
                                 "--store", made["store"]])
    assert code == 0, output
    for path in sorted(made["near"].glob("*.jsonl")):
        assert (tmp_path / "again" / path.name).read_bytes() == path.read_bytes()
    other = json.loads((made["far"] / "manifest.json").read_text())["files"]["train.jsonl"]["sha256"]
    assert json.loads((tmp_path / "again" / "manifest.json").read_text())["files"]["train.jsonl"]["sha256"] != other


def test_verify_names_exactly_the_replaced_partners_and_passes_the_rest(made):
    for name in ("near", "far"):
        report = verify_dataset(made[name])
        expected = [f"{made[name] / file} line {n} (chain train-{n - 1:05d}) partner {p} ({name})"
                    for file, n, p in wrong_places(made[name])]
        assert report["not_certified"] == expected
        code, output = run(certify, ["--verify", made[name]])
        assert code == 0, output
        assert f"{len(expected)} partners not certified" in output and f"first: {expected[0]}" in output
    assert "not_certified" not in verify_dataset(made["clean"])


def edited(src, tmp_path, edit):
    """A copy of dataset ``src`` whose train.jsonl had ``edit(records)`` applied."""
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)
    records = lines(copy / "train.jsonl")
    edit(records)
    (copy / "train.jsonl").write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return copy


def test_a_wrong_partner_dressed_as_certified_or_an_honest_one_marked_wrong_fails_verify(made, tmp_path):
    (_, n, p), = wrong_places(made["near"])[:1]
    honest = next((m, q) for m, record in enumerate(lines(made["near"] / "train.jsonl"), 1)
                  for q, mate in enumerate(record["partners"]) if "wrong" not in mate)

    def dress(records):
        mate = records[n - 1]["partners"][p]
        del mate["wrong"]
        mate["equivalence"] = records[n - 1]["partners"][1 - p].get("equivalence", "0" * 16)

    def mark(records):
        mate = records[honest[0] - 1]["partners"][honest[1]]
        del mate["equivalence"]
        mate["wrong"] = "near"

    with pytest.raises(DatasetError, match=f"line {n} .*partner {p}: does not end at its chain's tree"):
        verify_dataset(edited(made["near"], tmp_path / "dressed", dress))
    with pytest.raises(DatasetError, match=f"line {honest[0]} .*partner {honest[1]}: marked a wrong partner, yet"):
        verify_dataset(edited(made["near"], tmp_path / "marked", mark))


# ---- the trainers ----

def test_the_tracker_refuses_by_default_and_trains_when_told(made, tmp_path, one_thread):
    args = ["--data", made["far"], "--steps", "2", "--batch-chains", "4", "--width", "16", "--quiet",
            "--threads", "1", "--eval-chains", "4"]
    code, output = run(train_tracker, [*args, "--out", tmp_path / "refused"])
    assert code != 0 and "--corrupted-checker" in output and "Traceback" not in output
    assert len(output.strip().splitlines()) == 1 and not (tmp_path / "refused" / "report.json").exists()
    with pytest.raises(DatasetError, match="wrong on purpose"):
        load_dataset(made["far"], use_cache=False)
    code, output = run(train_tracker, [*args, "--corrupted-checker", "--out", tmp_path / "told"])
    assert code == 0, output
    report = json.loads((tmp_path / "told" / "report.json").read_text())
    manifest = json.loads((made["far"] / "manifest.json").read_text())
    assert report["dataset"]["corrupt_partners"] == manifest["corrupt_partners"]
    clean = load_dataset(made["clean"], use_cache=False)
    assert "corrupt_partners" not in clean.identity["dataset"]
    # every wrong partner is read as a partner, ending at its own (wrong) tree
    soft = load_dataset(made["far"], use_cache=False, corrupted_checker=True)
    ends = soft.train["partner_trees"].gather(2, (soft.train["partner_items"] != 0).sum(2, keepdim=True).long() - 1)
    differ = int((ends[..., 0] != soft.train["chain_trees"][:, -1:]).sum())
    assert differ == manifest["corrupt_partners"]["replaced"]


def test_the_oracle_refuses_by_default_and_trains_when_told(tmp_path, one_thread):
    data = tmp_path / "probes"
    code, output = run(certify, ["--chains", "20", "--test-chains", "8", "--test-lengths", "8,16", "--probes",
                                 "--corrupt-partners", "near:0.2", "--out", data, "--store", tmp_path / "s.sqlite"])
    assert code == 0, output
    args = ["--data", data, "--steps", "2", "--batch-chains", "4", "--width", "32", "--quiet", "--threads", "1"]
    code, output = run(train_oracle, [*args, "--out", tmp_path / "refused"])
    assert code != 0 and "--corrupted-checker" in output and "Traceback" not in output
    with pytest.raises(DatasetError, match="wrong on purpose"):
        load_probe_dataset(data, use_cache=False)
    code, output = run(train_oracle, [*args, "--corrupted-checker", "--out", tmp_path / "told"])
    assert code == 0, output
    report = json.loads((tmp_path / "told" / "report.json").read_text())
    assert report["dataset"]["corrupt_partners"]["kind"] == "near"
    assert report["dataset"]["corrupt_partners"]["replaced"] == round(0.2 * 40)


def test_the_draws_are_the_seeds(made):
    """The corruption's generator is its own: another seed's stream does not give these picks."""
    space = StateSpace(DOMAIN)
    samples = sample_split(space, split_rng(0, "train"), 60, 8, 2)
    ours = corrupt_split(space, samples, Corruption("far", 0.2), 0).wrong
    assert ours == {(n - 1, p) for _, n, p in wrong_places(made["far"])}
    assert corrupt_split(space, samples, Corruption("far", 0.2), 1).wrong != ours
