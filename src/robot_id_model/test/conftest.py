"""Synthetic serial arms written as URDF text, so the model tests need no robot description package."""

from __future__ import annotations

import numpy as np
import pytest


def _inertial(rng: np.random.Generator) -> str:
    """A random physically consistent inertial: principal moments obeying the triangle inequality, rotated."""
    mass = rng.uniform(0.5, 5.0)
    com = rng.uniform(-0.1, 0.1, 3)
    a, b = rng.uniform(0.005, 0.05, 2)
    c = rng.uniform(abs(a - b) + 1e-3, a + b - 1e-3)
    rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    i = rot @ np.diag([a, b, c]) @ rot.T
    return (
        f'<inertial><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="0 0 0"/><mass value="{mass}"/>'
        f'<inertia ixx="{i[0, 0]}" ixy="{i[0, 1]}" ixz="{i[0, 2]}" iyy="{i[1, 1]}" iyz="{i[1, 2]}" '
        f'izz="{i[2, 2]}"/></inertial>'
    )


def random_arm_urdf(
    n: int = 6, seed: int = 0, prismatic: int | None = None, continuous: int | None = None, gripper: bool = False
) -> str:
    """A serial arm with random joint origins and axes; optional prismatic/continuous joint and a gripper.

    Joints are j1..jn, links link0..linkn; a fixed tool link with mass hangs on linkn. With `gripper`, two
    prismatic fingers (finger_left, finger_right joints) hang on the tool.
    """
    rng = np.random.default_rng(seed)
    parts = [f'<robot name="arm{seed}"><link name="link0">{_inertial(rng)}</link>']
    axes = ["1 0 0", "0 1 0", "0 0 1", "0 -1 0", "0 0 -1"]
    for j in range(1, n + 1):
        kind = "prismatic" if j == prismatic else "continuous" if j == continuous else "revolute"
        xyz = rng.uniform(-0.3, 0.3, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3)
        limit = '<limit lower="-2.5" upper="2.5" effort="100" velocity="2"/>' if kind != "continuous" else ""
        if kind == "prismatic":
            limit = '<limit lower="-0.2" upper="0.2" effort="100" velocity="0.5"/>'
        parts.append(
            f'<joint name="j{j}" type="{kind}"><parent link="link{j - 1}"/><child link="link{j}"/>'
            f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
            f'<axis xyz="{axes[rng.integers(len(axes))]}"/>{limit}'
            f'<dynamics damping="{rng.uniform(0.1, 1.0)}" friction="{rng.uniform(0.1, 1.0)}"/></joint>'
            f'<link name="link{j}">{_inertial(rng)}</link>'
        )
    parts.append(
        f'<joint name="tool_joint" type="fixed"><parent link="link{n}"/><child link="tool"/>'
        f'<origin xyz="0 0 0.1" rpy="0 0 0.3"/></joint><link name="tool">{_inertial(rng)}</link>'
    )
    if gripper:
        for side, sign in (("left", 1), ("right", -1)):
            parts.append(
                f'<joint name="finger_{side}" type="prismatic"><parent link="tool"/>'
                f'<child link="finger_{side}_link"/><origin xyz="0 {sign * 0.02} 0.05"/><axis xyz="0 {sign} 0"/>'
                '<limit lower="0" upper="0.04" effort="20" velocity="0.2"/></joint>'
                f'<link name="finger_{side}_link">{_inertial(rng)}</link>'
            )
    parts.append("</robot>")
    return "".join(parts)


@pytest.fixture
def arm_urdf() -> str:
    return random_arm_urdf(6, seed=3)
