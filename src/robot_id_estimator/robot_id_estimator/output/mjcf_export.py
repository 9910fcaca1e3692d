"""The identified model for MuJoCo users: identified.urdf compiled by MuJoCo's own URDF importer as it is (no
inertia balancing, so the identified inertials are what MuJoCo simulates; fixed links kept as bodies; visual
geometry dropped) and saved as MJCF (identified.xml). Collision meshes are found where ROS finds them (mesh_files);
a mesh found nowhere leaves its link without that geometry, with a note: inertials and joints are what matter."""

from __future__ import annotations

import pathlib
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence

import mujoco

from robot_id_estimator.results.files import write_text
from robot_id_model.mesh_files import SEARCHED, mesh_file

MJCF_NAME = "identified.xml"
MUJOCO_MESH_FORMATS = frozenset({".stl", ".obj", ".msh"})
"""The mesh formats MuJoCo's compiler reads without a plugin (not Collada .dae)."""


class MujocoExportError(ValueError):
    """MuJoCo refused a model, with its reason."""


def mujoco_ready(urdf_text: str, urdf_dir: str | pathlib.Path) -> tuple[str, tuple[str, ...]]:
    """The URDF as MuJoCo's importer takes it: without <visual>, every collision mesh at its absolute path on this
    machine, and collisions whose mesh is not found or is in a format MuJoCo does not read removed; with the notes
    that say what was removed."""
    root = ET.fromstring(urdf_text)
    for old in root.findall("mujoco"):
        root.remove(old)
    missing: dict[str, list[str]] = {}
    for link in root.findall("link"):
        for visual in link.findall("visual"):
            link.remove(visual)
        for collision in link.findall("collision"):
            mesh = collision.find("geometry/mesh")
            if mesh is None:
                continue
            path = mesh_file(mesh.get("filename", ""), urdf_dir)
            if path is None or path.suffix.lower() not in MUJOCO_MESH_FORMATS:
                missing.setdefault(mesh.get("filename", ""), []).append(link.get("name", ""))
                link.remove(collision)
            else:
                mesh.set("filename", str(path))
    compiler = ET.SubElement(ET.SubElement(root, "mujoco"), "compiler")
    compiler.set("discardvisual", "true")
    compiler.set("fusestatic", "false")
    notes = ()
    if missing:
        first = next(iter(missing))
        links = sorted({name for names in missing.values() for name in names})
        notes = (f"{MJCF_NAME} has no collision mesh on {', '.join(links)}: {len(missing)} mesh file(s) not found or "
                 f"not in a format MuJoCo reads ({', '.join(sorted(MUJOCO_MESH_FORMATS))}), e.g. {first} (package:// "
                 f"paths are looked up in {SEARCHED}); its inertials and joints are complete",)
    return ET.tostring(root, encoding="unicode"), notes


def _compiled(ready_text: str) -> mujoco.MjModel:
    """MuJoCo's model of a URDF made ready by mujoco_ready; MujocoExportError with MuJoCo's reason."""
    try:
        return mujoco.MjModel.from_xml_string(ready_text)
    except ValueError as err:
        raise MujocoExportError(f"MuJoCo does not load this model: {'; '.join(str(err).splitlines())}") from None


def write_mjcf(urdf_text: str, urdf_dir: str | pathlib.Path, out_path: str | pathlib.Path,
               gravity_m_s2: Sequence[float]) -> tuple[pathlib.Path, tuple[str, ...]]:
    """MJCF of a URDF whose relative mesh paths start at `urdf_dir`, written to `out_path` with the robot's gravity
    (a URDF holds none); with the notes of mujoco_ready."""
    ready_text, notes = mujoco_ready(urdf_text, urdf_dir)
    model = _compiled(ready_text)
    model.opt.gravity[:] = gravity_m_s2
    with tempfile.TemporaryDirectory() as tmp:
        saved = pathlib.Path(tmp) / MJCF_NAME
        mujoco.mj_saveLastXML(str(saved), model)
        text = saved.read_text()
    return write_text(out_path, text), notes
