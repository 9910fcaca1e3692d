"""The identified model for MuJoCo users: identified.urdf compiled by MuJoCo's own URDF importer as it is (no
inertia balancing, so the identified inertials are what MuJoCo simulates; fixed links kept as bodies; visual-only
geometry dropped) and saved as MJCF (identified.xml)."""

from __future__ import annotations

import pathlib
import tempfile
import xml.etree.ElementTree as ET

import mujoco

from robot_id_estimator.output_files import write_text

MJCF_NAME = "identified.xml"


class MujocoExportError(ValueError):
    """MuJoCo refused the identified model, with its reason."""


def mujoco_model(urdf_text: str, directory: str | pathlib.Path) -> mujoco.MjModel:
    """The MjModel of a URDF (files it names are looked up in `directory`), compiled without balanceinertia."""
    root = ET.fromstring(urdf_text)
    for old in root.findall("mujoco"):
        root.remove(old)
    compiler = ET.SubElement(ET.SubElement(root, "mujoco"), "compiler")
    compiler.set("discardvisual", "true")
    compiler.set("fusestatic", "false")
    if root.find(".//mesh") is not None:  # only then: the MJCF would otherwise carry a path of this machine
        compiler.set("meshdir", str(directory))
    try:
        return mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    except ValueError as err:
        raise MujocoExportError(f"MuJoCo does not load the identified model: {err}") from None


def write_mjcf(urdf_path: str | pathlib.Path, out_path: str | pathlib.Path) -> pathlib.Path:
    """MJCF of the URDF at `urdf_path`, written to `out_path`."""
    urdf_path = pathlib.Path(urdf_path)
    model = mujoco_model(urdf_path.read_text(), urdf_path.parent)
    with tempfile.TemporaryDirectory() as tmp:
        saved = pathlib.Path(tmp) / MJCF_NAME
        mujoco.mj_saveLastXML(str(saved), model)
        text = saved.read_text()
    return write_text(out_path, text)
