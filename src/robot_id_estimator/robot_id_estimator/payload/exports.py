"""An identified load in the formats robots take it. In: the load's inertial in its frame (the flange).
Out: KUKA load data, Franka's setLoad values and franka_ros2's set_load service call, a URDF fragment and the arm's
URDF with the load attached.

- KUKA (Sunrise and KRC load data): mass M [kg]; the CoM X, Y, Z [mm] in the flange frame; A, B, C [deg], the
  orientation of the principal inertia axes relative to the flange, rotations about Z, then the new Y, then the new
  X (R = Rz(A)·Ry(B)·Rx(C)); JX, JY, JZ [kg m²], the moments about those axes through the CoM.
- Franka (libfranka Robot::setLoad, franka_ros2 franka_msgs/srv/SetLoad): load_mass [kg]; F_x_Cload [m], the CoM in
  the flange frame F; load_inertia [kg m²], the inertia about the CoM in F's axes, 9 values column-major.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_estimator.output.urdf_export import inertial_xml
from robot_id_model.physical import LinkInertial


@dataclass(frozen=True)
class KukaLoadData:
    mass_kg: float
    com_mm: tuple[float, float, float]
    abc_deg: tuple[float, float, float]
    """A, B, C: the principal axes' orientation, R = Rz(A)·Ry(B)·Rx(C)."""
    principal_moments_kg_m2: tuple[float, float, float]
    """JX, JY, JZ about the rotated axes through the CoM."""


def kuka_load_data(load: LinkInertial) -> KukaLoadData:
    """The load as KUKA's load data take it (module docstring)."""
    moments, axes = principal_frame(load.inertia_com_kg_m2)
    return KukaLoadData(float(load.mass_kg), tuple(float(x) for x in 1000.0 * np.asarray(load.com_m)),
                        tuple(float(x) for x in abc_deg(axes)), tuple(float(x) for x in moments))


def principal_frame(inertia_kg_m2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The principal moments, ascending, and their axes as the columns of a rotation (KUKA's X Y Z: the third axis
    turned where the eigenvectors are left-handed)."""
    moments, axes = np.linalg.eigh(inertia_kg_m2)
    if np.linalg.det(axes) < 0.0:
        axes[:, 2] = -axes[:, 2]
    return moments, axes


def abc_deg(rotation: np.ndarray) -> np.ndarray:
    """KUKA's A, B, C of `rotation` = Rz(A)·Ry(B)·Rx(C); (..., 3, 3) gives (..., 3)."""
    r = np.asarray(rotation)
    a = np.arctan2(r[..., 1, 0], r[..., 0, 0])
    b = np.arctan2(-r[..., 2, 0], np.hypot(r[..., 0, 0], r[..., 1, 0]))
    c = np.arctan2(r[..., 2, 1], r[..., 2, 2])
    return np.rad2deg(np.stack([a, b, c], axis=-1))


def franka_set_load(load: LinkInertial) -> dict:
    """Robot::setLoad's arguments: load_mass, F_x_Cload, load_inertia (column-major)."""
    return {"load_mass": float(load.mass_kg), "F_x_Cload": [float(x) for x in load.com_m],
            "load_inertia": [float(x) for x in np.asarray(load.inertia_com_kg_m2).ravel(order="F")]}


def franka_service_call(load: LinkInertial) -> str:
    """The franka_ros2 command that sets the load on a running robot (franka_msgs/srv/SetLoad)."""
    values = franka_set_load(load)
    return ("ros2 service call /service_server/set_load franka_msgs/srv/SetLoad "
            f"\"{{mass: {values['load_mass']!r}, center_of_mass: {values['F_x_Cload']!r}, "
            f"load_inertia: {values['load_inertia']!r}}}\"")


def urdf_fragment(load: LinkInertial, frame: str, name: str = "payload") -> str:
    """A fixed link holding the load, on `frame`."""
    inertial = "\n  ".join(inertial_xml(load).splitlines())
    return (f'<joint name="{name}_joint" type="fixed">\n  <parent link="{frame}"/>\n  <child link="{name}"/>\n'
            f'  <origin xyz="0 0 0" rpy="0 0 0"/>\n</joint>\n<link name="{name}">\n  {inertial}\n</link>\n')


def load_alone(load: LinkInertial, frame: str) -> str:
    """payload.urdf: the load as a fixed link on an empty root link named `frame`, so that it loads alone."""
    return (f'<?xml version="1.0"?>\n<robot name="payload">\n<link name="{frame}"/>\n'
            f'{urdf_fragment(load, frame)}</robot>\n')


def with_load(urdf_text: str, load: LinkInertial, frame: str, name: str = "payload") -> str:
    """The arm's URDF with the load attached to `frame` (ValueError when the URDF has no such link or already a
    link of that name)."""
    if f'<link name="{frame}"' not in urdf_text:
        raise ValueError(f"the URDF has no link '{frame}' to attach the load to")
    if f'<link name="{name}"' in urdf_text:
        raise ValueError(f"the URDF already has a link '{name}'")
    end = urdf_text.rindex("</robot>")
    return urdf_text[:end] + urdf_fragment(load, frame, name) + urdf_text[end:]
