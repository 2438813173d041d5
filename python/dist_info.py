"""Write stowage-<version>.dist-info into the build tree's python/ directory,
so that importlib.metadata finds the package's entry points (xarray's
engine="stowage") from `meson devenv` as after `pip install`. The name,
summary and entry points come from pyproject.toml, which meson-python
writes into a wheel's dist-info: one source for both.

    python3 dist_info.py pyproject.toml 0.2.0 build/python/stowage-0.2.0.dist-info
"""

import pathlib
import shutil
import sys
import tomllib


def main(pyproject, version, out):
    with open(pyproject, "rb") as f:
        project = tomllib.load(f)["project"]
    out = pathlib.Path(out)
    shutil.rmtree(out, ignore_errors=True)  # a new directory: ninja sees it renewed
    out.mkdir(parents=True)
    (out / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {version}\nSummary: {project['description']}\n",
        encoding="utf-8")
    lines = []
    for group, points in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in points.items()]
        lines.append("")
    (out / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
