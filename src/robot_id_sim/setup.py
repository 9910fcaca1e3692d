
from setuptools import find_packages, setup

PACKAGE = 'robot_id_sim'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
    ],
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='robot_id developers',
    maintainer_email='robot_id@example.com',
    description='MuJoCo simulated arm speaking the lbr_fri_ros2_stack and franka_ros2 topics.',
    license='Apache-2.0',
    entry_points={'console_scripts': [
        'sim_node = robot_id_sim.node:main',
    ]},
)
