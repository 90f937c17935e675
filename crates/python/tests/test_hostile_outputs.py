"""Outputs against hostile inputs (HOSTILE.md class 9): an output never lies inside an input
folder, where it would become one more of its profiles."""

import pytest

import profcodec


def test_merge_refuses_an_output_inside_a_folder_of_inputs(testdata, tmp_path):
    hello = testdata / "nytprof" / "hello.nytprof.out"
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ["nytprof.out.1", "nytprof.out.2"]:
        (runs / name).write_bytes(hello.read_bytes())
    inside = runs / "merged.out"
    for overwrite in [False, True]:
        with pytest.raises(profcodec.FileError, match="lies inside the input"):
            profcodec.merge([runs], inside, overwrite=overwrite)
        assert sorted(p.name for p in runs.iterdir()) == ["nytprof.out.1", "nytprof.out.2"]
    # One left there by an earlier run is not taken for a profile and replaced.
    inside.write_bytes(hello.read_bytes())
    with pytest.raises(profcodec.FileError, match="lies inside the input"):
        profcodec.merge([runs], inside, overwrite=True)
    assert inside.read_bytes() == hello.read_bytes()
    # Beside the folder, the merge goes ahead: the one left there is a profile of the folder now.
    assert profcodec.merge([runs], tmp_path / "merged.out")["inputs"] == 3
    inside.unlink()
    # Beside the folder, the merge goes ahead.
    assert profcodec.merge([runs], tmp_path / "merged.out", overwrite=True)["inputs"] == 2


def test_conversions_of_a_merged_profile_refuse_an_output_inside_a_folder_of_inputs(
    testdata, tmp_path
):
    hello = testdata / "nytprof" / "hello.nytprof.out"
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ["nytprof.out.1", "nytprof.out.2"]:
        (runs / name).write_bytes(hello.read_bytes())
    profile = profcodec.merged_profile([runs])
    with pytest.raises(profcodec.FileError, match="lies inside the input"):
        profile.to_folded(runs / "merged.folded")
    with pytest.raises(profcodec.FileError, match="lies inside the input"):
        profile.convert("pprof", runs / "merged.pb.gz", overwrite=True)
    assert sorted(p.name for p in runs.iterdir()) == ["nytprof.out.1", "nytprof.out.2"]
    # Beside the folder, both go ahead.
    profile.to_folded(tmp_path / "merged.folded")
    profile.convert("pprof", tmp_path / "merged.pb.gz")
