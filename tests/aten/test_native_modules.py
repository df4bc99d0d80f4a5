"""ember.aten.native lists exactly the modules it has (no name of a module that does not exist)."""

from pathlib import Path

import ember.aten.native as native


def test_module_list_matches_the_folder() -> None:
    folder = {p.stem for p in Path(native.__file__).parent.glob("*.py") if p.stem != "__init__"}
    assert sorted(native._MODULES) == sorted(folder)
    assert len(set(native._MODULES)) == len(native._MODULES)


def test_every_listed_module_contributes_kernels() -> None:
    kernels = native.kernels()
    owners = {fn.__module__.rsplit(".", 1)[1] for fn in kernels.values()}
    assert owners == set(native._MODULES)
