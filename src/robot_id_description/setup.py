import os

from setuptools import setup

PACKAGE = 'robot_id_description'


def tree(folder: str) -> list[tuple[str, list[str]]]:
    """Every file under `folder`, installed at the same relative path in the share directory."""
    return [(f'share/{PACKAGE}/{root}', [os.path.join(root, name) for name in names])
            for root, _, names in sorted(os.walk(folder)) if names]


setup(
    name=PACKAGE,
    version='0.1.0',
    packages=[],
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        *tree('robots'),  # one folder per robot: robot.yaml, URDF, collision.yaml, trajectories/
        *tree('meshes'),  # the vendors' collision meshes, shared by the robots
    ],
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='robot_id developers',
    maintainer_email='robot_id@example.com',
    description='The robots of the robot_id suite, one folder each: config, URDF, collision geometry, trajectories.',
    license='Apache-2.0',
)
