from glob import glob

from setuptools import setup

PACKAGE = 'robot_id_description'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=[],
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        (f'share/{PACKAGE}/urdf', glob('urdf/*.urdf')),
        (f'share/{PACKAGE}/config', glob('config/*.yaml')),
        (f'share/{PACKAGE}/collision', glob('collision/*.yaml')),
        (f'share/{PACKAGE}/meshes', glob('meshes/*.md')),
        (f'share/{PACKAGE}/meshes/franka_description', glob('meshes/franka_description/LICENSE')),
        (f'share/{PACKAGE}/meshes/franka_description/fer', glob('meshes/franka_description/fer/*.stl')),
        (f'share/{PACKAGE}/meshes/lbr_description', glob('meshes/lbr_description/LICENSE')),
        (f'share/{PACKAGE}/meshes/lbr_description/iiwa7', glob('meshes/lbr_description/iiwa7/*.stl')),
        (f'share/{PACKAGE}/meshes/lbr_description/iiwa14', glob('meshes/lbr_description/iiwa14/*.stl')),
    ],
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='robot_id developers',
    maintainer_email='robot_id@example.com',
    description='Robot descriptions (URDF) and robot configs of the robot_id suite.',
    license='Apache-2.0',
)
